import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import type { ReadModels } from '../../projections/read-models';
import type { Database } from './schema';

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
   * LISTENs on `channel`; `onNotify` receives each payload. Resolves to an unlisten function.
   * A wake-up only: notifications may be lost or merged, callers re-read the log.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /** Closes the pool / PGlite instance (idempotent). */
  close(): Promise<void>;
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

/** Opens a server database through a `pg` pool of `max` connections. */
export const openPostgres = (url: string, options: { max?: number } = {}): DatabaseHandle => {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 20 });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const db = new Kysely<ReadModels>({ dialect: new PostgresDialect({ pool }) });
  let closed = false;
  const listeners = new Set<pg.Client>();
  return {
    kind: 'postgres',
    location: redactUrl(url),
    db,
    all: withInfrastructureTables(db),
    async listen(channel, onNotify) {
      const client = new pg.Client({ connectionString: url });
      client.on('error', () => {});
      await client.connect();
      client.on('notification', (msg) => {
        if (msg.channel === channel) onNotify(msg.payload ?? '');
      });
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      listeners.add(client);
      return async () => {
        listeners.delete(client);
        await client.end().catch(() => {});
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...listeners].map((c) => c.end().catch(() => {})));
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
  const pglite = new PGlite(dir, options.loadDataDir ? { loadDataDir: options.loadDataDir } : {});
  await pglite.waitReady;
  const db = new Kysely<ReadModels>({ dialect: new PGliteDialect(pglite) });
  let closed = false;
  return {
    kind: 'pglite',
    location: dir ? path.resolve(dir) : 'memory',
    db,
    all: withInfrastructureTables(db),
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
export const openDatabase = async (config: { DATABASE_URL?: string | undefined; DATA_DIR: string }) =>
  config.DATABASE_URL ? openPostgres(config.DATABASE_URL) : openPGlite(path.join(config.DATA_DIR, 'pglite'));

/** Round-trips `select 1`; resolves to the latency in ms or throws. */
export const pingDatabase = async (db: Kysely<ReadModels>): Promise<number> => {
  const started = performance.now();
  await sql`select 1`.execute(db);
  return performance.now() - started;
};

const redactUrl = (url: string): string => {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres';
  }
};
