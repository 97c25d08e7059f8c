import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  comparePositions,
  DELETIONS_STREAM,
  type EventStore,
  type RecordedEvent,
} from '../../ports/event-store';
import { liveGeneration } from '../../projections/generations';
import type { Projection } from '../../projections/projection';
import { rebuildProjection } from '../../projections/rebuild';
import { ProjectionRunner } from '../../projections/runner';
import { streamSummariesProjection } from '../../projections/stream-summaries';
import type { TestDatabase } from '../support/databases';
import { useStorePerTest } from '../support/stores';
import { until } from '../support/until';

let db: TestDatabase;
let store: EventStore;
let runners: ProjectionRunner[] = [];
useStorePerTest(
  (stores) => {
    ({ db, store } = stores);
    runners = [];
  },
  async () => {
    for (const r of runners) await r.stop();
  },
);

const runner = (projections: Projection[], batchSize = 50, unwaitedFoldDelayMs = 0) => {
  const r = new ProjectionRunner(store, db.db, projections, { batchSize, unwaitedFoldDelayMs });
  runners.push(r);
  return r;
};

/** A runner of the stream summaries projection alone, started (catching up from the log's start). */
const startedSummaries = async () => {
  const r = runner([streamSummariesProjection]);
  await r.start();
  return r;
};

const seed = async (streams: number, perStream: number) => {
  let last: RecordedEvent['position'] | undefined;
  for (let s = 0; s < streams; s++) {
    for (let i = 0; i < perStream; i++) {
      const r = await store.append(`acct-${s}`, [{ type: i === 0 ? 'Opened' : 'Touched', data: { s, i } }]);
      last = r.position;
    }
  }
  return last!;
};

const summaries = (k: Kysely<any>) =>
  sql<{ stream_id: string; event_count: number; last_revision: number }>`
    select stream_id, event_count, last_revision from stream_summaries order by stream_id`.execute(k);

const typeCounts = (k: Kysely<any>) =>
  sql<{ type: string; n: number }>`select type, n from type_counts order by type`.execute(k);

/** A projection counting events per type, with a switchable version and a poison type. */
const counting = (version: number, poison?: string): Projection => ({
  name: 'type_counts',
  version,
  tables: ['type_counts'],
  async createTables(k, schema) {
    await sql`create table ${sql.id(schema, 'type_counts')} (type text primary key, n int not null)`.execute(
      k,
    );
  },
  async apply(k, events) {
    for (const e of events) {
      if (e.type === poison) throw new Error(`cannot fold ${e.type}`);
      await sql`insert into type_counts (type, n) values (${e.type}, ${version})
                on conflict (type) do update set n = type_counts.n + ${version}`.execute(k);
    }
  },
});

