import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_MODELS } from '../../projections/registry';
import { LOCK_FILE } from '../../src/cli/data-dir';
import { openDatabase } from '../../src/db/database';
import { runCli as runCliProcess } from '../support/cli-process';
import { type ServerProcess, startServer } from '../support/server-process';

/**
 * The auditors' and analysts' command line on the embedded PGlite, as a user meets it: the real server process
 * (`src/main.ts serve`, PGlite in a data directory) with an account and an agent that traded over HTTP, then the
 * real CLI process. PGlite serves one process at a time and has no lock of its own: a CLI command opened the
 * server's live database beside it (risking corruption) and a typo in DATA_DIR "verified" a new empty database.
 * Now the data directory is locked (refusal in one line, exit code 1), a stale lock is taken over, and the
 * reading commands refuse a directory without a database. Regressions of the CLI audit.
 */
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-cli-audit-'));
const lockFile = path.join(dataDir, LOCK_FILE);

/** The CLI on the test's data directory (PGlite, no DATABASE_URL). */
const runCli = (args: string[], env: Record<string, string> = {}) =>
  runCliProcess(args, { DATABASE_URL: '', DATA_DIR: dataDir, ...env });

let server: ServerProcess | undefined;
let agentId: string;
let events: { revision: number; type: string; occurred_at: string; hash: string }[];

const call = async (method: string, url: string, headers: Record<string, string>, body?: unknown) => {
  const res = await fetch(`${server!.url}/api/v1${url}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as Record<string, any>;
  expect(res.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
};

beforeAll(async () => {
  server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: '', MARKET_DATA_DIR: '' });
  const reg = await call('POST', '/auth/register', {}, { display_name: 'CLI audit' });
  const login = await call('POST', '/auth/login', {}, { api_key: reg.api_key, api_secret: reg.api_secret });
  const agent = await call(
    'POST',
    '/agents',
    { authorization: `Bearer ${login.token}` },
    { display_name: 'Bot' },
  );
  agentId = agent.agent_id;
  const key = { 'x-api-key': agent.api_key as string };
  const price = Number((await call('GET', '/market/price/BTCUSDT', key)).price);
  await call('POST', '/trade/order', key, {
    symbol: 'BTCUSDT',
    side: 'buy',
    type: 'market',
    quantity: '0.01',
  });
  const far = await call('POST', '/trade/order', key, {
    symbol: 'BTCUSDT',
    side: 'buy',
    type: 'limit',
    quantity: '0.01',
    price: (price / 2).toFixed(2),
  });
  await call('DELETE', `/trade/order/${far.order_id}`, key);
  await call('POST', '/trade/order', key, {
    symbol: 'BTCUSDT',
    side: 'sell',
    type: 'market',
    quantity: '0.004',
  });
  events = (await call('GET', '/account/events?limit=1000', key)).events;
}, 180_000);

afterAll(async () => {
  await server?.kill();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('the CLI beside a server holding the embedded database', () => {
  it('refuses, in one line with exit code 1, to open the data directory the server holds', async () => {
    expect(JSON.parse(fs.readFileSync(lockFile, 'utf8'))).toMatchObject({
      pid: server!.process.pid,
      command: 'serve',
    });
    const runs = await Promise.all([
      runCli(['audit', 'replay', '--agent', agentId]),
      runCli(['audit', 'verify']),
      runCli(['projections', 'rebuild', '--verify']),
      runCli(['events', 'tail']),
    ]);
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toBe('');
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^DATA_DIR ${dataDir} is in use by another process \\(pid ${server!.process.pid}: serve, since `,
        ),
      );
    }
    // Bad arguments are told first, before the database is looked at.
    const bad = await runCli(['audit', 'replay', '--agent', agentId, '--as-of', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toMatch(/^--as-of must be an ISO 8601 date-time/);
    // The server is unharmed and still holds the lock.
    expect((await fetch(`${server!.url}/health`)).status).toBe(200);
    expect(fs.existsSync(lockFile)).toBe(true);
  });
});

