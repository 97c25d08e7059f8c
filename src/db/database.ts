import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import type { ReadModels } from '../../projections/read-models';
import { DatabaseAvailability } from './availability';
import { DatabaseUnavailableError } from './connection-errors';
import { answerMarkedStatements } from './marked-statements';
import { redactDatabaseUrl } from './redact-url';
import type { Database } from './schema';
import { PREFER_LZ4 } from './toast-compression';

/**
 * One PostgreSQL, two ways to reach it (ARCHITECTURE §2.6): a server through a `pg` pool (`DATABASE_URL`), or
 * PGlite, PostgreSQL compiled to WASM running in-process, persisted in `DATA_DIR/pglite` (the no-configuration
 * default) or in memory (tests). Both give the same kysely instances and the same SQL: `db` types the read models
 * (what the application layer queries), `all` the same connection with the event store's and market data's tables.
 */
export interface DatabaseHandle {
  /** `postgres` (a server) or `pglite` (embedded). */
  readonly kind: 'postgres' | 'pglite';
  /** Where it lives, for logs and `/health` (password removed). */
  readonly location: string;
  /** The read models (`projections/read-models.ts`): what queries, commands and projections use. */
  readonly db: Kysely<ReadModels>;
  /** The same connection typed with every table (the event store adapter, market data, audits). */
  readonly all: Kysely<Database>;
  /**
   * Whether the server answers (docs/operations.md, "Database faults"): connection errors seen anywhere start a
   * probe; retry loops wait on it. PGlite is in-process and always available.
   */
  readonly availability: DatabaseAvailability;
  /**
   * LISTENs on `channel`; `onNotify` receives each payload. Resolves to an unlisten function once the first
   * attempt settled. A wake-up only: notifications may be lost or merged, callers re-read the log. On a server,
   * a lost LISTEN connection is re-opened (retried until it works or the unlisten); `onLost` is called the moment
   * the loss is seen (wake-ups are missing from then on, so the caller polls meanwhile) and `onResubscribed` after
   * each re-subscription, so the caller reads what it may have missed meanwhile. On a server the
   * LISTEN connection carries `applicationName` (its `application_name`, seen in `pg_stat_activity` by other
   * processes) when given.
   */
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    options?: { onLost?: () => void; onResubscribed?: () => void; applicationName?: string },
  ): Promise<() => Promise<void>>;
  /**
   * A connection of its own, outside the pool, for session state that must live as long as the connection
   * (advisory-lock leaderships); server only (undefined on PGlite). Throws a connection error when the server
   * cannot be reached.
   */
  session?(): Promise<DatabaseSession>;
  /** Closes the pool / PGlite instance (idempotent). */
  close(): Promise<void>;
}

/** A dedicated server connection ({@link DatabaseHandle.session}). */
export interface DatabaseSession {
  query<R extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  /** Resolves when the connection is lost (an error or the server closing it); never rejects. */
  readonly lost: Promise<Error>;
  /** Closes it (session locks are released by the server); never rejects. */
  end(): Promise<void>;
}

/**
 * `db` typed with the event store's and market data's tables too: the same instance (kysely's `withTables` would do
 * the same, but its constraint refuses interfaces), only the static type differs.
 */
const withInfrastructureTables = (db: Kysely<ReadModels>): Kysely<Database> =>
  db as unknown as Kysely<Database>;

// int8 and numeric arrive as strings from `pg`; keep them exact (bigint via BigInt(), money via bignumber.js).
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => v);

/** How long taking a pool connection waits for a server that is away before failing (ms). */
export const CONNECT_WAIT_MS = 5_000;
/** How long opening one connection may take (ms) before it counts as a connection error. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Opens a server database through a `pg` pool of `max` connections (default `DATABASE_POOL_MAX`, 20).
 *
 * Connection loss never kills the process (issue 16, item 1): every client gets an `error` listener for its whole
 * life, also while checked out of the pool (`pg` emits `error` on a client whose server connection dies between
 * queries, e.g. an advisory-lock holder or a transaction waiting on the application; without a listener Node
 * throws it). Each such error is reported to {@link DatabaseAvailability}. Taking a connection while the server is
 * away waits for it up to {@link CONNECT_WAIT_MS}, so a short restart delays statements instead of failing them.
 * Every client sends statements marked `PREPARED` as named ones and answers those marked `COPY_TEXT` as their rows'
 * COPY text in bytes (`answerMarkedStatements`, `marked-statements.ts`), and compresses large values with lz4
 * where the server has it (`PREFER_LZ4`, `toast-compression.ts`).
 */
