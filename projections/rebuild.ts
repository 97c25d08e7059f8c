import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import {
  comparePositions,
  DELETIONS_STREAM,
  type EventStore,
  isAfter,
  type LogPosition,
  maxPosition,
  type RecordedEvent,
} from '../ports/event-store';
import {
  applyBatch,
  createGeneration,
  dropSchema,
  ensureRegistered,
  type Generation,
  liveGeneration,
  promote,
  readGeneration,
  setGenerationStatus,
} from './generations';
import type { Projection } from './projection';
import type { ReadModels } from './read-models';

/** Progress of a rebuild, reported after each batch. */
export interface RebuildProgress {
  processed: number;
  /** Events in the log when the rebuild started, when the adapter can tell cheaply. */
  total?: number;
  eventsPerSecond: number;
}

/** Options of {@link rebuildProjection}. */
export interface RebuildOptions {
  /** Events per transaction (default 5,000). */
  batchSize?: number;
  /** Compare the rebuilt tables with the live ones row by row before swapping; swap only when identical. */
  verify?: boolean;
  onProgress?: (progress: RebuildProgress) => void;
}

/** Differences of one table found by `--verify`. */
export interface TableDifference {
  table: string;
  /** Rows in the rebuilt table missing from the live one. */
  onlyInRebuilt: number;
  /** Rows in the live table missing from the rebuilt one. */
  onlyInLive: number;
  /** Up to 5 example rows of each side. */
  samples: { rebuilt: unknown[]; live: unknown[] };
}

/** Outcome of {@link rebuildProjection}. */
export interface RebuildResult {
  generation: Generation;
  processed: number;
  seconds: number;
  /** False when `verify` found differences (the live generation stays and the rebuilt one is dropped). */
  swapped: boolean;
  /** Per-table comparison when `verify` was set (only tables with differences are listed). */
  differences?: TableDifference[];
  /** Tables compared by `verify`. */
  comparedTables?: number;
}

/**
 * Rebuilds a projection without downtime (ARCHITECTURE §6): builds the next generation's tables from position
 * 0 beside the live ones, catches up, then in one transaction locks the live generation (pausing its runner),
 * brings both to the same position, optionally verifies them row by row, and swaps the public views. The old
 * generation's schema is dropped after the commit. Runners in other processes notice the swap at their next
 * batch and follow the new generation.
 */
export const rebuildProjection = async (
  store: EventStore,
  db: Kysely<ReadModels>,
  projection: Projection,
  options: RebuildOptions = {},
): Promise<RebuildResult> => {
  const started = performance.now();
  const batchSize = options.batchSize ?? 5_000;
  await ensureRegistered(db, projection.name);
  const gen = await createGeneration(db, projection);
  const total = await countEvents(store);
  // Catch up to the head seen now; what arrives later is folded just before the swap. Stopping at a fixed
  // target keeps a busy log from starving the rebuild.
  const head = await store.headPosition();
  let processed = 0;
  let checkpoint: LogPosition = gen.checkpoint;
  try {
    // Read page k+1 while page k is folded: reading and writing overlap on a server (separate connections).
    let next =
      comparePositions(checkpoint, head) < 0
        ? store.readAll({ after: checkpoint, maxCount: batchSize })
        : undefined;
    while (next) {
      const page = await next;
      if (page.events.length === 0) break;
      next =
        comparePositions(page.next, head) < 0
          ? store.readAll({ after: page.next, maxCount: batchSize })
          : undefined;
      const result = await db.transaction().execute((trx) => applyBatch(trx, projection, gen, page.events));
      if (result === 'retired')
        throw new Error(`generation ${gen.generation} of ${projection.name} was retired`);
      checkpoint = result;
      processed += page.events.length;
      options.onProgress?.({
        processed,
        ...(total !== undefined ? { total } : {}),
        eventsPerSecond: processed / ((performance.now() - started) / 1000),
      });
    }

    // Prefetch outside the swap transaction (PGlite has one connection: a read through `db` inside the
    // transaction would wait for itself). Without --verify the new generation may be a few events behind the
    // live one when swapped: the runner folds them right after (reads are briefly that much older).
    // With --verify both must stand at the same position, so the swap retries if the live one moved.
    let outcome:
      | { swapped: boolean; differences: TableDifference[] | undefined; retired: string[] }
      | undefined;
    for (let attempt = 0; attempt < 50 && !outcome; attempt++) {
      const liveBefore = await liveGeneration(db, projection.name);
      const canVerify = Boolean(options.verify && liveBefore && liveBefore.version === projection.version);
      let target =
        canVerify && liveBefore ? maxPosition(liveBefore.checkpoint, checkpoint) : await store.headPosition();
      // A deletion takes the stream's events out of the log when it commits, but its `StreamDeleted` is readable in
      // `$all` only once every older transaction on the server has ended. Compared before it, the rebuilt tables
      // would lack the stream while the live ones still hold it: compare past the newest deletion, and again if one
      // commits while the events are read.
      const deletion = canVerify ? await newestDeletion(store) : undefined;
      if (deletion?.position && isAfter(deletion.position, target)) {
        target = deletion.position;
        await untilReadable(store, target, DELETION_READABLE_WAIT_MS);
      }
      const forMine = await eventsBetween(store, checkpoint, target);
      const forLive =
        canVerify && liveBefore ? await eventsBetween(store, liveBefore.checkpoint, target) : [];
      if (deletion && (await store.streamRevision(DELETIONS_STREAM)) !== deletion.revision) continue;
      outcome = await db.transaction().execute(async (trx) => {
        await sql`select 1 from projections where name = ${projection.name} for update`.execute(trx);
        const live = await liveGeneration(trx, projection.name);
        const locked = live ? await readGeneration(trx, projection.name, live.generation, true) : undefined;
        if (canVerify) {
          const moved =
            live?.generation !== liveBefore?.generation ||
            !locked ||
            !liveBefore ||
            comparePositions(locked.checkpoint, liveBefore.checkpoint) !== 0;
          if (moved) return undefined;
        }
        if (forMine.length) {
          const r = await applyBatch(trx, projection, gen, forMine);
          if (r !== 'retired') checkpoint = r;
          processed += forMine.length;
        }
        let differences: TableDifference[] | undefined;
        if (canVerify && locked) {
          if (forLive.length) await applyBatch(trx, projection, locked, forLive);
          differences = await compareGenerations(trx, projection, gen.schema, locked.schema);
          if (differences.length > 0) return { swapped: false, differences, retired: [] };
        }
        const retired = await promote(trx, projection, { ...gen, checkpoint });
        return { swapped: true, differences, retired };
      });
    }
    if (!outcome) throw new Error(`could not swap ${projection.name}: the live generation kept moving`);
    if (!outcome.swapped) {
      await setGenerationStatus(db, projection.name, gen.generation, 'retired');
      await dropSchema(db, gen.schema);
    }
    for (const schema of outcome.retired) await dropSchema(db, schema);
    return {
      generation: {
        ...gen,
        status: outcome.swapped ? 'live' : 'retired',
        checkpoint,
        eventsProcessed: processed,
      },
      processed,
      seconds: (performance.now() - started) / 1000,
      swapped: outcome.swapped,
      ...(options.verify
        ? { differences: outcome.differences ?? [], comparedTables: projection.tables.length }
        : {}),
    };
  } catch (error) {
    await setGenerationStatus(db, projection.name, gen.generation, 'retired').catch(() => {});
    await dropSchema(db, gen.schema).catch(() => {});
    throw error;
  }
};

