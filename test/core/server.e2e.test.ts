import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { operatorHeaders, startServer } from '../support/server-process';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-e2e-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('the real server process', () => {
  it('starts with no configuration but a data directory, serves /health and keeps its data across a restart', async () => {
    // No DATABASE_URL: the embedded PGlite in DATA_DIR.
    const first = await startServer({ DATA_DIR: dataDir, DATABASE_URL: '', MARKET_DATA_DIR: '' });
    let credentials: { api_key: string; api_secret: string };
    try {
      const health = await (await fetch(`${first.url}/health`, { headers: operatorHeaders })).json();
      expect(health).toMatchObject({ status: expect.any(String), database: { kind: 'pglite' } });
      const reg = await fetch(`${first.url}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ display_name: 'Restart Probe' }),
      });
      expect(reg.status).toBe(201);
      credentials = (await reg.json()) as typeof credentials;
      expect(await first.stop()).toBe(0);
    } catch (error) {
      await first.kill();
      throw error;
    }
    expect(fs.existsSync(path.join(dataDir, 'pglite'))).toBe(true);
    const second = await startServer({ DATA_DIR: dataDir, DATABASE_URL: '', MARKET_DATA_DIR: '' });
    try {
      const login = await fetch(`${second.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(credentials),
      });
      expect(login.status).toBe(200);
      const health = (await (await fetch(`${second.url}/health`, { headers: operatorHeaders })).json()) as {
        event_store: { head: string };
      };
      expect(health.event_store.head).not.toBe('0/0');
    } finally {
      await second.stop();
    }
  }, 360_000);

  it('refuses a bad configuration value with a one-line message and exit code 2', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      env: { ...process.env, PORT: 'eighty' },
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toMatch(/^invalid configuration: PORT \(got "eighty"\): .+$/);
  });
});
