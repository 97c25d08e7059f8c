import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore } from '../../ports/event-store';
import type { Projection } from '../../projections/projection';
import { ProjectionRunner } from '../../projections/runner';
import { streamSummariesProjection } from '../../projections/stream-summaries';
import { createPostgresEventStore } from '../../src/eventstore/postgres';
import {
  createPostgresTestDatabase,
  postgresUnavailableReason,
  type TestDatabase,
} from '../support/databases';

/**
 * `concurrentFolds` (READ_MODEL_FOLDS): a page of the log is folded into the read models that have events in it
 * in transactions of their own, at the same time, on a server pool. It only exists for PostgreSQL servers, so
 * this file runs on the local server in both CI passes.
 */
const reason = await postgresUnavailableReason();
if (reason) console.log(`[concurrent folds] skipped: ${reason}`);

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  if (reason) return;
  db = await createPostgresTestDatabase();
  store = createPostgresEventStore(db);
});
afterAll(async () => {
  if (reason) return;
  await store.close();
  await db.close();
});

/**
 * Records, per event of its types, the transaction that folded it and holds its transaction open for `holdMs`:
 * the slow projection of a page must not hold the others back.
 */
const recording = (name: string, types: string[], holdMs: number): Projection => ({
  name,
  version: 1,
  tables: [name],
  eventTypes: types,
  async createTables(k, schema) {
    await sql`create table ${sql.id(schema, name)} (
      global_position bigint primary key, type text not null, xid text not null, committed_at timestamptz)`.execute(
      k,
    );
  },
  async apply(k, events) {
    for (const e of events) {
      await sql`insert into ${sql.table(name)} (global_position, type, xid)
                values (${e.position.prepare.toString()}::bigint, ${e.type}, pg_current_xact_id()::text)`.execute(
        k,
      );
    }
    if (holdMs > 0) await new Promise((r) => setTimeout(r, holdMs));
  },
});

describe.skipIf(reason !== null)('concurrent folds of one page', () => {
  it('folds each read model with events in the page in its own transaction, at once; the rest ride along', async () => {
    const slow = recording('fold_slow', ['Slow'], 600);
    const fast = recording('fold_fast', ['Fast'], 0);
    // `fold_idle` has no events in the pages below: it joins a group, yet its checkpoint moves with the page.
    const idle = recording('fold_idle', ['Never'], 0);
    const runner = new ProjectionRunner(store, db.db, [streamSummariesProjection, slow, fast, idle], {
      concurrentFolds: 3,
    });
    await runner.start();
    try {
      const a = await store.append('cf-1', [
        { type: 'Slow', data: {} },
        { type: 'Fast', data: {} },
      ]);
      const started = Date.now();
      expect(await runner.waitFor(a.position, 15_000)).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(500);

      const rows = async (table: string) =>
        (await sql<{ type: string; xid: string }>`select type, xid from ${sql.table(table)}`.execute(db.db))
          .rows;
      const [slowRows, fastRows] = [await rows('fold_slow'), await rows('fold_fast')];
      expect(slowRows.map((r) => r.type)).toEqual(['Slow']);
      expect(fastRows.map((r) => r.type)).toEqual(['Fast']);
      // Two transactions for one page: the fast read model did not wait inside the slow one's transaction.
      expect(slowRows[0]!.xid).not.toBe(fastRows[0]!.xid);

      // Every member's checkpoint is the page's last event, including the one without events in it.
      const gens = (
        await sql<{ name: string; c: string; p: string; n: string }>`
          select name, checkpoint_commit::text as c, checkpoint_prepare::text as p, events_processed::text as n
          from projection_generations where status = 'live' order by name`.execute(db.db)
      ).rows;
      expect(gens.map((g) => g.name)).toEqual(['fold_fast', 'fold_idle', 'fold_slow', 'stream_summaries']);
      expect(new Set(gens.map((g) => `${g.c}/${g.p}`))).toEqual(
        new Set([`${a.position.commit}/${a.position.prepare}`]),
      );
      expect(gens.map((g) => Number(g.n))).toEqual([2, 2, 2, 2]);
      expect(await rows('fold_idle')).toEqual([]);
    } finally {
      await runner.stop();
    }
  });
});