/** How long a verifying rebuild waits for a committed deletion to become readable in `$all` (ms). */
const DELETION_READABLE_WAIT_MS = 30_000;

/**
 * The revision of {@link DELETIONS_STREAM} (-1: none yet) and the position of its newest `StreamDeleted` (read as a
 * stream: committed is enough). The stream only grows, so an unchanged revision means no deletion since.
 */
const newestDeletion = async (store: EventStore): Promise<{ revision: number; position?: LogPosition }> => {
  const revision = await store.streamRevision(DELETIONS_STREAM);
  if (revision < 0) return { revision };
  const [last] = await store.readStream(DELETIONS_STREAM, { fromRevision: revision, maxCount: 1 });
  return last ? { revision, position: last.position } : { revision };
};

/**
 * Waits until `$all` can be read through `position` (`headPosition` at or past it), polling every 20 ms. Throws an
 * `Error` after `timeoutMs`: a transaction older than the event is still open on the server.
 */
const untilReadable = async (store: EventStore, position: LogPosition, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (comparePositions(await store.headPosition(), position) < 0) {
    if (Date.now() > deadline) {
      throw new Error(
        `the log is not readable through ${position.commit}/${position.prepare} after ${timeoutMs} ms: a transaction older than it is still open`,
      );
    }
    await sleep(20);
  }
};

/** Events after `from` up to and including `to`. */
const eventsBetween = async (
  store: EventStore,
  from: LogPosition,
  to: LogPosition,
): Promise<RecordedEvent[]> => {
  const out: RecordedEvent[] = [];
  let after = from;
  while (comparePositions(after, to) < 0) {
    const page = await store.readAll({ after, maxCount: 5_000 });
    if (page.events.length === 0) break;
    for (const e of page.events) {
      if (comparePositions(e.position, to) > 0) return out;
      out.push(e);
    }
    after = page.next;
  }
  return out;
};

/** The log's size for the progress bar, where the store can count it; undefined otherwise. */
const countEvents = async (store: EventStore): Promise<number | undefined> => {
  const n = await store.countEvents?.().catch(() => undefined);
  return n ? n : undefined;
};

/** Row-by-row comparison (`EXCEPT ALL` both ways) of every table of two generations. */
export const compareGenerations = async (
  db: Kysely<ReadModels>,
  projection: Projection,
  rebuiltSchema: string,
  liveSchema: string,
): Promise<TableDifference[]> => {
  const out: TableDifference[] = [];
  for (const table of projection.tables) {
    const a = sql.id(rebuiltSchema, table);
    const b = sql.id(liveSchema, table);
    const onlyRebuilt = await sql<
      Record<string, unknown>
    >`(select * from ${a} except all select * from ${b})`.execute(db);
    const onlyLive = await sql<
      Record<string, unknown>
    >`(select * from ${b} except all select * from ${a})`.execute(db);
    if (onlyRebuilt.rows.length || onlyLive.rows.length) {
      out.push({
        table,
        onlyInRebuilt: onlyRebuilt.rows.length,
        onlyInLive: onlyLive.rows.length,
        samples: { rebuilt: onlyRebuilt.rows.slice(0, 5), live: onlyLive.rows.slice(0, 5) },
      });
    }
  }
  return out;
};
