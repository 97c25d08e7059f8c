import type { EventStore, RecordedEvent } from '../ports/event-store';
import type { SnapshotHistoryEntry, SnapshotStore, StoredSnapshot } from '../ports/snapshot-store';

/**
 * A fold of the recorded events (metadata included, which the decider's `evolve` never sees) kept beside the
 * state in the command handler's cache and written with each snapshot at the same revision (column `annex`). For a
 * wallet: the latest business time folded and each symbol's last fill (`commands/wallet-time-travel.ts`), so time
 * travel can start from the snapshot. Values are immutable (`evolve` returns a new one when it changes anything).
 */
export interface SnapshotAnnex<Annex> {
  initial(): Annex;
  evolve(annex: Annex, event: RecordedEvent): Annex;
  encode(annex: Annex): string;
  decode(text: string): Annex;
  /**
   * The latest business time folded into `annex` (epoch ms), or null: the time a historical snapshot is indexed
   * by (`SnapshotHistoryEntry.at`). Without it, no history of snapshots is kept.
   */
  timeOf?(annex: Annex): number | null;
}

/** How a state is written to and read from a snapshot, and under which schema (`domain/wallet/snapshot.ts`). */
export interface SnapshotCodec<State, Annex = unknown> {
  /** Schema and version of the state (`wallet@1`): snapshots of any other are ignored. */
  schema: string;
  encode(state: State): string;
  decode(text: string): State;
  /**
   * The annex kept with the state, if any. A snapshot without one (written before it existed) is then ignored by
   * loads like one of another schema, and rewritten with one by the next cold load.
   */
  annex?: SnapshotAnnex<Annex>;
}

/** Options of {@link Snapshotter}. */
export interface SnapshotOptions<State, Annex = unknown> {
  store: SnapshotStore;
  codec: SnapshotCodec<State, Annex>;
  /** A snapshot is taken each time a stream's event count crosses a multiple of this (≥ 1). */
  every: number;
  /**
   * The spacing of the sparse history of older snapshots kept for time travel (`SnapshotHistoryEntry`): the first
   * snapshot written past each multiple of this many events is kept for good. Default 10 × `every`; 0: none.
   * Only with an annex that has a time (`SnapshotAnnex.timeOf`).
   */
  historyEvery?: number;
  /** Told a snapshot that could not be read, decoded or written (the load replays; nothing else happens). */
  onError?: (error: unknown, streamId: string) => void;
}

/** A snapshot as a load uses it: the decoded state (and annex), its revision and the hash of its last event. */
export interface LoadedSnapshot<State, Annex = unknown> {
  state: State;
  /** The decoded annex (undefined when the codec has none). */
  annex: Annex | undefined;
  revision: number;
  eventHash: string;
}

/**
 * `row` as a load uses it, when usable: of `codec`'s schema, with an annex when the codec has one. Undefined when
 * it is not; throws when its text cannot be decoded.
 */
export const decodeSnapshot = <State, Annex>(
  codec: SnapshotCodec<State, Annex>,
  row: StoredSnapshot | undefined,
): LoadedSnapshot<State, Annex> | undefined => {
  if (!row || row.schema !== codec.schema) return undefined;
  const fold = codec.annex;
  if (fold && row.annex === undefined) return undefined;
  return {
    state: codec.decode(row.state),
    annex: fold ? fold.decode(row.annex!) : undefined,
    revision: row.revision,
    eventHash: row.eventHash,
  };
};

/**
 * The events after `snapshot` (at most `maxCount - 1` of them when given), read together with the snapshot's own
 * event so a start from it costs no extra round trip; undefined when that event is no longer the log's (another
 * hash, or missing: the snapshot belongs to another history and must not be used).
 */
export const eventsAfterSnapshot = async (
  store: EventStore,
  streamId: string,
  snapshot: { revision: number; eventHash: string },
  maxCount?: number,
): Promise<RecordedEvent[] | undefined> => {
  const events = await store.readStream(streamId, {
    fromRevision: snapshot.revision,
    ...(maxCount !== undefined ? { maxCount } : {}),
  });
  const first = events[0];
  if (first?.revision !== snapshot.revision || first.metadata.hash !== snapshot.eventHash) return undefined;
  return events.slice(1);
};

/** A state to write: the fold up to `revision` (whose event has `eventHash`) and the annex at the same revision. */
interface Pending<State, Annex> {
  state: State;
  annex: Annex | undefined;
  revision: number;
  eventHash: string;
}

/**
 * The spacing of the sparse history of older snapshots for a snapshot interval of `every` events: 10 × `every`
 * (docs/architecture.md, "History of older snapshots"); 0 when snapshots are off.
 */
export const historySpacing = (every: number): number => 10 * every;

/** `pending` encoded with `codec` as the stored snapshot of `streamId`. */
const storedSnapshot = <State, Annex>(
  codec: SnapshotCodec<State, Annex>,
  streamId: string,
  pending: Pending<State, Annex>,
): StoredSnapshot => ({
  streamId,
  schema: codec.schema,
  revision: pending.revision,
  eventHash: pending.eventHash,
  state: codec.encode(pending.state),
  ...(codec.annex && pending.annex !== undefined ? { annex: codec.annex.encode(pending.annex) } : {}),
});

