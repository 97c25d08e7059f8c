import { type AliasedRawBuilder, type ColumnType, sql } from 'kysely';
import type { RiskProfile } from '../domain/shared/risk-profile';
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

/**
 * The id of the `{prefix}{id}` stream a `StreamDeleted` names (`account-`, `agent-`), or undefined for an event of
 * any other stream or a deletion of another kind of stream.
 */
export const deletedIdOf = (e: RecordedEvent, prefix: string): string | undefined => {
  const stream = deletedStreamOf(e);
  return stream?.startsWith(prefix) ? stream.slice(prefix.length) : undefined;
};

/** The risk-limit columns of a read model that holds a risk profile (`accounts`, `agents`): a row's values. */
export const riskColumns = (p: RiskProfile) => ({
  max_position_size_pct: p.max_position_size_pct,
  daily_loss_limit_pct: p.daily_loss_limit_pct,
  max_open_orders: p.max_open_orders,
  max_order_size_pct: p.max_order_size_pct,
});

/** The DDL of the columns of {@link riskColumns}, in that order: integers, not null (`projections/ddl.ts`). */
export const RISK_COLUMNS = {
  max_position_size_pct: 'integer not null',
  daily_loss_limit_pct: 'integer not null',
  max_open_orders: 'integer not null',
  max_order_size_pct: 'integer not null',
} as const;

/**
 * Selections of `columns` read as text under their own names (`quantity::text as quantity`): the exact decimal
 * of a `numeric` (or `bigint`) column, which a driver would otherwise turn into a lossy number or leave as it
 * likes. Spread into a `select([...])`.
 */
export const asText = <C extends string>(...columns: C[]): AliasedRawBuilder<string, C>[] =>
  columns.map((c) => sql<string>`${sql.ref(c)}::text`.as(c));

/** {@link asText} of nullable columns: each reads as its text, or null. */
export const asNullableText = <C extends string>(...columns: C[]): AliasedRawBuilder<string | null, C>[] =>
  columns.map((c) => sql<string | null>`${sql.ref(c)}::text`.as(c));
