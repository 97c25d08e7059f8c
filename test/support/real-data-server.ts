import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MARKET_DATA } from '../market/support';
import { createPostgresTestDatabase, type TestDatabase } from './databases';
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
 * temporary `DATA_DIR`: embedded PGlite, or a fresh database on `DATABASE_URL`'s server when that is set. Resolves
 * once `/health` answers 200 (the end-to-end tests of market data and trading share it). `env` adds or overrides
 * configuration variables.
 */
export const startRealDataServer = async (
  prefix: string,
  env: Record<string, string> = {},
): Promise<RealDataServer> => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  let database: TestDatabase | undefined;
  try {
    if (process.env.DATABASE_URL) database = await createPostgresTestDatabase();
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
