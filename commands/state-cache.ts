/** A cached state, its revision and the snapshot annex folded to the same revision (undefined without one). */
export interface CachedState<State> {
  state: State;
  revision: number;
  /**
   * Hash (`metadata.hash`) of the stream's event at `revision`, the last one folded: a load checks that the log
   * still holds that event, so a stream another process deleted (or deleted and re-created) is not taken for the
   * cached one.
   */
  hash: string;
  annex: unknown;
}

/**
 * A bounded LRU of aggregate states with their stream revision (ARCHITECTURE §4): the next command on a
 * stream reads only the events after the cached revision. States are immutable values (deciders' `evolve`
 * returns new objects), so sharing them is safe.
 */
export class StateCache<State> {
  private readonly entries = new Map<string, CachedState<State>>();

  /** @param capacity most streams kept (least recently used evicted first). */
  constructor(readonly capacity = 10_000) {}

  /** The cached state of `streamId` (marked most recently used), or undefined. */
  get(streamId: string): CachedState<State> | undefined {
    const entry = this.entries.get(streamId);
    if (entry) {
      // Re-insert to mark it most recently used (Map keeps insertion order).
      this.entries.delete(streamId);
      this.entries.set(streamId, entry);
    }
    return entry;
  }

  /**
   * Caches `state` at `revision`, whose event has `hash`, with the snapshot annex at the same revision
   * (`commands/snapshots.ts`).
   */
  set(streamId: string, state: State, revision: number, hash: string, annex?: unknown): void {
    this.entries.delete(streamId);
    this.entries.set(streamId, { state, revision, hash, annex });
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  /** Forgets `streamId`'s state. */
  delete(streamId: string): void {
    this.entries.delete(streamId);
  }

  /** Forgets every state. */
  clear(): void {
    this.entries.clear();
  }

  /** Streams cached. */
  get size(): number {
    return this.entries.size;
  }
}
