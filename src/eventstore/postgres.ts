import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { DatabaseHandle } from '../db/database';
import type { Database } from '../db/schema';
import { canonicalJson } from './hash-chain';
import { LiveReader } from './live-reader';
import {
  type AllSubscription,
  type AppendResult,
  comparePositions,
  DELETIONS_STREAM,
  type EventStore,
  type ExpectedRevision,
  type LogPosition,
  type NewEvent,
  type ReadAllOptions,
  type ReadAllResult,
  type ReadStreamOptions,
  type RecordedEvent,
  type RecordedMetadata,
  START,
  StreamNotFoundError,
  type SubscribeOptions,
  WrongExpectedRevisionError,
} from './port';

/** NOTIFY channel the adapter signals after each commit; the payload is the last global position. */
export const EVENTS_CHANNEL = 'events_appended';

/**
 * Sends the post-commit wake-up to other processes: at most one NOTIFY in flight, always carrying the highest
 * position committed so far, so a burst of appends costs a few NOTIFYs. Each runs with
 * `synchronous_commit = off` (it carries no data, only a hint). PGlite is single-process: nothing to send.
 */
const createNotifier = (handle: DatabaseHandle) => {
  let inFlight = false;
  let pending: bigint | undefined;
  const send = async (): Promise<void> => {
    while (pending !== undefined) {
      const position = pending;
      pending = undefined;
      try {
        await handle.db.transaction().execute(async (trx) => {
          await sql`set local synchronous_commit = off`.execute(trx);
          await sql`select pg_notify(${EVENTS_CHANNEL}, ${position.toString()})`.execute(trx);
        });
      } catch {
        // A lost wake-up only delays readers until their idle poll.
      }
    }
    inFlight = false;
  };
  return (position: bigint) => {
    if (handle.kind === 'pglite') return;
    if (pending === undefined || position > pending) pending = position;
    if (!inFlight) {
      inFlight = true;
      void send();
    }
  };
};

const expectedCode = (e: ExpectedRevision | undefined): number => {
  if (e === undefined || e === 'any') return -2;
  if (e === 'no_stream') return -1;
  if (e === 'stream_exists') return -3;
  if (!Number.isInteger(e) || e < 0) throw new RangeError(`invalid expected revision: ${e}`);
  return e;
};

interface EventRow {
  global_position: string;
  transaction_id: string;
  stream_id: string;
  revision: string;
  event_id: string;
  type: string;
  data: unknown;
  metadata: RecordedMetadata;
  recorded_at: Date | string;
}

const toRecorded = (r: EventRow): RecordedEvent => ({
  eventId: r.event_id,
  streamId: r.stream_id,
  revision: Number(r.revision),
  position: { commit: BigInt(r.transaction_id), prepare: BigInt(r.global_position) },
  type: r.type,
  data: r.data,
  metadata: r.metadata,
  recordedAt: r.recorded_at instanceof Date ? r.recorded_at : new Date(r.recorded_at),
});

// Output names equal the column names: ORDER BY must qualify `events.` or it would sort the text aliases.
const EVENT_COLUMNS = sql`global_position::text as global_position, transaction_id::text as transaction_id,
  stream_id, revision::text as revision, event_id::text as event_id, type, data, metadata, recorded_at`;

/**
 * The PostgreSQL event store adapter (ARCHITECTURE §5), on a `pg` pool or on PGlite.
 * - Appends go through the `append_events` function: one round trip, row lock on the stream head, optimistic
 *   concurrency, hash chain; the NOTIFY wake-up follows the commit (see `createNotifier`).
 * - `$all` is read in `(transaction_id, global_position)` order and only below
 *   `pg_snapshot_xmin(pg_current_snapshot())`, so an event whose transaction commits late is never skipped.
 * - Subscriptions are woken by LISTEN/NOTIFY and by this process's own appends, and poll as a fallback.
 */
