import { type Kysely, sql } from 'kysely';
import type { DatabaseAvailability } from '../db/availability';
import { DatabaseUnavailableError, isConnectionError } from '../db/connection-errors';
import type { Database } from '../db/schema';

/** What recovery needs to know of one append of a batch. */
export interface RecoverableAppend {
  streamId: string;
  /** >= 0 exact revision, -1 no stream, -2 any, -3 stream exists (as `append_events_batch` takes it). */
  expected: number;
  /** The event ids it sent (lower-case UUIDs), in order. */
  ids: string[];
}

/** A row of `append_events_batch`: an appended event, or the conflict of one append. */
export interface BatchRow {
  o_append: number;
  o_conflict: boolean;
  o_revision: string;
  o_global_position: string | null;
  o_transaction_id: string | null;
  o_prev_hash: string | null;
  o_hash: string | null;
  o_recorded_at: Date | string | null;
}

/** What became of one append of a batch. */
export type AppendOutcome = { conflict: false; rows: BatchRow[] } | { conflict: true; actual: number };

/** How long an append whose connection was lost waits for the database before answering 503 (ms). */
export const APPEND_RECOVERY_MS = 10_000;

/**
 * Finds which appends of a batch are in the log, by stream and event id (one query). An append is stored whole
 * or not at all (its batch is one transaction), so the answer per append is all of its rows or none.
 */
const findStored = async <A extends RecoverableAppend>(
  db: Kysely<Database>,
  appends: readonly A[],
): Promise<(BatchRow[] | undefined)[]> => {
  const streams: string[] = [];
  const ids: string[] = [];
  const fromRevision: number[] = [];
  const index: number[] = [];
  appends.forEach((a, k) => {
    for (const id of a.ids) {
      streams.push(a.streamId);
      ids.push(id);
      fromRevision.push(a.expected >= 0 ? a.expected + 1 : 0);
      index.push(k + 1);
    }
  });
  const { rows } = await sql<BatchRow & { event_id: string }>`
    select w.k as o_append, false as o_conflict, e.revision::text as o_revision,
           e.global_position::text as o_global_position, e.transaction_id::text as o_transaction_id,
           e.metadata->>'prev_hash' as o_prev_hash, e.metadata->>'hash' as o_hash, e.recorded_at as o_recorded_at,
           e.event_id::text as event_id
    from unnest(${streams}::text[], ${ids}::uuid[], ${fromRevision}::bigint[], ${index}::int[]) as w(s, id, r, k)
    join events e on e.stream_id = w.s and e.revision >= w.r and e.event_id = w.id
    order by w.k, e.revision`.execute(db);
  const out: (BatchRow[] | undefined)[] = appends.map(() => undefined);
  for (const r of rows) {
    const k = r.o_append - 1;
    const { event_id: _, ...row } = r;
    const found = out[k] ?? [];
    found.push(row);
    out[k] = found;
  }
  appends.forEach((a, k) => {
    const found = out[k];
    if (found && found.length !== a.ids.length) {
      throw new Error(`append to ${a.streamId}: ${found.length} of its ${a.ids.length} events are stored`);
    }
  });
  return out;
};

/**
 * Settles a batch of appends whose connection was lost before its commit was confirmed (issue 16, item 1): the
 * commit may or may not have happened. Once the database answers, it looks the appends' event ids up: stored, the
 * batch committed and each append gets its stored rows (as the lost answer would have said); not stored, nothing
 * of the batch committed (one transaction) and it is sent again with the same ids and expected revisions — an
 * append of that resend that meets a conflict is looked up once more, in case the first attempt's commit landed
 * meanwhile. So a lost connection neither loses an acknowledged append nor writes one twice.
 *
 * Throws {@link DatabaseUnavailableError} (with `outcomeUnknown`) when the database stays away past `waitMs`.
 */
export const recoverBatch = async <A extends RecoverableAppend>(
  deps: {
    db: Kysely<Database>;
    availability: DatabaseAvailability;
    send: (
      appends: A[],
    ) => Promise<({ conflict: false; rows: BatchRow[] } | { conflict: true; actual: number })[]>;
  },
  appends: A[],
  cause: unknown,
  waitMs = APPEND_RECOVERY_MS,
): Promise<AppendOutcome[]> => {
  const deadline = Date.now() + waitMs;
  let lastError = cause;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0 || !(await deps.availability.waitUntilAvailable(left))) {
      throw new DatabaseUnavailableError(
        'the database is unavailable; the write may or may not have been recorded',
        1,
        true,
        { cause: lastError },
      );
    }
    try {
      const stored = await findStored(deps.db, appends);
      if (stored.every((s) => s !== undefined)) return stored.map((rows) => ({ conflict: false, rows }));
      if (stored.some((s) => s !== undefined)) {
        throw new Error('a lost batch is stored in part: appends of one transaction disagree');
      }
      const outcomes = await deps.send(appends);
      const conflicted = outcomes.flatMap((o, k) => (o.conflict ? [k] : []));
      if (conflicted.length === 0) return outcomes;
      const again = await findStored(
        deps.db,
        conflicted.map((k) => appends[k]!),
      );
      conflicted.forEach((k, j) => {
        const rows = again[j];
        if (rows) outcomes[k] = { conflict: false, rows: rows.map((r) => ({ ...r, o_append: k + 1 })) };
      });
      return outcomes;
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      deps.availability.report(error);
      lastError = error;
    }
  }
};
