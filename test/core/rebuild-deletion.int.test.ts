import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { expect, it } from 'vitest';
import { DELETIONS_STREAM } from '../../ports/event-store';
import { rebuildProjection } from '../../projections/rebuild';
import { ProjectionRunner } from '../../projections/runner';
import { streamSummariesProjection } from '../../projections/stream-summaries';
import { createPostgresEventStore } from '../../src/eventstore/postgres';
import { postgresServerUrl, postgresTestDatabaseOrSkip } from '../support/databases';

/**
 * `projections rebuild --verify` when a stream's deletion commits while an older transaction of any database on
 * the server is still open: `$all` is read only below `pg_snapshot_xmin`, so the `StreamDeleted` is not readable
 * yet, while the deleted stream's events are already gone from the log. A rebuild that compared at the readable
 * head would fold a log without the stream and no deletion, against a live generation that folded the stream:
 * the deleted stream's rows would be "only in live". The verify must compare at a position past the deletion,
 * waiting until it is readable. PostgreSQL only: PGlite has one connection, so no transaction can hold others back.
 */
it('--verify waits for a deletion committed behind an older open transaction, and finds no difference', async (ctx) => {
  const db = await postgresTestDatabaseOrSkip(ctx, 'rebuild after a deletion');
  if (!db) return;
  const store = createPostgresEventStore(db);
  const holder = new pg.Client({ connectionString: postgresServerUrl() });
  try {
    const kept = `kept-${randomUUID()}`;
    const gone = `gone-${randomUUID()}`;
    await store.append(kept, [{ type: 'Opened', data: {} }]);
    const last = await store.append(gone, [
      { type: 'Opened', data: {} },
      { type: 'Touched', data: {} },
    ]);
    const runner = new ProjectionRunner(store, db.db, [streamSummariesProjection], { batchSize: 50 });
    await runner.start();
    expect(await runner.waitFor(last.position, 10_000)).toBe(true);
    await runner.stop();

    // An older transaction with a transaction id, in another database of the same server, holds the horizon.
    await holder.connect();
    await holder.query('begin');
    await holder.query('select pg_current_xact_id()');
    await store.deleteStream(gone);
    const deletion = (await store.readStream(DELETIONS_STREAM)).at(-1)!;
    // Committed (a stream read sees it) but not readable in `$all` yet.
    expect(await store.headPosition()).not.toEqual(deletion.position);
    const released = new Promise<void>((resolve) =>
      setTimeout(() => holder.query('commit').then(() => resolve(), resolve), 300),
    );

    const result = await rebuildProjection(store, db.db, streamSummariesProjection, { verify: true });
    await released;
    expect(result.differences).toEqual([]);
    expect(result.swapped).toBe(true);
    const rows = await sql<{ stream_id: string }>`select stream_id from stream_summaries order by 1`.execute(
      db.db,
    );
    expect(rows.rows.map((r) => r.stream_id)).toEqual([kept]);
  } finally {
    await holder.end().catch(() => undefined);
    await store.close();
    await db.close();
  }
}, 60_000);