describe('projection runner', () => {
  it('catches up on history, then follows live appends; waitFor resolves once rows are visible', async () => {
    await seed(3, 4);
    const r = await startedSummaries();
    const live = await store.append('acct-new', [{ type: 'Opened', data: {} }]);
    expect(await r.waitFor(live.position, 10_000)).toBe(true);
    const rows = (await summaries(db.db)).rows;
    expect(rows.map((x) => [x.stream_id, x.event_count])).toEqual([
      ['acct-0', 4],
      ['acct-1', 4],
      ['acct-2', 4],
      ['acct-new', 1],
    ]);
    const [status] = await r.status();
    expect(status).toMatchObject({ name: 'stream_summaries', generation: 1, lag_events: 0, state: 'live' });
    // Stopped, the events appended after its checkpoint are its lag.
    await r.stop();
    for (let i = 0; i < 7; i++) await store.append('acct-late', [{ type: 'Opened', data: { i } }]);
    await until(async () => (await r.status())[0]!.lag_events === 7);
    expect((await r.status())[0]).toMatchObject({ name: 'stream_summaries', lag_events: 7 });
  });

  it('folds events nobody waits for later and together, but never makes a waiter wait for the delay', async () => {
    // A delay far longer than the test: any fold before a waiter arrives would have to come from the delay.
    const r = runner([streamSummariesProjection], 50, 120_000);
    const pages: string[][] = [];
    r.onFolded((change) => {
      if (change !== 'swapped') pages.push(change.map((e) => e.streamId));
    });
    await r.start();
    const first = await store.append('lazy-1', [{ type: 'Opened', data: {} }]);
    expect(await r.waitFor(first.position, 10_000)).toBe(true);
    // Nobody waits for these two: they stay unfolded while the runner pauses.
    await store.append('lazy-2', [{ type: 'Opened', data: {} }]);
    await store.append('lazy-3', [{ type: 'Opened', data: {} }]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await summaries(db.db)).rows.map((x) => x.stream_id)).toEqual(['lazy-1']);
    // A waiter ends the pause at once, and what queued meanwhile is folded in one page.
    const waited = await store.append('lazy-4', [{ type: 'Opened', data: {} }]);
    const started = Date.now();
    expect(await r.waitFor(waited.position, 10_000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await summaries(db.db)).rows.map((x) => x.stream_id)).toEqual([
      'lazy-1',
      'lazy-2',
      'lazy-3',
      'lazy-4',
    ]);
    expect(pages.find((p) => p.includes('lazy-2'))).toEqual(expect.arrayContaining(['lazy-2', 'lazy-3']));
  });

  it('waitFor gives up after its bound and answers false', async () => {
    const r = runner([streamSummariesProjection]);
    const pos = await seed(1, 1);
    // Not started: nothing folds, so the bounded wait must time out.
    const started = Date.now();
    expect(await r.waitFor(pos, 150)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('waitFor in a process that does not fold follows the checkpoints another runner commits, many waits at once', async () => {
    // `folding` runs (a worker); `api` is never started (an API process with PROJECTIONS=false).
    const folding = runner([streamSummariesProjection]);
    const api = runner([streamSummariesProjection]);
    const first = await seed(1, 1);
    const waits = Array.from({ length: 50 }, () => api.waitFor(first, 10_000));
    const late = api.waitFor({ commit: first.commit + 1_000_000n, prepare: first.prepare + 1_000_000n }, 300);
    await folding.start();
    expect(await Promise.all(waits)).toEqual(waits.map(() => true));
    expect(await late).toBe(false);
    // The wait ends once the folding runner has committed the rows: they are visible here.
    const more = await seed(2, 3);
    expect(await api.waitFor(more, 10_000)).toBe(true);
    expect((await summaries(db.db)).rows.map((r) => r.event_count)).toEqual([4, 3]);
  });
  it('keeps rows and checkpoint in one transaction: a failing batch leaves neither behind', async () => {
    await store.append('s-1', [{ type: 'Good', data: {} }]);
    const r = runner([counting(1, 'Poison')], 10);
    await r.start();
    const good = await store.append('s-1', [{ type: 'Good', data: {} }]);
    expect(await r.waitFor(good.position, 10_000)).toBe(true);
    await store.append('s-1', [
      { type: 'Good', data: {} },
      { type: 'Poison', data: {} },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const rows = (await sql<{ type: string; n: number }>`select type, n from type_counts`.execute(db.db))
      .rows;
    // The Good event folded in the same batch as Poison was rolled back with it.
    expect(rows).toEqual([{ type: 'Good', n: 2 }]);
    const gen = await liveGeneration(db.db, 'type_counts');
    expect(gen?.checkpoint).toEqual(good.position);
    const [status] = await r.status();
    expect(status?.state).toBe('failed');
    expect(status?.last_error).toContain('cannot fold Poison');
  });

  it('rebuilds beside the live tables, verifies row by row and swaps the views', async () => {
    await seed(5, 3);
    const r = await startedSummaries();
    const pos = await store.append('acct-0', [{ type: 'Touched', data: {} }]);
    await r.waitFor(pos.position, 10_000);
    const before = (await summaries(db.db)).rows;
    const progress: number[] = [];
    const result = await rebuildProjection(store, db.db, streamSummariesProjection, {
      verify: true,
      batchSize: 4,
      onProgress: (p) => progress.push(p.processed),
    });
    expect(result.swapped).toBe(true);
    expect(result.differences).toEqual([]);
    expect(result.generation.generation).toBe(2);
    expect(progress.length).toBeGreaterThan(1);
    expect((await summaries(db.db)).rows).toEqual(before);
    const schemas = await sql<{ n: string }>`
      select nspname as n from pg_namespace where nspname like 'proj_stream_summaries_g%' order by 1`.execute(
      db.db,
    );
    expect(schemas.rows.map((x) => x.n)).toEqual(['proj_stream_summaries_g2']);
    // The live runner follows the new generation: a new event shows up in the swapped tables.
    const next = await store.append('acct-9', [{ type: 'Opened', data: {} }]);
    expect(await r.waitFor(next.position, 10_000)).toBe(true);
    expect((await summaries(db.db)).rows.map((x) => x.stream_id)).toContain('acct-9');
    expect((await liveGeneration(db.db, 'stream_summaries'))?.generation).toBe(2);
  });

  it('--verify refuses to swap when the live rows differ from a rebuild', async () => {
    await seed(2, 2);
    const r = await startedSummaries();
    const pos = await store.append('acct-1', [{ type: 'Touched', data: {} }]);
    await r.waitFor(pos.position, 10_000);
    await r.stop();
    // Corrupt the live read model behind the projector's back.
    await sql`update proj_stream_summaries_g1.stream_summaries set event_count = 99 where stream_id = 'acct-0'`.execute(
      db.db,
    );
    const result = await rebuildProjection(store, db.db, streamSummariesProjection, { verify: true });
    expect(result.swapped).toBe(false);
    expect(result.differences).toHaveLength(1);
    expect(result.differences![0]).toMatchObject({
      table: 'stream_summaries',
      onlyInRebuilt: 1,
      onlyInLive: 1,
    });
    expect((await liveGeneration(db.db, 'stream_summaries'))?.generation).toBe(1);
    // Without --verify the rebuild repairs it.
    const repaired = await rebuildProjection(store, db.db, streamSummariesProjection);
    expect(repaired.swapped).toBe(true);
    const row = (await summaries(db.db)).rows.find((x) => x.stream_id === 'acct-0');
    expect(row?.event_count).toBe(2);
  });

  it('rebuilds while writers keep appending, without losing or doubling an event', async () => {
    const r = await startedSummaries();
    let stop = false;
    let appended = 0;
    let last: RecordedEvent['position'] | undefined;
    const writers = Array.from({ length: 4 }, (_, w) =>
      (async () => {
        while (!stop) {
          const r = await store.append(`busy-${w}`, [{ type: 'Tick', data: { n: appended } }]);
          if (!last || comparePositions(r.position, last) > 0) last = r.position;
          appended++;
          // PGlite runs queries on this thread and resolves them as microtasks: let timers run.
          await new Promise((resolve) => setImmediate(resolve));
        }
      })(),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const result = await rebuildProjection(store, db.db, streamSummariesProjection, { batchSize: 7 });
    expect(result.swapped).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    stop = true;
    await Promise.all(writers);
    expect(await r.waitFor(last!, 10_000)).toBe(true);
    const rows = (await summaries(db.db)).rows;
    const total = rows.reduce((sum, x) => sum + x.event_count, 0);
    expect(total).toBe(appended);
    for (const x of rows) expect(x.event_count).toBe(x.last_revision + 1);
  });

  it('rebuilds in the background when the code version changes, serving the old tables meanwhile', async () => {
    const seeded = await store.append('x', [
      { type: 'A', data: {} },
      { type: 'A', data: {} },
      { type: 'B', data: {} },
    ]);
    const v1 = runner([counting(1)]);
    await v1.start();
    await v1.waitFor(seeded.position, 10_000);
    await v1.stop();
    const v2 = runner([counting(2)]);
    await v2.start();
    const pos = await store.append('x', [{ type: 'B', data: {} }]);
    const deadline = Date.now() + 10_000;
    while ((await liveGeneration(db.db, 'type_counts'))?.version !== 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await v2.waitFor(pos.position, 10_000)).toBe(true);
    const rows = (await typeCounts(db.db)).rows;
    expect(rows).toEqual([
      { type: 'A', n: 4 },
      { type: 'B', n: 4 },
    ]);
    expect((await liveGeneration(db.db, 'type_counts'))?.generation).toBe(2);
  });

  it('removes the rows of a deleted stream', async () => {
    const r = await startedSummaries();
    const id = `gone-${randomUUID()}`;
    await store.append(id, [{ type: 'Opened', data: {} }]);
    await store.deleteStream(id);
    const deletions = await store.readStream(DELETIONS_STREAM);
    expect(await r.waitFor(deletions[deletions.length - 1]!.position, 10_000)).toBe(true);
    expect((await summaries(db.db)).rows.map((x) => x.stream_id)).not.toContain(id);
  });

  it('feeds every projection from one reader and one transaction per page, with one checkpoint position', async () => {
    await seed(2, 3);
    const r = runner([streamSummariesProjection, counting(1)]);
    await r.start();
    const pos = await store.append('s-9', [{ type: 'A', data: {} }]);
    expect(await r.waitFor(pos.position, 10_000)).toBe(true);
    const gens = (
      await sql<{ name: string; c: string; p: string; n: string }>`
        select name, checkpoint_commit::text as c, checkpoint_prepare::text as p, events_processed::text as n
        from projection_generations where status = 'live' order by name`.execute(db.db)
    ).rows;
    // Both committed the same checkpoint (the page's last event) and counted every event they passed.
    expect(gens.map((g) => g.name)).toEqual(['stream_summaries', 'type_counts']);
    expect(new Set(gens.map((g) => `${g.c}/${g.p}`)).size).toBe(1);
    expect(gens.map((g) => Number(g.n))).toEqual([7, 7]);
    const counts = (await typeCounts(db.db)).rows;
    expect(counts).toEqual([
      { type: 'A', n: 1 },
      { type: 'Opened', n: 2 },
      { type: 'Touched', n: 4 },
    ]);
  });

  it('isolates a failing projection: the others keep folding, it retries from its own checkpoint', async () => {
    const r = runner([streamSummariesProjection, counting(1, 'Poison')], 10);
    await r.start();
    const good = await store.append('p-1', [{ type: 'Good', data: {} }]);
    expect(await r.waitFor(good.position, 10_000)).toBe(true);
    await store.append('p-1', [{ type: 'Poison', data: {} }]);
    const after = await store.append('p-2', [{ type: 'Good', data: {} }]);
    // The healthy projection folds past the poison event; the failing one stays at its last good checkpoint.
    const deadline = Date.now() + 10_000;
    let rows: { stream_id: string; event_count: number }[] = [];
    while (Date.now() < deadline) {
      rows = (await summaries(db.db)).rows;
      if (rows.some((x) => x.stream_id === 'p-2')) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(rows.map((x) => [x.stream_id, x.event_count])).toEqual([
      ['p-1', 2],
      ['p-2', 1],
    ]);
    expect((await liveGeneration(db.db, 'type_counts'))?.checkpoint).toEqual(good.position);
    const status = await r.status();
    expect(status.find((s) => s.name === 'type_counts')).toMatchObject({ state: 'failed' });
    expect(status.find((s) => s.name === 'type_counts')?.last_error).toContain('cannot fold Poison');
    expect(status.find((s) => s.name === 'stream_summaries')?.state).not.toBe('failed');
    // Read your writes cannot be promised while a read model is stuck: the bounded wait says so.
    expect(await r.waitFor(after.position, 300)).toBe(false);
  });

  it('a projection that recovers from failures folds every event it missed, none skipped or doubled', async () => {
    let failuresLeft = 2;
    const flaky: Projection = {
      ...counting(1),
      async apply(k, events) {
        if (events.some((e) => e.type === 'Flaky') && failuresLeft > 0) {
          failuresLeft--;
          throw new Error('transient failure');
        }
        await counting(1).apply(k, events);
      },
    };
    const r = runner([streamSummariesProjection, flaky], 5);
    await r.start();
    await store.append('f-1', [{ type: 'Flaky', data: {} }]);
    // The healthy projection keeps folding while the flaky one backs off; then it comes back.
    let last: RecordedEvent['position'] | undefined;
    for (let i = 0; i < 30; i++) {
      last = (await store.append(`f-${i % 3}`, [{ type: 'Good', data: {} }])).position;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await r.waitFor(last!, 15_000)).toBe(true);
    expect(failuresLeft).toBe(0);
    const counts = (await typeCounts(db.db)).rows;
    expect(counts).toEqual([
      { type: 'Flaky', n: 1 },
      { type: 'Good', n: 30 },
    ]);
    const total = (await summaries(db.db)).rows.reduce((sum, x) => sum + x.event_count, 0);
    expect(total).toBe(31);
  });
});
