import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type DatabaseHandle, openPGlite, openPostgres } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrate';

/** Server the PostgreSQL tests use: `DATABASE_URL` when set, else the local server of this machine. */
export const postgresServerUrl = (): string =>
  process.env.DATABASE_URL || process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

let reachable: Promise<string | null> | undefined;

/** Resolves to `null` when the PostgreSQL server answers, else to the reason it cannot be used. */
export const postgresUnavailableReason = (): Promise<string | null> => {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: postgresServerUrl(), connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('select 1');
      return null;
    } catch (error) {
      return `PostgreSQL at ${postgresServerUrl()} unreachable: ${(error as Error).message}`;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return reachable;
};

/** A database for one test file, migrated, dropped again by `close()`. */
export interface TestDatabase extends DatabaseHandle {
  /** Connection string of the fresh database (postgres only). */
  url?: string;
}

/**
 * Creates a fresh PostgreSQL database on the test server (so test files never share tables), migrates it,
 * and drops it on close.
 */
export const createPostgresTestDatabase = async (options: { max?: number } = {}): Promise<TestDatabase> => {
  const name = `ptv_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresServerUrl() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(postgresServerUrl());
  url.pathname = `/${name}`;
  const handle = openPostgres(url.toString(), options);
  await migrateToLatest(handle.db);
  return {
    ...handle,
    url: url.toString(),
    async close() {
      await handle.close();
      const a = new pg.Client({ connectionString: postgresServerUrl() });
      await a.connect();
      await a.query(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
};

/** An in-memory PGlite, migrated. */
export const createPGliteTestDatabase = async (): Promise<TestDatabase> => {
  const handle = await openPGlite();
  await migrateToLatest(handle.db);
  return handle;
};

/**
 * The database integration tests run on: a fresh database on `DATABASE_URL`'s server when that is set (the
 * CI's PostgreSQL pass), else in-memory PGlite (the default pass).
 */
export const createTestDatabase = (): Promise<TestDatabase> =>
  process.env.DATABASE_URL ? createPostgresTestDatabase() : createPGliteTestDatabase();
