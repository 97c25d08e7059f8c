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

/** Where snapshots are kept: one per stream (the newest). */
export interface SnapshotStore {
  /** The stream's snapshot, whatever its schema; undefined when none. */
  read(streamId: string): Promise<StoredSnapshot | undefined>;
  /**
   * Keeps `snapshot` as the stream's snapshot unless the one stored has the same schema and a later revision
   * (writes of several processes may arrive in any order), or the same revision and already an annex.
   */
  write(snapshot: StoredSnapshot): Promise<void>;
  /** Every snapshot of streams whose id starts with `prefix`, in stream order (audits). */
  list(prefix: string): AsyncIterable<StoredSnapshot>;
}
