import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { type DatabaseHandle, openPGlite, openPostgres } from '../../src/db/database';
import { migrateToLatest, migrations } from '../../src/db/migrate';

/** Server the PostgreSQL tests use: `DATABASE_URL` when set, else the local server of this machine. */
export const postgresServerUrl = (): string =>
  process.env.DATABASE_URL || process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Prefix of the databases tests create on the server (`TEST_DATABASE_PREFIX`, default `ptv_test_`): engineers
 * sharing one server give theirs a prefix of their own.
 */
export const testDatabasePrefix = (): string => process.env.TEST_DATABASE_PREFIX || 'ptv_test_';

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

/**
 * Why a test that needs the PostgreSQL server (several processes or connections on one database) cannot run here,
 * or `null`: the PGlite pass (no `DATABASE_URL`; it runs in the PostgreSQL pass), or the server not answering.
 */
export const postgresPassOnlyReason = async (): Promise<string | null> =>
  process.env.DATABASE_URL
    ? postgresUnavailableReason()
    : 'DATABASE_URL is not set (PGlite run; this test runs in the PostgreSQL pass)';

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
  const name = `${testDatabasePrefix()}${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
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

/**
 * A fresh database on the PostgreSQL server for a test that needs that server, or `undefined` once the test is
 * skipped (`ctx.skip()`, the reason logged as `[label] PostgreSQL run skipped: …`) because no server answers.
 */
export const postgresTestDatabaseOrSkip = async (
  ctx: { skip: () => void },
  label: string,
): Promise<TestDatabase | undefined> => {
  const reason = await postgresUnavailableReason();
  if (!reason) return createPostgresTestDatabase();
  console.log(`[${label}] PostgreSQL run skipped: ${reason}`);
  ctx.skip();
  return undefined;
};

/**
 * A migrated PGlite data-directory dump shared by every test process, keyed by the migrations' source and the
 * PGlite version so any change makes a new one. Written once (atomically) by whoever needs it first, and read
 * once per process: hashing the migrations and reading the 40 MB file took ~0.1 s of every test database.
 */
export const pgliteTemplate = (): Promise<Blob> => {
  // A failed read is not kept: the next caller tries again.
  template ??= readPgliteTemplate().catch((error: unknown) => {
    template = undefined;
    throw error;
  });
  return template;
};
let template: Promise<Blob> | undefined;

/** The path, in the system's temporary directory, of the template's files: keyed by the migrations and PGlite. */
const templatePath = (): string => {
  const dir = path.resolve(import.meta.dirname, '../../src/db/migrations');
  const hash = createHash('sha256');
  for (const f of fs.readdirSync(dir).sort()) hash.update(f).update(fs.readFileSync(path.join(dir, f)));
  hash.update(JSON.stringify(Object.keys(migrations)));
  const pkg = path.resolve(import.meta.dirname, '../../node_modules/@electric-sql/pglite/package.json');
  hash.update(fs.readFileSync(pkg));
  return path.join(os.tmpdir(), `ptv-pglite-template-${hash.digest('hex').slice(0, 16)}`);
};

/**
 * Makes `target` (a file or directory) whole or not at all, whoever of the concurrent test processes gets there: `make`
 * writes it at a private temporary path, which is then renamed onto `target`. A rename that loses to another
 * process's (a directory already in place) drops this copy: that one serves.
 */
const putInPlaceOnce = async (target: string, make: (tmp: string) => Promise<unknown>): Promise<void> => {
  const tmp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await make(tmp);
  try {
    fs.renameSync(tmp, target);
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(target)) throw error;
  }
};

const readPgliteTemplate = async (): Promise<Blob> => {
  const file = `${templatePath()}.tar`;
  if (!fs.existsSync(file)) {
    const pglite = new PGlite();
    const db = new Kysely<any>({ dialect: new PGliteDialect(pglite) });
    await migrateToLatest(db);
    const dump = await pglite.dumpDataDir('none');
    await db.destroy();
    const bytes = Buffer.from(await dump.arrayBuffer());
    await putInPlaceOnce(file, async (tmp) => fs.writeFileSync(tmp, bytes));
  }
  return new Blob([fs.readFileSync(file)]);
};

/**
 * Fills `dir` (a server's `DATA_DIR/pglite`, absent) with the migrated template as PGlite persists it on disk, so a
 * server process started on it finds its database migrated: initdb and every migration took 7–9 s of each such
 * start on this machine, a copy takes a fraction of a second. The directory is made once per template (from
 * {@link pgliteTemplate}, by whoever needs it first, renamed into place whole) and copied from then on.
 */
export const seedPgliteDataDir = async (dir: string): Promise<void> => {
  const template = `${templatePath()}.dir`;
  if (!fs.existsSync(template)) {
    const loadDataDir = await pgliteTemplate();
    await putInPlaceOnce(template, async (tmp) => (await openPGlite(tmp, { loadDataDir })).close());
  }
  fs.cpSync(template, dir, { recursive: true });
};

/** An in-memory PGlite, migrated (started from a shared migrated template; see `pgliteTemplate`). */
export const createPGliteTestDatabase = async (): Promise<TestDatabase> => {
  const handle = await openPGlite(undefined, { loadDataDir: await pgliteTemplate() });
  await migrateToLatest(handle.db);
  return handle;
};

/**
 * The database integration tests run on: a fresh database on `DATABASE_URL`'s server when that is set (the
 * CI's PostgreSQL pass), else in-memory PGlite (the default pass).
 */
export const createTestDatabase = (): Promise<TestDatabase> =>
  process.env.DATABASE_URL ? createPostgresTestDatabase() : createPGliteTestDatabase();
