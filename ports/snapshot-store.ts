/**
 * Aggregate snapshots (docs/architecture.md, "Snapshots"): a cache of a stream's folded state beside the log, never
 * a source of truth. A load starts from the newest snapshot of the current schema whose last event is still the
 * log's event at that revision (same hash), and folds only the events after it; anything else (no row, another
 * schema, another hash, unreadable text) is a full replay. Adapters: `src/eventstore/snapshots.ts` (the
 * `snapshots` table of the PostgreSQL or PGlite database, also used beside EventStoreDB).
 */
export interface StoredSnapshot {
  streamId: string;
  /** The state's schema and version (`wallet@1`): a snapshot of another one is ignored. */
  schema: string;
  /** Revision of the last event folded into `state` (0-based). */
  revision: number;
  /** `metadata.hash` of that event: the snapshot belongs to exactly that history. */
  eventHash: string;
  /** The encoded state (`domain/shared/state-codec.ts`). */
  state: string;
  /**
   * The encoded annex at the same revision (`commands/snapshots.ts`, `SnapshotAnnex`: for a wallet the latest
   * business time folded and each symbol's last fill), or undefined in a snapshot written without one.
   */
  annex?: string;
}

/**
 * Where a snapshot also goes into the stream's sparse history of older snapshots (time travel far in the past,
 * docs/architecture.md "Snapshots"): the first snapshot written in each `bucket` (its revision's multiple of the
 * history spacing) is kept there for good, indexed by `at` (the annex's latest business time, epoch ms).
 */
export interface SnapshotHistoryEntry {
  /** `floor((revision + 1) / spacing)`: one historical snapshot per stream, schema and bucket (≥ 1). */
  bucket: number;
  /** The latest business time folded into the snapshot (epoch ms): it is a valid start for any time at or after. */
  at: number;
}

/** Where snapshots are kept: the newest per stream, and a sparse history of older ones. */
export interface SnapshotStore {
  /** The stream's snapshot, whatever its schema; undefined when none. */
  read(streamId: string): Promise<StoredSnapshot | undefined>;
  /**
   * Keeps `snapshot` as the stream's snapshot unless the one stored has the same schema and a later revision
   * (writes of several processes may arrive in any order), or the same revision and already an annex. With
   * `history`, also keeps it as the stream's historical snapshot of that bucket unless one is already there.
   */
  write(snapshot: StoredSnapshot, history?: SnapshotHistoryEntry): Promise<void>;
  /** Every snapshot of streams whose id starts with `prefix`, in stream order (audits). */
  list(prefix: string): AsyncIterable<StoredSnapshot>;
  /**
   * The stream's newest historical snapshot of `schema` whose `at` is at or before `at` (epoch ms), or undefined:
   * the latest start for a fold up to that time. One index lookup, whatever the stream's length.
   */
  readHistory(streamId: string, schema: string, at: number): Promise<StoredSnapshot | undefined>;
  /**
   * Keeps each of `offers` as its stream's historical snapshot of its bucket unless one is already there (the
   * first one written stays); the newest snapshot is not touched. How the older part of a history is filled in by
   * a fold that passes it (`commands/snapshots.ts`, `HistoryCollector`).
   */
  writeHistory(offers: readonly { snapshot: StoredSnapshot; history: SnapshotHistoryEntry }[]): Promise<void>;
  /** Every historical snapshot of the stream (any schema), in revision order (audits; a few per 10,000 events). */
  history(streamId: string): Promise<StoredSnapshot[]>;
}
