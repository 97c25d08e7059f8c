import type { SnapshotStore } from '../ports/snapshot-store';

/** How a state is written to and read from a snapshot, and under which schema (`domain/wallet/snapshot.ts`). */
export interface SnapshotCodec<State> {
  /** Schema and version of the state (`wallet@1`): snapshots of any other are ignored. */
  schema: string;
  encode(state: State): string;
  decode(text: string): State;
}

/** Options of {@link Snapshotter}. */
export interface SnapshotOptions<State> {
  store: SnapshotStore;
  codec: SnapshotCodec<State>;
  /** A snapshot is taken each time a stream's event count crosses a multiple of this (≥ 1). */
  every: number;
  /** Told a snapshot that could not be read, decoded or written (the load replays; nothing else happens). */
  onError?: (error: unknown, streamId: string) => void;
}

/** A snapshot as a load uses it: the decoded state, its revision and the hash of its last event. */
export interface LoadedSnapshot<State> {
  state: State;
  revision: number;
  eventHash: string;
}

/**
 * The snapshot policy of one decider's streams (docs/architecture.md, "Snapshots"): reads the stream's snapshot
 * of the current schema for a cold load, and takes one after an append or a load that moved the stream across a
 * multiple of `every` events (or folded `every` events or more beyond its snapshot: the lazy rebuild after a
 * version bump). Writes run after the command answered (a macrotask later), one at a time per stream (a newer
 * state waiting replaces an older one), and their failures are only reported: a snapshot is a cache.
 */
export class Snapshotter<State> {
  private readonly writing = new Map<string, Promise<void>>();
  private readonly waiting = new Map<string, { state: State; revision: number; eventHash: string }>();

  constructor(private readonly options: SnapshotOptions<State>) {
    if (!Number.isInteger(options.every) || options.every < 1)
      throw new RangeError(`snapshot interval must be a positive integer, got ${options.every}`);
  }

  /** The stream's usable snapshot (current schema, decodable), or undefined. Never throws. */
  async read(streamId: string): Promise<LoadedSnapshot<State> | undefined> {
    try {
      const row = await this.options.store.read(streamId);
      if (!row || row.schema !== this.options.codec.schema) return undefined;
      return {
        state: this.options.codec.decode(row.state),
        revision: row.revision,
        eventHash: row.eventHash,
      };
    } catch (error) {
      this.options.onError?.(error, streamId);
      return undefined;
    }
  }

  /** True when going from revision `before` to `after` crosses a multiple of `every` events. */
  due(before: number, after: number): boolean {
    const every = this.options.every;
    return Math.floor((after + 1) / every) > Math.floor((before + 1) / every);
  }

  /** True when a load that folded from `base` (a snapshot's revision, or -1) to `revision` should leave one. */
  dueAfterLoad(base: number, revision: number): boolean {
    return revision - base >= this.options.every;
  }

  /** Schedules writing `state` (the fold up to `revision`, whose event has `eventHash`) off the caller's path. */
  take(streamId: string, state: State, revision: number, eventHash: string): void {
    const queued = this.waiting.get(streamId);
    if (!queued || queued.revision < revision) this.waiting.set(streamId, { state, revision, eventHash });
    if (!this.writing.has(streamId)) this.writing.set(streamId, this.drain(streamId));
  }

  /** Resolves when every scheduled snapshot has been written (or failed): before closing the store, in tests. */
  async idle(): Promise<void> {
    while (this.writing.size) await Promise.all([...this.writing.values()]);
  }

  private async drain(streamId: string): Promise<void> {
    // A macrotask later: the command's answer goes out before the state is encoded.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      for (let next = this.waiting.get(streamId); next; next = this.waiting.get(streamId)) {
        this.waiting.delete(streamId);
        try {
          await this.options.store.write({
            streamId,
            schema: this.options.codec.schema,
            revision: next.revision,
            eventHash: next.eventHash,
            state: this.options.codec.encode(next.state),
          });
        } catch (error) {
          this.options.onError?.(error, streamId);
        }
      }
    } finally {
      this.writing.delete(streamId);
    }
  }
}