export const openPostgres = (url: string, options: { max?: number } = {}): DatabaseHandle => {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 20,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
  });
  const availability = new DatabaseAvailability(async () => {
    const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.query('select 1');
    } finally {
      await probe.end().catch(() => {});
    }
  });
  const onClientError = (error: Error) => {
    availability.report(error);
  };
  // An idle client's error (server restart) must not crash the process; the pool drops it and the next query
  // connects anew.
  pool.on('error', onClientError);
  pool.on('connect', (client) => {
    client.on('error', onClientError);
    answerMarkedStatements(client);
    // Queued before the statement the connection was taken for; a lost connection is reported by its listener.
    client.query(PREFER_LZ4).catch(() => {});
  });
  let closed = false;
  /** `pool.connect()`, waiting through a short outage (see {@link CONNECT_WAIT_MS}). */
  const connect = async (): Promise<pg.PoolClient> => {
    const deadline = Date.now() + CONNECT_WAIT_MS;
    for (;;) {
      try {
        return await pool.connect();
      } catch (error) {
        if (closed || !availability.report(error)) throw error;
        const left = deadline - Date.now();
        if (left <= 0 || !(await availability.waitUntilAvailable(left))) {
          throw new DatabaseUnavailableError('the database is unavailable', 1, false, { cause: error });
        }
      }
    }
  };
  const db = new Kysely<ReadModels>({
    dialect: new PostgresDialect({ pool: { connect, end: () => pool.end() } }),
  });
  const sessions = new Set<pg.Client>();
  const openSession = async (
    applicationName?: string,
  ): Promise<{ client: pg.Client; lost: Promise<Error> }> => {
    const client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      ...(applicationName ? { application_name: applicationName } : {}),
    });
    const lost = new Promise<Error>((resolve) => {
      client.on('error', (error) => {
        availability.report(error);
        resolve(error);
      });
      client.on('end', () => resolve(new Error('Connection terminated')));
    });
    try {
      await client.connect();
    } catch (error) {
      availability.report(error);
      await client.end().catch(() => {});
      throw error;
    }
    sessions.add(client);
    return { client, lost };
  };
  const endSession = async (client: pg.Client) => {
    sessions.delete(client);
    await client.end().catch(() => {});
  };
  return {
    kind: 'postgres',
    location: redactDatabaseUrl(url, 'postgres'),
    db,
    all: withInfrastructureTables(db),
    availability,
    async session() {
      const { client, lost } = await openSession();
      return {
        query: async <R extends Record<string, unknown>>(text: string, values?: unknown[]) =>
          (await client.query<R>(text, values)).rows,
        lost,
        end: () => endSession(client),
      };
    },
    async listen(channel, onNotify, listenOptions = {}) {
      let stopped = false;
      let current: pg.Client | undefined;
      let wakeRetry: (() => void) | undefined;
      let first = true;
      let settleFirst: (() => void) | undefined;
      const firstSettled = new Promise<void>((resolve) => {
        settleFirst = resolve;
      });
      // Keeps one LISTEN connection open until unlisten: after a loss, waits for the server and subscribes again,
      // then tells the caller to read what it may have missed.
      const keep = async () => {
        while (!stopped && !closed) {
          try {
            const { client, lost } = await openSession(listenOptions.applicationName);
            current = client;
            client.on('notification', (msg) => {
              if (msg.channel === channel) onNotify(msg.payload ?? '');
            });
            await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
            if (!first) listenOptions.onResubscribed?.();
            first = false;
            settleFirst?.();
            await lost;
            current = undefined;
            if (!stopped && !closed) listenOptions.onLost?.();
            await endSession(client);
          } catch (error) {
            availability.report(error);
            settleFirst?.();
            if (current) await endSession(current);
            current = undefined;
          }
          if (stopped || closed) return;
          first = false;
          await availability.waitUntilAvailable(CONNECT_WAIT_MS);
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, 50);
            wakeRetry = () => {
              clearTimeout(t);
              resolve();
            };
          });
        }
      };
      const loop = keep();
      await firstSettled;
      return async () => {
        stopped = true;
        wakeRetry?.();
        if (current) await endSession(current);
        await loop;
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      availability.close();
      await Promise.all([...sessions].map((c) => endSession(c)));
      await db.destroy();
    },
  };
};

/**
 * Opens PGlite persisted in `dir` (created if missing), or in memory when `dir` is undefined. `loadDataDir`
 * starts from a data-directory dump (`PGlite.dumpDataDir`) instead of running initdb (tests use a migrated
 * template: ~1 s instead of ~10 s on this machine).
 */
export const openPGlite = async (
  dir?: string,
  options: { loadDataDir?: Blob } = {},
): Promise<DatabaseHandle> => {
  if (dir) fs.mkdirSync(dir, { recursive: true });
  // One options object: `new PGlite(undefined, options)` ignores `options` (only a string first argument is
  // merged with the second), which silently ran initdb and every migration instead of loading the dump.
  const pglite = new PGlite({
    ...(dir ? { dataDir: dir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  });
  await pglite.waitReady;
  const db = new Kysely<ReadModels>({ dialect: new PGliteDialect(pglite) });
  let closed = false;
  return {
    kind: 'pglite',
    location: dir ? path.resolve(dir) : 'memory',
    db,
    all: withInfrastructureTables(db),
    // In-process: it cannot go away under the process, so never probed.
    availability: new DatabaseAvailability(async () => {}),
    async listen(channel, onNotify) {
      const unlisten = await pglite.listen(channel, onNotify);
      return async () => {
        if (!closed) await unlisten();
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
};

/** Opens the database the configuration names: `DATABASE_URL`, else PGlite in `DATA_DIR/pglite`. */
export const openDatabase = async (config: {
  DATABASE_URL?: string | undefined;
  DATA_DIR: string;
  DATABASE_POOL_MAX?: number;
}) =>
  config.DATABASE_URL
    ? openPostgres(config.DATABASE_URL, { max: config.DATABASE_POOL_MAX ?? 20 })
    : openPGlite(path.join(config.DATA_DIR, 'pglite'));

/** Round-trips `select 1`; resolves to the latency in ms or throws. */
export const pingDatabase = async (db: Kysely<ReadModels>): Promise<number> => {
  const started = performance.now();
  await sql`select 1`.execute(db);
  return performance.now() - started;
};