describe('the CLI on the stopped server data directory', () => {
  beforeAll(async () => {
    expect(await server!.stop()).toBe(0);
    server = undefined;
  }, 60_000);

  it('the stopped server gave the lock back', () => {
    expect(fs.existsSync(lockFile)).toBe(false);
  });

  it('replays the agent wallet exactly as GET /account/events lists it, matching the read models', async () => {
    const run = await runCli(['audit', 'replay', '--agent', agentId]);
    expect(run.stderr).toBe('');
    expect(run.code, run.stdout).toBe(0);
    const timeline = run.stdout.split('\n').filter((l) => l.startsWith('#'));
    expect(timeline.map((l) => l.split(/\s+/).slice(1, 4))).toEqual(
      events.map((e) => [String(e.revision), e.occurred_at, e.type]),
    );
    expect(run.stdout).toContain(`hash chain: intact (${events.length} events, head ${events.at(-1)!.hash})`);
    expect(run.stdout).toContain('read models: match the folded state');
    expect(fs.existsSync(lockFile)).toBe(false);
  });

  it('verifies every chain and rebuilds every projection identically', async () => {
    const verify = await runCli(['audit', 'verify']);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(verify.stdout.trim()).toMatch(/^\d+ streams, \d+ events: every hash chain intact$/);
    const rebuild = await runCli(['projections', 'rebuild', '--verify']);
    expect(rebuild.code, rebuild.stdout + rebuild.stderr).toBe(0);
    expect(rebuild.stdout.match(/verify: \d+ table\(s\) identical row by row/g)).toHaveLength(
      READ_MODELS.length,
    );
  });

  it('refuses a DATA_DIR without a database instead of creating an empty one', async () => {
    const missing = path.join(dataDir, 'typo');
    const run = await runCli(['audit', 'verify'], { DATA_DIR: missing });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      `no venue database in DATA_DIR ${missing} (${missing}/pglite does not exist): set DATA_DIR (or --data-dir) to the server's data directory, or DATABASE_URL to its PostgreSQL database`,
    );
    expect(fs.existsSync(missing)).toBe(false);
  });

  it('takes over the lock of a process that is gone, and refuses one whose process runs', async () => {
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.once('exit', resolve));
    const lock = (pid: number) =>
      fs.writeFileSync(
        lockFile,
        JSON.stringify({
          pid,
          command: 'serve',
          started_at: '2026-01-01T00:00:00.000Z',
          hostname: os.hostname(),
        }),
      );
    lock(dead.pid!);
    const stale = await runCli(['projections', 'status']);
    expect(stale.code, stale.stderr).toBe(0);
    expect(fs.existsSync(lockFile)).toBe(false);
    // This test process is alive: its lock holds.
    lock(process.pid);
    try {
      const held = await runCli(['events', 'tail', '-n', '1']);
      expect(held.code).toBe(1);
      expect(held.stderr).toContain(
        `is in use by another process (pid ${process.pid}: serve, since 2026-01-01`,
      );
      expect(JSON.parse(fs.readFileSync(lockFile, 'utf8')).pid).toBe(process.pid);
    } finally {
      fs.rmSync(lockFile, { force: true });
    }
  });

  it('detects an event row edited in the embedded database', async () => {
    const db = await openDatabase({ DATA_DIR: dataDir });
    try {
      await sql`update events set data = jsonb_set(data, '{quantity}', '"1.00000000"')
        where stream_id = ${`wallet-${agentId}`} and type = 'OrderPlaced'`.execute(db.db);
    } finally {
      await db.close();
    }
    const verify = await runCli(['audit', 'verify']);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(
      new RegExp(`^BROKEN wallet-${agentId} at revision \\d+: hash_mismatch`, 'm'),
    );
    const replay = await runCli(['audit', 'replay', '--agent', agentId]);
    expect(replay.code).toBe(1);
    expect(replay.stdout).toMatch(/^hash chain: BROKEN at revision \d+: hash_mismatch/m);
  });
});
