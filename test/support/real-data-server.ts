import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { MARKET_DATA } from '../market/support';
import { createPostgresTestDatabase, seedPgliteDataDir, type TestDatabase } from './databases';
import { lateBound } from './late-bound';
import { type ServerProcess, startServer } from './server-process';

/** The real server process on the real data set, with its own storage; see {@link startRealDataServer}. */
export interface RealDataServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  server: ServerProcess;
  /** Stops the server (SIGTERM, SIGKILL after 15 s) and removes its data directory and database. */
  close(): Promise<void>;
}

/**
 * Starts `src/main.ts serve` replaying `../shared/market-data` (`MARKET_DATA_DIR`, source `files`) in a fresh
 * temporary `DATA_DIR`: embedded PGlite, its database copied in already migrated ({@link seedPgliteDataDir}; a
 * start on an empty one, initdb and migrations, is what server.e2e, cli-audit.e2e, crash.e2e and the webhook
 * deliveries do), or a fresh database on `DATABASE_URL`'s server when that is set. Resolves once `/health` answers
 * 200 (the end-to-end tests of market data and trading share it). `env` adds or overrides configuration variables.
 */
export const startRealDataServer = async (
  prefix: string,
  env: Record<string, string> = {},
): Promise<RealDataServer> => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  let database: TestDatabase | undefined;
  try {
    if (process.env.DATABASE_URL) database = await createPostgresTestDatabase();
    else if (!env.DATABASE_URL) await seedPgliteDataDir(path.join(dataDir, 'pglite'));
    const server = await startServer(
      {
        DATA_DIR: dataDir,
        MARKET_DATA_DIR: MARKET_DATA,
        MARKET_SOURCE: '',
        MARKET_SYMBOLS: '',
        DATABASE_URL: database?.url ?? '',
        LOG_LEVEL: 'info',
        ...env,
      },
      110_000,
    );
    return {
      url: server.url,
      server,
      async close() {
        const stopped = server.stop();
        const timer = setTimeout(() => void server.kill(), 15_000);
        await stopped;
        clearTimeout(timer);
        await database?.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await database?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
};

/** A REST answer: its status and parsed JSON body (`any`: the tests assert its shape). */
export interface ApiAnswer {
  status: number;
  body: any;
}

/**
 * Calls `/api/v1<url>` of the venue at `base` with `headers` (credentials) and, when given, `body` as JSON; resolves
 * to the status and parsed body whatever the status (the end-to-end tests assert errors too).
 */
export const apiCall = async (
  base: string,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<ApiAnswer> => {
  const r = await fetch(`${base}/api/v1${url}`, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: r.status, body: await r.json() };
};

/**
 * The {@link startRealDataServer} of one test file (or describe block): started in a `beforeAll` registered by this
 * call (120 s), closed in an `afterAll` (30 s). Read `url` inside hooks and tests only.
 */
export const useRealDataServer = (prefix: string, env: Record<string, string> = {}): RealDataServer => {
  let server: RealDataServer | undefined;
  beforeAll(async () => {
    server = await startRealDataServer(prefix, env);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  }, 30_000);
  return lateBound('the real data server', () => server);
};

/** An account registered over HTTP, logged in, and its agent: the credentials an end-to-end test trades with. */
export interface RegisteredTrader {
  apiKey: string;
  apiSecret: string;
  /** The account's JWT (`POST /auth/login` with the key and secret). */
  token: string;
  agentId: string;
  /** The agent's API key. */
  agentKey: string;
}

/**
 * Registers an account named `displayName` on the venue at `base` (expects 201), logs it in, and creates its agent
 * `agentName` with `riskProfile` (default: positions and orders up to 100 % of equity; expects 201).
 */
export const registerTrader = async (
  base: string,
  displayName: string,
  agentName: string,
  riskProfile: Record<string, number> = { max_position_size_pct: 100, max_order_size_pct: 100 },
): Promise<RegisteredTrader> => {
  const reg = await apiCall(base, 'POST', '/auth/register', {}, { display_name: displayName });
  expect(reg.status).toBe(201);
  const credentials = { api_key: reg.body.api_key as string, api_secret: reg.body.api_secret as string };
  const token = (await apiCall(base, 'POST', '/auth/login', {}, credentials)).body.token as string;
  const agent = { display_name: agentName, risk_profile: riskProfile };
  const created = await apiCall(base, 'POST', '/agents', { authorization: `Bearer ${token}` }, agent);
  expect(created.status).toBe(201);
  return {
    apiKey: credentials.api_key,
    apiSecret: credentials.api_secret,
    token,
    agentId: created.body.agent_id,
    agentKey: created.body.api_key,
  };
};

/**
 * The {@link registerTrader} of a test file on `server` ({@link useRealDataServer}, called before this), registered
 * in a `beforeAll` of this call. Read its members inside hooks and tests only.
 */
export const useRegisteredTrader = (
  server: RealDataServer,
  displayName: string,
  agentName: string,
): RegisteredTrader => {
  let trader: RegisteredTrader | undefined;
  beforeAll(async () => {
    trader = await registerTrader(server.url, displayName, agentName);
  });
  return lateBound('the registered trader', () => trader);
};
