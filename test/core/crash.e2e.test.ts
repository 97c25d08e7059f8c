import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database';
import { postgresTestDatabaseOrSkip } from '../support/databases';
import { startServer } from '../support/server-process';

/**
 * Durability (issue: foundation, done-when): a process appending with 8 writers is killed with SIGKILL;
 * every append it acknowledged must be in the log after a restart. Runs on embedded PGlite (DATA_DIR) and on
 * the PostgreSQL server.
 */
const crashRun = async (env: Record<string, string>, minAcks: number): Promise<Set<string>> => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/appender.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const acked = new Set<string>();
  let buffer = '';
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`appender too slow: ${acked.size} acks; ${stderr}`)),
      60_000,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('ack ')) acked.add(line.slice(4));
      if (acked.size >= minAcks) {
        clearTimeout(timer);
        child.kill('SIGKILL');
        resolve();
      }
    });
    child.on('exit', (code) => {
      if (acked.size < minAcks) reject(new Error(`appender exited early (${code}): ${stderr}`));
    });
  });
  await new Promise((resolve) =>
    child.exitCode !== null || child.signalCode ? resolve(null) : child.once('exit', resolve),
  );
  expect(child.signalCode).toBe('SIGKILL');
  return acked;
};

describe('crash safety', () => {
  it('keeps every acknowledged append of a SIGKILLed process (embedded PGlite)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-crash-'));
    try {
      const acked = await crashRun({ DATA_DIR: dataDir, DATABASE_URL: '' }, 300);
      const db = await openDatabase({ DATA_DIR: dataDir });
      try {
        const { rows } = await sql<{ id: string }>`select event_id::text as id from events`.execute(db.db);
        const stored = new Set(rows.map((r) => r.id));
        const lost = [...acked].filter((id) => !stored.has(id));
        expect(lost).toEqual([]);
        expect(stored.size).toBeGreaterThanOrEqual(acked.size);
      } finally {
        await db.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('keeps every acknowledged append of a SIGKILLed process (PostgreSQL server)', async (ctx) => {
    const target = await postgresTestDatabaseOrSkip(ctx, 'crash');
    if (!target) return;
    try {
      const acked = await crashRun({ DATABASE_URL: target.url!, DATA_DIR: os.tmpdir() }, 1000);
      const { rows } = await sql<{ id: string }>`select event_id::text as id from events`.execute(target.db);
      const stored = new Set(rows.map((r) => r.id));
      expect([...acked].filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      await target.close();
    }
  }, 120_000);

  it('keeps every registration the real server acknowledged before it was SIGKILLed', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-crash-http-'));
    try {
      const server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: '', MARKET_DATA_DIR: '' });
      const acked: string[] = [];
      let stop = false;
      const client = async (c: number) => {
        for (let i = 0; !stop; i++) {
          try {
            const res = await fetch(`${server.url}/api/v1/auth/register`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ display_name: `crash ${c}-${i}` }),
            });
            if (res.status === 201) acked.push(((await res.json()) as { account_id: string }).account_id);
            else if (res.status === 429) break; // the auth group allows 60 a minute per IP
          } catch {
            break; // the server is gone
          }
        }
      };
      const clients = Array.from({ length: 6 }, (_, c) => client(c));
      const deadline = Date.now() + 60_000;
      while (acked.length < 30 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await server.kill();
      stop = true;
      await Promise.all(clients);
      expect(acked.length).toBeGreaterThanOrEqual(30);
      const db = await openDatabase({ DATA_DIR: dataDir });
      try {
        const { rows } = await sql<{ stream_id: string }>`select stream_id from streams`.execute(db.db);
        const streams = new Set(rows.map((r) => r.stream_id));
        expect(acked.filter((id) => !streams.has(`account-${id}`))).toEqual([]);
      } finally {
        await db.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
