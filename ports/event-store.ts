/**
 * The event store port (ARCHITECTURE §5). Adapters: PostgreSQL (on a `pg` pool or PGlite) and
 * EventStoreDB/KurrentDB. One contract test suite (`test/eventstore/contract.ts`) runs against each.
 */

/**
 * A position in the global log (`$all`), ordered lexicographically by `(commit, prepare)`.
 * PostgreSQL: `commit` = the appending transaction's id (xid8), `prepare` = `global_position`.
 * EventStoreDB: its own commit and prepare positions. `START` precedes every event.
 */
export interface LogPosition {
  commit: bigint;
  prepare: bigint;
}

/** The position before the first event. */
export const START: LogPosition = Object.freeze({ commit: 0n, prepare: 0n });

/** Compares two positions: negative when `a` is before `b`, 0 when equal, positive after. */
export const comparePositions = (a: LogPosition, b: LogPosition): number =>
  a.commit !== b.commit
    ? a.commit < b.commit
      ? -1
      : 1
    : a.prepare < b.prepare
      ? -1
      : a.prepare > b.prepare
        ? 1
        : 0;

/** Whether `a` is past `b` in the log's order ({@link comparePositions}). */
export const isAfter = (a: LogPosition, b: LogPosition): boolean => comparePositions(a, b) > 0;

/** The later of two positions. */
export const maxPosition = (a: LogPosition, b: LogPosition): LogPosition =>
  comparePositions(a, b) >= 0 ? a : b;

/** Serialises a position as `"commit/prepare"` (used in checkpoints on the wire and in the CLI). */
export const formatPosition = (p: LogPosition): string => `${p.commit}/${p.prepare}`;

/**
 * Expected revision of a stream for an append (optimistic concurrency, ARCHITECTURE §2.4). Revisions are
 * 0-based: a stream with one event is at revision 0.
 * - a number: the stream must be exactly at that revision;
 * - `'no_stream'`: the stream must not exist; `'stream_exists'`: it must; `'any'`: no check.
 */
export type ExpectedRevision = number | 'no_stream' | 'stream_exists' | 'any';

/** Caller-supplied metadata of an event; the store adds ids, positions and the hash chain. */
export interface EventMetadataInput {
  /** Business time (virtual in backtests), ISO 8601. Defaults to the wall clock. */
  occurred_at?: string;
  /** The request or command that caused the event. */
  causation_id?: string;
  /** One id per command (UUID): the events of one append share it. */
  command_id?: string;
  /** Groups events of one request/workflow (the HTTP request id). */
  correlation_id?: string;
  /** Account or agent id that issued the command, or `system`. */
  actor?: string;
  /** Schema version of the event's `data`; 1 when absent. */
  schema_version?: number;
  [key: string]: unknown;
}

/** An event to append. `data` must be JSON: money as decimal strings, never floats. */
export interface NewEvent<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
  /** Optional id (UUID); generated when absent. Used to make retried appends recognisable. */
  eventId?: string;
  metadata?: EventMetadataInput;
  /**
   * The event's whole data as its canonical JSON (`canonicalJson` of `src/eventstore/hash-chain.ts`), UTF-8 encoded,
   * made where the event was decided: a backtest batch's `BacktestStepped` encoded on its stepping thread and
   * transferred, not copied, to the request thread (issue 24). When given it is what is stored, hashed and read back
   * (the caller guarantees it is exactly that text of the event's data), and `data` may leave out keys the caller's
   * thread never reads (the packed equity, `BACKTEST_STEPPED_ELIDED.key`); the append serialises nothing of it. The
   * PostgreSQL adapter on a server sends these bytes as they are; on PGlite it decodes them to the text, and the
   * ESDB adapter decodes and parses them at once. The events an append answers carry the whole data either way (the
   * PostgreSQL adapter parses it from these bytes when it is first read).
   */
  dataText?: Uint8Array;
}

/** Metadata of a recorded event: the caller's plus `prev_hash`/`hash` (SHA-256 chain per stream). */
export interface RecordedMetadata extends EventMetadataInput {
  occurred_at: string;
  /** Hash of the previous event of the stream ('' for the first). */
  prev_hash: string;
  /** SHA-256 (hex) over this event, chained to `prev_hash`; see `src/eventstore/hash-chain.ts`. */
  hash: string;
}

