import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { Projection } from '../../projections/projection';
import { ProjectionRunner } from '../../projections/runner';
import { isConnectionError } from '../../src/db/connection-errors';
import { createPostgresEventStore, type PostgresEventStore } from '../../src/eventstore/postgres';
import {
  createPostgresTestDatabase,
  postgresUnavailableReason,
  type TestDatabase,
} from '../support/databases';
import { until } from '../support/until';

/**
 * The projection reader on a PostgreSQL server whose folding backend is terminated (`pg_terminate_backend`, what a
 * failover or a proxy's timeout does) mid-page (issue 16): the first loss is retried at once on a fresh connection,
 * only a second loss in a row waits for the database (`waitForDatabase`), a folded page starts the count again, and
 * every event is folded exactly once.
 */
const reason = await postgresUnavailableReason();
if (reason) console.warn(`projection connection-loss tests skipped: ${reason}`);

/** Marks the folding statement so the test finds its backend in `pg_stat_activity`. */
const MARK = 'fold_under_test';

/** Counts events per type, each page after a 0.3 s sleep (the window in which the test terminates its backend). */
const slowCounts: Projection = {
  name: 'slow_counts',
  version: 1,
  tables: ['slow_counts'],
  async createTables(k, schema) {
    await sql`create table ${sql.id(schema, 'slow_counts')} (type text primary key, n int not null)`.execute(
      k,
    );
  },
  async apply(k, events) {
    await sql`select pg_sleep(0.3) as ${sql.raw(MARK)}`.execute(k);
    for (const e of events) {
      await sql`insert into slow_counts (type, n) values (${e.type}, 1)
                on conflict (type) do update set n = slow_counts.n + 1`.execute(k);
    }
  },
};

describe.skipIf(reason !== null)(
  'projection reader losing its connection mid-page (PostgreSQL server)',
  () => {
    let db: TestDatabase | undefined;
    let store: PostgresEventStore | undefined;
    let runner: ProjectionRunner | undefined;
    let admin: pg.Client | undefined;
    afterEach(async () => {
      await runner?.stop();
      await store?.close();
      await admin?.end();
      await db?.close();
    });

    it('retries the first loss at once, waits for the database after a second in a row, folds every event once', async () => {
      db = await createPostgresTestDatabase();
      store = createPostgresEventStore(db);
      let waits = 0;
      const database = db;
      runner = new ProjectionRunner(store, db.db, [slowCounts], {
        batchSize: 50,
        isTransient: isConnectionError,
        waitForDatabase: (ms) => {
          waits++;
          return database.availability.waitUntilAvailable(ms);
        },
      });
      await runner.start();
      admin = new pg.Client({ connectionString: db.url! });
      await admin.connect();
      const client = admin;

      /** The pid of the backend sleeping in a fold, once one other than `not` does. */
      const foldingBackend = async (not?: number): Promise<number> => {
        let pid: number | undefined;
        await until(
          async () => {
            const { rows } = await client.query<{ pid: number }>(
              `select pid from pg_stat_activity where datname = current_database() and state = 'active'
               and query like '%${MARK}%' and pid <> pg_backend_pid()`,
            );
            pid = rows.map((r) => r.pid).find((p) => p !== not);
            return pid !== undefined;
          },
          { timeoutMs: 10_000, what: 'a fold sleeping on a backend' },
        );
        return pid!;
      };
      const terminate = async (pid: number) => {
        await client.query('select pg_terminate_backend($1)', [pid]);
      };

      const first = await store.append('loss-1', [{ type: 'Lost', data: {} }]);
      const a = await foldingBackend();
      await terminate(a);
      const b = await foldingBackend(a);
      // The page was read again and is being folded on a fresh connection without a wait for the database.
      expect(waits).toBe(0);
      await terminate(b);
      await foldingBackend(b);
      // A second loss in a row waited for the database to answer first.
      expect(waits).toBe(1);
      expect(await runner.waitFor(first.position, 10_000)).toBe(true);

      // A folded page starts the count again: the next loss is retried at once.
      const second = await store.append('loss-2', [{ type: 'Lost', data: {} }]);
      const c = await foldingBackend();
      await terminate(c);
      await foldingBackend(c);
      expect(waits).toBe(1);
      expect(await runner.waitFor(second.position, 10_000)).toBe(true);

      const { rows } = await sql<{ type: string; n: number }>`select type, n from slow_counts`.execute(db.db);
      expect(rows).toEqual([{ type: 'Lost', n: 2 }]);
    }, 60_000);
  },
);