/**
 * Where a snapshot up to `revision` with `annex` goes into the sparse history of spacing `spacing` (events), or
 * undefined: no spacing (0), no time in the annex, or bucket 0 (the first `spacing` events need none: the fold
 * from event 0 is as short).
 */
const historyEntry = <State, Annex>(
  codec: SnapshotCodec<State, Annex>,
  spacing: number,
  revision: number,
  annex: Annex | undefined,
): SnapshotHistoryEntry | undefined => {
  const timeOf = codec.annex?.timeOf;
  if (!spacing || !timeOf || annex === undefined) return undefined;
  const bucket = Math.floor((revision + 1) / spacing);
  const at = timeOf(annex);
  return bucket >= 1 && at !== null ? { bucket, at } : undefined;
};

/** A historical snapshot to keep: the snapshot and its place in the history (`SnapshotStore.writeHistory`). */
export interface HistoryOffer {
  snapshot: StoredSnapshot;
  history: SnapshotHistoryEntry;
}

/**
 * Collects, during a fold of a stream from some revision on, the state at the first event of each bucket of the
 * sparse history (revision `b × spacing − 1`, b ≥ 1) that the fold passes, encoded at once (the state may be
 * folded on in place), for {@link SnapshotStore.writeHistory}. How a history written only going forward (since
 * migration 0010, or since a state version bump) is filled in for the older part of a stream: by the first fold
 * that passes it (`portfolio?as_of=` far back). Bounded by the fold: one offer per `spacing` events folded.
 */
export class HistoryCollector<State, Annex> {
  /** The offers collected so far, in revision order. */
  readonly offers: HistoryOffer[] = [];

  constructor(
    private readonly codec: SnapshotCodec<State, Annex>,
    private readonly streamId: string,
    /** The history's spacing in events (≥ 1; `historySpacing`). */
    private readonly spacing: number,
  ) {
    if (!Number.isInteger(spacing) || spacing < 1)
      throw new RangeError(`snapshot history spacing must be a positive integer, got ${spacing}`);
  }

  /** Told the state and annex after folding the event at `revision` (whose hash is `eventHash`). */
  folded(state: State, annex: Annex | undefined, revision: number, eventHash: string): void {
    if ((revision + 1) % this.spacing !== 0) return;
    const history = historyEntry(this.codec, this.spacing, revision, annex);
    if (!history) return;
    const snapshot = storedSnapshot(this.codec, this.streamId, { state, annex, revision, eventHash });
    this.offers.push({ snapshot, history });
  }
}

/**
 * The snapshot policy of one decider's streams (docs/architecture.md, "Snapshots"): reads the stream's snapshot
 * of the current schema for a cold load, and takes one after an append or a load that moved the stream across a
 * multiple of `every` events (or folded `every` events or more beyond its snapshot: the lazy rebuild after a
 * version bump). Each write past a multiple of `historyEvery` events also offers the snapshot to the stream's
 * sparse history (the store keeps the first of each bucket) for time travel. Writes run after the command answered (a macrotask later), one at a time per stream (a newer
 * state waiting replaces an older one), and their failures are only reported: a snapshot is a cache.
 */
export class Snapshotter<State, Annex = unknown> {
  private readonly writing = new Map<string, Promise<void>>();
  private readonly waiting = new Map<string, Pending<State, Annex>>();

  private readonly historyEvery: number;

  constructor(private readonly options: SnapshotOptions<State, Annex>) {
    if (!Number.isInteger(options.every) || options.every < 1)
      throw new RangeError(`snapshot interval must be a positive integer, got ${options.every}`);
    this.historyEvery = options.historyEvery ?? historySpacing(options.every);
    if (!Number.isInteger(this.historyEvery) || this.historyEvery < 0)
      throw new RangeError(`snapshot history spacing must be a natural number, got ${options.historyEvery}`);
  }

  /** The annex of a stream with no events (undefined when the codec has none). */
  initialAnnex(): Annex | undefined {
    return this.options.codec.annex?.initial();
  }

  /** `annex` after `event` (undefined when the codec has none). */
  evolveAnnex(annex: Annex | undefined, event: RecordedEvent): Annex | undefined {
    const fold = this.options.codec.annex;
    return fold ? fold.evolve(annex as Annex, event) : undefined;
  }

  /** The stream's usable snapshot (current schema, with its annex if the codec has one, decodable), or undefined. Never throws. */
  async read(streamId: string): Promise<LoadedSnapshot<State, Annex> | undefined> {
    try {
      return decodeSnapshot(this.options.codec, await this.options.store.read(streamId));
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

  /**
   * Schedules writing `state` and `annex` (the folds up to `revision`, whose event has `eventHash`) off the
   * caller's path.
   */
  take(streamId: string, state: State, annex: Annex | undefined, revision: number, eventHash: string): void {
    const queued = this.waiting.get(streamId);
    if (!queued || queued.revision < revision)
      this.waiting.set(streamId, { state, annex, revision, eventHash });
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
          await this.options.store.write(
            storedSnapshot(this.options.codec, streamId, next),
            historyEntry(this.options.codec, this.historyEvery, next.revision, next.annex),
          );
        } catch (error) {
          this.options.onError?.(error, streamId);
        }
      }
    } finally {
      this.writing.delete(streamId);
    }
  }
}