/** An event as stored. */
export interface RecordedEvent<Type extends string = string, Data = unknown> {
  eventId: string;
  streamId: string;
  /** 0-based position of the event inside its stream. */
  revision: number;
  /** Position in `$all`. */
  position: LogPosition;
  type: Type;
  data: Data;
  metadata: RecordedMetadata;
  /** Wall-clock time the store recorded the event. */
  recordedAt: Date;
  /**
   * Keys of `data` the reader left out (absent from `data`; the stored event still has them): set only on events
   * a subscription of a store created with elided fields was handed ({@link ElidedField}), never by `readAll`,
   * `readStream` or an append. A consumer that needs such a value reads it where the event is stored, by `position`
   * (the PostgreSQL adapter's `events` table, `global_position`: the only adapter that elides; the `backtests`
   * projection copies it in SQL).
   */
  elided?: readonly string[];
}

/**
 * A large field of one event type that subscriptions may be handed without (a store option, e.g. the PostgreSQL
 * adapter's `elide`): `key` is left out of the `data` of events of type `type` whose data also has `onlyWith`, and
 * listed in their {@link RecordedEvent.elided}. For consumers that do not read the value, or read it in the store.
 */
export interface ElidedField {
  type: string;
  key: string;
  onlyWith: string;
}

/** What a successful append returns. */
export interface AppendResult {
  /** Revision of the last appended event (the stream's new revision). */
  nextRevision: number;
  /** `$all` position of the last appended event: wait for projections to reach it (read your writes). */
  position: LogPosition;
  /** Hash of the last appended event (the chain's new head). */
  lastHash: string;
  /** The appended events as recorded. */
  events: RecordedEvent[];
}

/** Options of {@link EventStore.readStream}. */
export interface ReadStreamOptions {
  /** First revision to return (inclusive); default 0. */
  fromRevision?: number;
  /** At most this many events; default all. */
  maxCount?: number;
}

/** Options of {@link EventStore.readAll}. */
export interface ReadAllOptions {
  /** Exclusive lower bound; default {@link START}. */
  after?: LogPosition;
  /** Batch size; default 1,000. */
  maxCount?: number;
}

/** A page of `$all`. `next` is the checkpoint to resume after (the last event's position, or `after`). */
export interface ReadAllResult {
  events: RecordedEvent[];
  next: LogPosition;
}

/** A live subscription to `$all`: batches of events in log order, first the history after `after`, then live. */
export interface AllSubscription extends AsyncIterable<RecordedEvent[]> {
  /** Stops the subscription; the iterator then ends. */
  close(): Promise<void>;
}

/** Options of {@link EventStore.subscribeToAll}. */
export interface SubscribeOptions {
  after?: LogPosition;
  /** Largest batch handed out at once; default 1,000. */
  maxBatch?: number;
}