export const createPostgresEventStore = (handle: DatabaseHandle): EventStore => {
  const db = handle.db;
  const notifyOthers = createNotifier(handle);
  const live = new LiveReader({
    readAll: (o) => readAll(o),
    listen: (onWake) => handle.listen(EVENTS_CHANNEL, (payload) => onWake(parseNotified(payload))),
  });

  const append = async (
    streamId: string,
    events: NewEvent[],
    options: { expectedRevision?: ExpectedRevision } = {},
    executor: Kysely<Database> = db,
  ): Promise<AppendResult> => {
    if (events.length === 0) throw new RangeError('append needs at least one event');
    const expected = expectedCode(options.expectedRevision);
    const ids = events.map((e) => (e.eventId ?? randomUUID()).toLowerCase());
    const metas = events.map((e) => ({
      ...e.metadata,
      occurred_at: e.metadata?.occurred_at ?? new Date().toISOString(),
    }));
    const dataTexts = events.map((e) => canonicalJson(e.data ?? null));
    const metaTexts = metas.map((m) => canonicalJson(m));
    const types = events.map((e) => e.type);
    let rows: {
      o_revision: string;
      o_global_position: string;
      o_transaction_id: string;
      o_prev_hash: string;
      o_hash: string;
      o_recorded_at: Date | string;
    }[];
    try {
      const result = await sql<(typeof rows)[number]>`
        select o_revision::text as o_revision, o_global_position::text as o_global_position, o_transaction_id,
               o_prev_hash, o_hash, o_recorded_at
        from append_events(${streamId}, ${expected}::bigint, ${ids}::uuid[], ${types}::text[], ${dataTexts}::text[],
                           ${metaTexts}::text[])`.execute(executor);
      rows = result.rows;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'EV409') {
        const actual = Number((error as { detail?: string }).detail ?? -1);
        throw new WrongExpectedRevisionError(streamId, options.expectedRevision ?? 'any', actual);
      }
      // Two first appends to a new stream race on the streams primary key: the loser sees a conflict.
      if (code === '23505') {
        if (expected === -2 && executor === db) return append(streamId, events, options, executor);
        throw new WrongExpectedRevisionError(
          streamId,
          options.expectedRevision ?? 'any',
          await streamRevision(streamId),
        );
      }
      throw error;
    }
    const recorded: RecordedEvent[] = rows.map((r, i) => ({
      eventId: ids[i]!,
      streamId,
      revision: Number(r.o_revision),
      position: { commit: BigInt(r.o_transaction_id), prepare: BigInt(r.o_global_position) },
      type: types[i]!,
      data: JSON.parse(dataTexts[i]!),
      metadata: { ...metas[i]!, prev_hash: r.o_prev_hash, hash: r.o_hash },
      recordedAt: r.o_recorded_at instanceof Date ? r.o_recorded_at : new Date(r.o_recorded_at),
    }));
    const last = recorded[recorded.length - 1]!;
    if (executor === db) {
      live.wake(last.position.prepare);
      notifyOthers(last.position.prepare);
    }
    return {
      nextRevision: last.revision,
      position: last.position,
      lastHash: last.metadata.hash,
      events: recorded,
    };
  };

  const readStream = async (streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> => {
    const from = options.fromRevision ?? 0;
    const max = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    const page = 10_000;
    const out: RecordedEvent[] = [];
    let next = from;
    while (out.length < max) {
      const want = Math.min(page, max - out.length);
      const { rows } = await sql<EventRow>`
        select ${EVENT_COLUMNS} from events
        where stream_id = ${streamId} and revision >= ${next}
        order by events.revision limit ${want}`.execute(db);
      for (const r of rows) out.push(toRecorded(r));
      if (rows.length < want) break;
      next = out[out.length - 1]!.revision + 1;
    }
    return out;
  };

  const streamRevision = async (streamId: string): Promise<number> => {
    const row = await db
      .selectFrom('streams')
      .select('revision')
      .where('stream_id', '=', streamId)
      .executeTakeFirst();
    return row ? Number(row.revision) : -1;
  };

  const readAll = async (options: ReadAllOptions = {}): Promise<ReadAllResult> => {
    const after = options.after ?? START;
    const max = options.maxCount ?? 1000;
    const { rows } = await sql<EventRow>`
      select ${EVENT_COLUMNS} from events
      where (transaction_id, global_position) > (${after.commit.toString()}::xid8, ${after.prepare.toString()}::bigint)
        and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
      order by events.transaction_id, events.global_position
      limit ${max}`.execute(db);
    const events = rows.map(toRecorded);
    return { events, next: events.length ? events[events.length - 1]!.position : after };
  };

  const headPosition = async (): Promise<LogPosition> => {
    const { rows } = await sql<{ transaction_id: string; global_position: string }>`
      select transaction_id::text as transaction_id, global_position::text as global_position from events
      where transaction_id < pg_snapshot_xmin(pg_current_snapshot())
      order by events.transaction_id desc, events.global_position desc limit 1`.execute(db);
    const r = rows[0];
    return r ? { commit: BigInt(r.transaction_id), prepare: BigInt(r.global_position) } : START;
  };

  const deleteStream = async (streamId: string, options: { expectedRevision?: ExpectedRevision } = {}) => {
    if (streamId === DELETIONS_STREAM) throw new RangeError(`${DELETIONS_STREAM} cannot be deleted`);
    const expected = options.expectedRevision;
    let position: LogPosition | undefined;
    await db.transaction().execute(async (trx) => {
      const head = await sql<{ revision: string }>`
        select revision::text as revision from streams where stream_id = ${streamId} for update`.execute(trx);
      const current = head.rows[0] ? Number(head.rows[0].revision) : -1;
      if (current === -1) throw new StreamNotFoundError(streamId);
      if (typeof expected === 'number' && expected !== current) {
        throw new WrongExpectedRevisionError(streamId, expected, current);
      }
      if (expected === 'no_stream') throw new WrongExpectedRevisionError(streamId, expected, current);
      await sql`delete from events where stream_id = ${streamId}`.execute(trx);
      await sql`delete from streams where stream_id = ${streamId}`.execute(trx);
      const result = await append(
        DELETIONS_STREAM,
        [
          {
            type: 'StreamDeleted',
            data: { stream_id: streamId, last_revision: current, deleted_at: new Date().toISOString() },
            metadata: { actor: 'system' },
          },
        ],
        {},
        trx,
      );
      position = result.position;
    });
    if (!position) throw new Error(`deleting ${streamId} recorded no StreamDeleted event`);
    live.wake(position.prepare);
    notifyOthers(position.prepare);
    return { position };
  };

  return {
    name: handle.kind,
    append: (streamId, events, options) => append(streamId, events, options),
    readStream,
    streamRevision,
    readAll,
    subscribeToAll: (options: SubscribeOptions = {}): AllSubscription => live.subscribe(options),
    headPosition,
    deleteStream,
    close: () => live.close(),
  };
};

const parseNotified = (payload: string): bigint | undefined => {
  try {
    return BigInt(payload);
  } catch {
    return undefined;
  }
};

/** True when `a` is at or after `b`. */
export const reached = (a: LogPosition, b: LogPosition): boolean => comparePositions(a, b) >= 0;
