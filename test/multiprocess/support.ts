import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { postgresServerUrl, testDatabasePrefix } from '../support/databases';
import { freePort } from '../support/server-process';

/**
 * The multi-process harness (issue 16, "Done when"): real `serve` and `worker` processes of this checkout
 * (`node --import tsx src/main.ts …`) on free ports against one fresh PostgreSQL database, over real HTTP, and
 * torn down together. Every process of a cluster shares the server keys (`JWT_SECRET`, `ENCRYPTION_KEY`) and the
 * operator token, as a real deployment must; each has a `DATA_DIR` of its own. API processes run with
 * `PROJECTIONS=false` and workers fold the read models and run the matching engine, as docs/operations.md
 * recommends; a worker serves its operator endpoints on `OPS_PORT`.
 *
 * ```ts
 * const cluster = await startCluster({ api: 2, workers: 1 });
 * const [a, b] = cluster.api; await fetch(`${a.url}/api/v1/...`);
 * await cluster.close();
 * ```
 *
 * The tests using it need a PostgreSQL server: `postgresPassOnlyReason()` (test/support/databases.ts) says why they cannot run (no
 * `DATABASE_URL`: they run in the PostgreSQL pass of `.ci/run`; or the server is unreachable).
 */

/** The role a process was started with. */
export type Role = 'serve' | 'worker';

/** One started process. */
export interface VenueProcess {
  role: Role;
  /** `http://127.0.0.1:PORT`: the API (`serve`) or the operator endpoints (`worker`). */
  url: string;
  process: ChildProcess;
  /** Everything it printed (stdout and stderr). */
  output(): string;
  /** True until it exited. */
  alive(): boolean;
  /** Resolves to the exit code (or signal) once it exited. */
  exited: Promise<number | string | null>;
  /** Resolves once `/health` answers 200; rejects with its output when it exits first or after `timeoutMs`. */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves to the exit code. */
  stop(graceMs?: number): Promise<number | string | null>;
  kill(): Promise<void>;
}

/** A fresh database on the test server, dropped (with force) by `drop()`. */
export interface ClusterDatabase {
  name: string;
  url: string;
  /** Runs one statement on it (a short-lived admin connection). */
  query<R extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}

/** Creates an empty database (no migrations: the processes bring it up) on `serverUrl`'s server. */
export const createClusterDatabase = async (serverUrl = postgresServerUrl()): Promise<ClusterDatabase> => {
  const name = `${testDatabasePrefix()}mp_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = async <T>(fn: (c: pg.Client) => Promise<T>, url = serverUrl): Promise<T> => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end().catch(() => {});
    }
  };
  await admin((c) => c.query(`create database ${name}`));
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  return {
    name,
    url,
    query: (text, values) => admin(async (c) => (await c.query(text, values)).rows, url),
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => {}),
  };
};

/** Secrets every process of one cluster shares. */
export const clusterSecrets = () => ({
  JWT_SECRET: randomBytes(32).toString('hex'),
  ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  OPERATOR_TOKEN: randomBytes(24).toString('hex'),
});

/**
 * Spawns one process of this checkout (`serve` or `worker`) on a free port with `env` (over the harness's
 * defaults: synthetic market data, `LOG_LEVEL=warn`, a temporary `DATA_DIR`). Does not wait for it: see
 * {@link VenueProcess.ready}.
 */
export const spawnVenueProcess = async (role: Role, env: Record<string, string>): Promise<VenueProcess> => {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `ptv-mp-${role}-`));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', role], {
    // VENUE_CHECKOUT: another checkout's code under the same tests (a control run of an older commit).
    cwd: process.env.VENUE_CHECKOUT || path.resolve(import.meta.dirname, '../..'),
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      MARKET_DATA_DIR: '',
      MARKET_SOURCE: 'synthetic',
      DATABASE_POOL_MAX: '8',
      DATA_DIR: dataDir,
      ...(role === 'serve' ? { PROJECTIONS: 'false' } : {}),
      ...env,
      HOST: '127.0.0.1',
      ...(role === 'serve' ? { PORT: String(port) } : { OPS_PORT: String(port) }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const append = (d: Buffer) => {
    out += d;
    // Keep the tail only: a long run under load must not hold every log line.
    if (out.length > 2_000_000) out = out.slice(-1_000_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, signal) => {
      fs.rmSync(dataDir, { recursive: true, force: true });
      resolve(code ?? signal);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    role,
    url,
    process: child,
    output: () => out,
    alive,
    exited,
    async ready(timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (!alive()) throw new Error(`${role} exited with ${child.exitCode ?? child.signalCode}:\n${out}`);
        try {
          const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
          if (res.status === 200) return;
        } catch {
          // not listening yet
        }
        if (Date.now() > deadline) throw new Error(`${role} not healthy after ${timeoutMs} ms:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop(graceMs = 15_000) {
      if (!alive()) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
  };
};

/** A started cluster. */
export interface Cluster {
  database: ClusterDatabase;
  /** The environment every process got (secrets, `DATABASE_URL`, the caller's `env`). */
  env: Record<string, string>;
  api: VenueProcess[];
  workers: VenueProcess[];
  all: VenueProcess[];
  /** `Authorization` header of the operator views (`/health` details, `/metrics`). */
  operator: { authorization: string };
  /** Stops every process (SIGTERM, SIGKILL after a grace period) and drops the database (unless kept). */
  close(): Promise<void>;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** API processes (`serve`, `PROJECTIONS=false`); default 2. */
  api?: number;
  /** `worker` processes; default 1. */
  workers?: number;
  /** Environment of every process (over the harness's defaults). */
  env?: Record<string, string>;
  /** Per role, on top of `env`. */
  apiEnv?: Record<string, string>;
  workerEnv?: Record<string, string>;
  /** Use this database instead of a fresh one (it is not dropped on close). */
  database?: ClusterDatabase;
  /** Server to create the fresh database on (default: the test server, `postgresServerUrl()`). */
  serverUrl?: string;
  /** How long each process may take to become healthy (ms, default 120 s). */
  readyTimeoutMs?: number;
}

/**
 * Starts `api` API processes and `workers` workers at the same moment on one database (a fresh one unless
 * given) and resolves once every one answers `/health` 200. On failure everything started is torn down and the
 * error names the process and holds its output.
 */
export const startCluster = async (options: ClusterOptions = {}): Promise<Cluster> => {
  const database = options.database ?? (await createClusterDatabase(options.serverUrl));
  const secrets = clusterSecrets();
  const env = { ...secrets, DATABASE_URL: database.url, ...options.env };
  const all: VenueProcess[] = [];
  const close = async () => {
    await Promise.all(all.map((p) => p.stop()));
    if (!options.database) await database.drop();
  };
  try {
    const spawned = await Promise.all([
      ...Array.from({ length: options.api ?? 2 }, () =>
        spawnVenueProcess('serve', { ...env, ...options.apiEnv }),
      ),
      ...Array.from({ length: options.workers ?? 1 }, () =>
        spawnVenueProcess('worker', { ...env, ...options.workerEnv }),
      ),
    ]);
    all.push(...spawned);
    await Promise.all(all.map((p) => p.ready(options.readyTimeoutMs)));
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
  return {
    database,
    env,
    api: all.filter((p) => p.role === 'serve'),
    workers: all.filter((p) => p.role === 'worker'),
    all,
    operator: { authorization: `Bearer ${secrets.OPERATOR_TOKEN}` },
    close,
  };
};
