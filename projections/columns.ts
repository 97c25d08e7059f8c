import type { ColumnType } from 'kysely';
import { DELETIONS_STREAM, type RecordedEvent, type StreamDeletedData } from '../ports/event-store';

/** A `timestamptz` column: read as a `Date`, written as an ISO-8601 string (event data). */
export type Timestamp = ColumnType<Date, string, string>;
/** A nullable `timestamptz` column. */
export type NullableTimestamp = ColumnType<Date | null, string | null, string | null>;
/** A `numeric` column: a decimal string both ways (pg and PGlite return numerics as strings). */
export type Numeric = string;
/** A `jsonb` column of `T`, written as its JSON text. */
export type Json<T> = ColumnType<T, string, string>;

/**
 * The stream a `StreamDeleted` of the deletions stream names (`stream_id`), or undefined for an event of any other
 * stream. A projection removes the rows of that stream's resource (ARCHITECTURE §6, deletion).
 */
export const deletedStreamOf = (e: RecordedEvent): string | undefined =>
  e.streamId === DELETIONS_STREAM ? (e.data as StreamDeletedData).stream_id : undefined;