/** Raised when the expected revision does not match the stream's actual revision. */
export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    /** The stream's revision at the time, -1 when it did not exist. */
    readonly actual: number,
  ) {
    super(`wrong expected revision for stream ${streamId}: expected ${String(expected)}, actual ${actual}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/** Raised by `readStream` with `{ throwIfMissing: true }` and by `deleteStream` of an unknown stream. */
export class StreamNotFoundError extends Error {
  constructor(readonly streamId: string) {
    super(`stream not found: ${streamId}`);
    this.name = 'StreamNotFoundError';
  }
}

/** Name of the stream where deletions are recorded (`StreamDeleted` events) so projections can react. */
export const DELETIONS_STREAM = 'deleted-streams';

/** Data of the `StreamDeleted` event appended to {@link DELETIONS_STREAM} by `deleteStream`. */
export interface StreamDeletedData {
  stream_id: string;
  /** Revision of the stream's last event when it was deleted. */
  last_revision: number;
  deleted_at: string;
}

/**
 * The event store (ARCHITECTURE §5). Every adapter passes `test/eventstore/contract.ts`.
 */
export interface EventStore {
  /** Adapter name for health and logs (`postgres`, `pglite`, `esdb`). */
  readonly name: string;
  /**
   * Appends events atomically to one stream. Throws {@link WrongExpectedRevisionError} when
   * `expectedRevision` does not match; nothing is written then.
   */
  append(
    streamId: string,
    events: NewEvent[],
    options?: { expectedRevision?: ExpectedRevision },
  ): Promise<AppendResult>;
  /** Events of one stream in revision order; `[]` when the stream does not exist. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** The stream's current revision, -1 when it does not exist. */
  streamRevision(streamId: string): Promise<number>;
  /**
   * The newest event of the stream whose `data.idempotency_key` equals `key` (how an event records the idempotency
   * key of the command that appended it), or undefined. Events recorded before `notBefore` (business time,
   * `metadata.occurred_at`) may be left out: a store that scans stops there. PostgreSQL/PGlite: one lookup of an
   * index (migration 0008), whatever the stream's length; EventStoreDB: a backward read of the stream down to
   * `notBefore`. Sees every event committed before the call.
   */
  findByIdempotencyKey(
    streamId: string,
    key: string,
    options?: { notBefore?: Date },
  ): Promise<RecordedEvent | undefined>;
  /** A page of the global log after `after`, in `(commit, prepare)` order, never skipping a late commit. */
  readAll(options?: ReadAllOptions): Promise<ReadAllResult>;
  /** Catch-up then live subscription to `$all`; each committed event is delivered exactly once, in order. */
  subscribeToAll(options?: SubscribeOptions): AllSubscription;
  /** Position of the newest readable event (for lag), {@link START} when the log is empty. */
  headPosition(): Promise<LogPosition>;
  /**
   * The highest log position other processes announced to this one (PostgreSQL: `NOTIFY` after their commits,
   * carrying the position in full; this store's own announcements are not counted), {@link START} before any; on a PostgreSQL
   * server also the log's head (`headPosition`, own appends included) when listening starts and when a lost LISTEN
   * connection is subscribed again, since appends before then were announced to no one here: how far this process
   * knows the log to reach without reading it. The first call starts listening when nothing did yet (a
   * process without subscriptions). No statement: a read of a field. Absent where the store hears no one else
   * (EventStoreDB).
   */
  heardHead?(): LogPosition;
  /** How many events the log holds, where the store can count them cheaply (progress bars); else absent. */
  countEvents?(): Promise<number>;
  /**
   * How many readable events follow `after` (those {@link readAll} would give after it), counting at most `limit`:
   * a projection's lag, counted without reading the events, where the store can; else absent (readers page).
   */
  countEventsAfter?(after: LogPosition, limit: number): Promise<number>;
  /**
   * Deletes a stream and all its events (hard delete: key material in them is destroyed) and records a
   * `StreamDeleted` event in {@link DELETIONS_STREAM}; resolves to that event's position (wait for read
   * models on it). Throws {@link StreamNotFoundError} when absent.
   */
  deleteStream(
    streamId: string,
    options?: { expectedRevision?: ExpectedRevision },
  ): Promise<{ position: LogPosition }>;
  /** Releases connections and stops subscriptions. */
  close(): Promise<void>;
}

/**
 * The events of `streamId` from `fromRevision` (default 0) on, as the pages `readStream` returns them, `pageSize`
 * events each, so that a fold over a stream of millions of events holds one page, not the stream (issue 20: a
 * whole 2 M-event stream read at once ran a process out of its heap). `firstPage`, when given, is a page already
 * read from `fromRevision` (e.g. with a snapshot) and is yielded instead of reading it again. Stops after the
 * first page shorter than `pageSize` (the stream's end at the time of that read); stopping early (`break`,
 * `return`) reads nothing more. Throws what `readStream` throws.
 */
export async function* readStreamPages(
  store: Pick<EventStore, 'readStream'>,
  streamId: string,
  options: { fromRevision?: number; pageSize: number; firstPage?: RecordedEvent[] },
): AsyncGenerator<RecordedEvent[], void, undefined> {
  const { pageSize } = options;
  let from = options.fromRevision ?? 0;
  let page = options.firstPage;
  for (;;) {
    page ??= await store.readStream(streamId, { fromRevision: from, maxCount: pageSize });
    yield page;
    const last = page.at(-1);
    if (page.length < pageSize || !last) return;
    from = last.revision + 1;
    page = undefined;
  }
}
