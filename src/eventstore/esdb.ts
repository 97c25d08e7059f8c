import { randomUUID } from 'node:crypto';
import {
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  BACKWARDS,
  END,
  START as ESDB_START,
  type AppendResult as EsdbAppendResult,
  StreamNotFoundError as EsdbStreamNotFoundError,
  EventStoreDBClient,
  excludeSystemEvents,
  FORWARDS,
  type JSONEventData,
  type JSONType,
  NO_STREAM,
  type Position,
  type ReadPosition,
  StreamDeletedError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import { backoffDelayMs } from '../../domain/shared/backoff';
import {
  type AllSubscription,
  type AppendResult,
  comparePositions,
  DELETIONS_STREAM,
  type EventMetadataInput,
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
} from '../../ports/event-store';
import { decodeDataText } from './data-text';
import { canonicalJson, hashableMetadata, linkHash } from './hash-chain';

/**
 * Key in the stored event metadata holding the event's 0-based revision in *our* numbering. EventStoreDB keeps
 * counting after a soft delete (a recreated stream starts at the old last revision + 1), while the port promises
 * that a recreated stream starts at 0 again, as it does on PostgreSQL. Storing our revision with the event lets
 * `$all` readers map it without a per-stream lookup. It is stripped from the metadata handed out, and it is not
 * part of the hash (the revision already is).
 */
const REVISION_KEY = '$ptv_revision';

/** Attempts of an append whose expectation survives a concurrent append (`any`, `stream_exists`). */
const MAX_RETRY_ATTEMPTS = 50;
/** Re-reads of just-appended events that are not visible yet (see `readBack`). */
const READ_BACK_ATTEMPTS = 5;
/** Events read per page while looking backwards for the newest non-system event. */
const HEAD_PAGE = 100;

/** Events per backward read of `findByIdempotencyKey`. */
const FIND_PAGE = 500;

/** The fields this adapter uses of the client's recorded events (stream reads and `$all` reads alike). */
interface EsdbRecord {
  streamId: string;
  id: string;
  revision: bigint;
  type: string;
  created: Date;
  data: unknown;
  metadata: unknown;
  position?: Position;
}

/** The newest event of a stream: its revision in both numberings and the head of its hash chain. */
interface StreamHead {
  esdbRevision: bigint;
  revision: number;
  hash: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Jittered exponential backoff: contenders on one stream spread out instead of colliding again in lockstep. */
const backoffMs = (attempt: number) => backoffDelayMs(attempt, { baseMs: 1, maxMs: 100, jitter: 'full' });

const isSystemType = (type: string) => type.startsWith('$');

const isStart = (p: LogPosition) => p.commit === 0n && p.prepare === 0n;

/** `$all` reads are inclusive of their start position, subscriptions are not: callers filter with {@link isAfter}. */
const toReadPosition = (p: LogPosition): ReadPosition =>
  isStart(p) ? ESDB_START : { commit: p.commit, prepare: p.prepare };

const isAfter = (p: LogPosition, after: LogPosition) => isStart(after) || comparePositions(p, after) > 0;

const isMissing = (error: unknown) =>
  error instanceof EsdbStreamNotFoundError || error instanceof StreamDeletedError;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array);

const validateExpected = (e: ExpectedRevision) => {
  if (typeof e === 'number' && (!Number.isInteger(e) || e < 0))
    throw new RangeError(`invalid expected revision: ${e}`);
};

/** True when a stream at `current` (-1: absent) satisfies `expected`. */
const expectationHolds = (expected: ExpectedRevision, current: number) =>
  expected === 'any' ||
  (expected === 'no_stream' && current === -1) ||
  (expected === 'stream_exists' && current !== -1) ||
  expected === current;

/** The client 6.x only knows the `esdb://` scheme; KurrentDB's `kurrentdb://` names the same protocol. */
const normaliseConnectionString = (s: string) =>
  s.replace(/^(kurrentdb|kurrent)(\+discover)?:\/\//, 'esdb$2://');

const collect = async <T>(read: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const item of read) out.push(item);
  return out;
};

const toRecorded = (r: EsdbRecord): RecordedEvent => {
  const { [REVISION_KEY]: ownRevision, ...stored } = isRecord(r.metadata) ? r.metadata : {};
  // Events written by other tools lack the chain fields; give them neutral values rather than failing the read.
  const metadata: RecordedMetadata = {
    ...stored,
    occurred_at: typeof stored.occurred_at === 'string' ? stored.occurred_at : r.created.toISOString(),
    prev_hash: typeof stored.prev_hash === 'string' ? stored.prev_hash : '',
    hash: typeof stored.hash === 'string' ? stored.hash : '',
  };
  return {
    eventId: r.id.toLowerCase(),
    streamId: r.streamId,
    revision: typeof ownRevision === 'number' ? ownRevision : Number(r.revision),
    position: r.position ? { commit: r.position.commit, prepare: r.position.prepare } : START,
    type: r.type,
    data: r.data,
    metadata,
    recordedAt: r.created,
  };
};

/**
 * The EventStoreDB/KurrentDB event store adapter (ARCHITECTURE §5) on `@eventstore/db-client`.
 *
 * `connectionString`: `esdb://host:2113?tls=false` (or `kurrentdb://…`, `esdb+discover://…` for a cluster).
 * The client connects lazily: a wrong address surfaces on the first call, not here.
 *
 * Mapping onto the port:
 * - Revisions are our 0-based revisions (stored with each event, see {@link REVISION_KEY}); expected revisions
 *   are checked against a read of the stream's last event and then enforced by the server with the exact
 *   EventStoreDB revision that was read, so a concurrent append surfaces as {@link WrongExpectedRevisionError}.
 *   `any` and `stream_exists` retry such a race (jittered backoff, up to 50 attempts).
 * - The hash chain (`prev_hash`/`hash`) is computed here with `hash-chain.ts`, byte for byte like the
 *   PostgreSQL adapter does in SQL; the previous hash is the last event's `metadata.hash`.
 * - {@link LogPosition} is EventStoreDB's own (commit, prepare) position in `$all`; system events (types
 *   starting with `$`) are never returned.
 * - `deleteStream` is a soft delete, so the stream id can be reused (its revisions restart at 0, its chain at
 *   ''). Unlike PostgreSQL, the events stay in `$all` and on disk until a scavenge runs; `readAll` and
 *   subscriptions still return them, and projections learn of the deletion from the `StreamDeleted` event in
 *   {@link DELETIONS_STREAM}. That event is appended after the delete, not atomically with it.
 * - Each append reads its events back afterwards so the returned positions are the ones `$all` readers see
 *   (read-your-writes waits compare against them): three round trips per append.
 */
export const createEsdbEventStore = (connectionString: string): EventStore => {
  const client = EventStoreDBClient.connectionString(normaliseConnectionString(connectionString));
  const subscriptions = new Set<EsdbSubscription>();
  let closed = false;

  /** Events of a stream by EventStoreDB revision; `[]` when the stream is missing or (soft or hard) deleted. */
  const readRange = async (
    streamId: string,
    fromRevision: bigint | typeof ESDB_START | typeof END,
    maxCount: number,
    direction: typeof FORWARDS | typeof BACKWARDS = FORWARDS,
  ): Promise<EsdbRecord[]> => {
    try {
      const resolved = await collect(client.readStream(streamId, { fromRevision, maxCount, direction }));
      return resolved.flatMap((r) => (r.event ? [r.event] : []));
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  };

  const readHead = async (streamId: string): Promise<StreamHead | undefined> => {
    const [last] = await readRange(streamId, END, 1, BACKWARDS);
    if (!last) return undefined;
    const recorded = toRecorded(last);
    return { esdbRevision: last.revision, revision: recorded.revision, hash: recorded.metadata.hash };
  };

  const streamRevision = async (streamId: string): Promise<number> =>
    (await readHead(streamId))?.revision ?? -1;

  /**
   * Reads back the just-appended events `ids`, starting at EventStoreDB revision `first`. Right after a
   * soft-deleted stream is recreated, reads may briefly still report it missing (the server moves its truncation
   * point with a second write), hence the few short retries. `undefined` when they do not show up, are not ours
   * or carry no `$all` position (servers before 22.6): the caller then falls back to what it computed.
   */
  const readBack = async (
    streamId: string,
    first: bigint,
    ids: string[],
  ): Promise<RecordedEvent[] | undefined> => {
    for (let attempt = 0; attempt < READ_BACK_ATTEMPTS; attempt++) {
      const records = await readRange(streamId, first, ids.length);
      if (records.length === ids.length) {
        const complete = records.every((r, i) => r.position !== undefined && r.id.toLowerCase() === ids[i]);
        return complete ? records.map(toRecorded) : undefined;
      }
      await sleep(backoffDelayMs(attempt, { baseMs: 10, maxMs: Number.POSITIVE_INFINITY }));
    }
    return undefined;
  };

  const append = async (
    streamId: string,
    events: NewEvent[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> => {
    if (events.length === 0) throw new RangeError('append needs at least one event');
    const expected = options.expectedRevision ?? 'any';
    validateExpected(expected);
    const ids = events.map((e) => (e.eventId ?? randomUUID()).toLowerCase());
    // Normalised through canonical JSON so what is stored, hashed and returned is the same JSON value.
    const metas = events.map(
      (e) =>
        JSON.parse(
          canonicalJson({ ...e.metadata, occurred_at: e.metadata?.occurred_at ?? new Date().toISOString() }),
        ) as EventMetadataInput & { occurred_at: string },
    );
    // An event encoded where it was decided (`NewEvent.dataText`) is that text.
    const dataTexts = events.map((e) =>
      e.dataText ? decodeDataText(e.dataText) : canonicalJson(e.data ?? null),
    );
    const metaTexts = metas.map((m) => canonicalJson(hashableMetadata(m)));

    for (let attempt = 1; ; attempt++) {
      const head = await readHead(streamId);
      const current = head?.revision ?? -1;
      if (!expectationHolds(expected, current))
        throw new WrongExpectedRevisionError(streamId, expected, current);

      let prevHash = head?.hash ?? '';
      const built: RecordedEvent[] = [];
      const proposed: JSONEventData[] = [];
      events.forEach((e, i) => {
        const revision = current + 1 + i;
        const hash = linkHash({
          prevHash,
          streamId,
          revision,
          eventId: ids[i]!,
          type: e.type,
          dataText: dataTexts[i]!,
          metadataText: metaTexts[i]!,
        });
        const metadata: RecordedMetadata = { ...metas[i]!, prev_hash: prevHash, hash };
        const data: unknown = JSON.parse(dataTexts[i]!);
        built.push({
          eventId: ids[i]!,
          streamId,
          revision,
          position: START,
          type: e.type,
          data,
          metadata,
          recordedAt: new Date(),
        });
        proposed.push({
          id: ids[i]!,
          contentType: 'application/json',
          type: e.type,
          // The client JSON.stringify()s the data, so any JSON value works, although its type names only
          // objects, arrays and strings.
          data: data as JSONType,
          metadata: { ...metadata, [REVISION_KEY]: revision },
        });
        prevHash = hash;
      });

      let result: EsdbAppendResult | undefined;
      try {
        // Exactly the revision read above (or "no stream"): a concurrent writer makes this fail instead of
        // forking the hash chain.
        result = await client.appendToStream(streamId, proposed, {
          expectedRevision: head ? head.esdbRevision : NO_STREAM,
        });
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError)) throw error;
      }
      if (!result?.success) {
        if ((expected === 'any' || expected === 'stream_exists') && attempt < MAX_RETRY_ATTEMPTS) {
          await sleep(backoffMs(attempt));
          continue;
        }
        throw new WrongExpectedRevisionError(streamId, expected, await streamRevision(streamId));
      }

      const firstEsdb = result.nextExpectedRevision - BigInt(events.length - 1);
      const recorded =
        (await readBack(streamId, firstEsdb, ids)) ??
        built.map((e) => ({ ...e, position: result.position ?? START }));
      const last = recorded[recorded.length - 1]!;
      return {
        nextRevision: last.revision,
        position: last.position,
        lastHash: last.metadata.hash,
        events: recorded,
      };
    }
  };

  const readStream = async (streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> => {
    const from = options.fromRevision ?? 0;
    const max = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    if (max <= 0) return [];
    if (from <= 0) return (await readRange(streamId, ESDB_START, max)).map(toRecorded);
    // Our revision N is EventStoreDB revision N + offset, offset > 0 once the stream was deleted and recreated.
    const head = await readHead(streamId);
    if (!head || from > head.revision) return [];
    const offset = head.esdbRevision - BigInt(head.revision);
    return (await readRange(streamId, BigInt(from) + offset, max)).map(toRecorded);
  };

  /**
   * EventStoreDB has no index on event data: the stream is read backwards in pages down to `notBefore` (the
   * idempotency window), so a keyed order costs a read of the wallet's last day of events on this adapter.
   */
  const findByIdempotencyKey = async (
    streamId: string,
    key: string,
    options: { notBefore?: Date } = {},
  ): Promise<RecordedEvent | undefined> => {
    const notBefore = options.notBefore?.getTime() ?? Number.NEGATIVE_INFINITY;
    let from: bigint | typeof END = END;
    for (;;) {
      const page = await readRange(streamId, from, FIND_PAGE, BACKWARDS);
      for (const record of page) {
        const event = toRecorded(record);
        if ((event.data as { idempotency_key?: unknown } | null)?.idempotency_key === key) return event;
        if (Date.parse(event.metadata.occurred_at) < notBefore) return undefined;
      }
      const last = page[page.length - 1];
      if (page.length < FIND_PAGE || !last || last.revision === 0n) return undefined;
      from = last.revision - 1n;
    }
  };

  const readAll = async (options: ReadAllOptions = {}): Promise<ReadAllResult> => {
    const after = options.after ?? START;
    const max = options.maxCount ?? 1000;
    const events: RecordedEvent[] = [];
    let from = after;
    // System events are filtered here (this client cannot filter `$all` reads on the server), so keep reading
    // until the page is full or the log ends; one extra event per read covers the inclusive start position.
    while (events.length < max) {
      const want = max - events.length + 1;
      const page = await collect(
        client.readAll({ fromPosition: toReadPosition(from), maxCount: want, direction: FORWARDS }),
      );
      let last: LogPosition | undefined;
      for (const resolved of page) {
        const e = resolved.event;
        if (!e) continue;
        last = e.position;
        if (!isAfter(e.position, from) || isSystemType(e.type) || events.length >= max) continue;
        events.push(toRecorded(e));
      }
      if (page.length < want || !last || !isAfter(last, from)) break;
      from = last;
    }
    return { events, next: events.length > 0 ? events[events.length - 1]!.position : after };
  };

  const headPosition = async (): Promise<LogPosition> => {
    let from: LogPosition | undefined;
    for (;;) {
      const page = await collect(
        client.readAll({ fromPosition: from ?? END, maxCount: HEAD_PAGE, direction: BACKWARDS }),
      );
      let last: LogPosition | undefined;
      for (const resolved of page) {
        const e = resolved.event;
        if (!e) continue;
        if (from && comparePositions(e.position, from) >= 0) continue;
        last = e.position;
        if (!isSystemType(e.type)) return { commit: e.position.commit, prepare: e.position.prepare };
      }
      if (page.length < HEAD_PAGE || !last) return START;
      from = last;
    }
  };

  const deleteStream = async (streamId: string, options: { expectedRevision?: ExpectedRevision } = {}) => {
    if (streamId === DELETIONS_STREAM) throw new RangeError(`${DELETIONS_STREAM} cannot be deleted`);
    const expected = options.expectedRevision ?? 'any';
    validateExpected(expected);
    for (let attempt = 1; ; attempt++) {
      const head = await readHead(streamId);
      if (!head) throw new StreamNotFoundError(streamId);
      if (expected === 'no_stream' || (typeof expected === 'number' && expected !== head.revision)) {
        throw new WrongExpectedRevisionError(streamId, expected, head.revision);
      }
      try {
        // Soft delete (not tombstone): the id stays reusable, as on PostgreSQL.
        await client.deleteStream(streamId, { expectedRevision: head.esdbRevision });
      } catch (error) {
        if (isMissing(error)) throw new StreamNotFoundError(streamId);
        if (!(error instanceof WrongExpectedVersionError)) throw error;
        // The stream moved since it was read: the checks above decide on the next round whether that is fatal.
        if (attempt < MAX_RETRY_ATTEMPTS) {
          await sleep(backoffMs(attempt));
          continue;
        }
        throw new WrongExpectedRevisionError(streamId, expected, await streamRevision(streamId));
      }
      const recorded = await append(DELETIONS_STREAM, [
        {
          type: 'StreamDeleted',
          data: { stream_id: streamId, last_revision: head.revision, deleted_at: new Date().toISOString() },
          metadata: { actor: 'system' },
        },
      ]);
      return { position: recorded.position };
    }
  };

  return {
    name: 'esdb',
    append,
    readStream,
    findByIdempotencyKey,
    streamRevision,
    readAll,
    subscribeToAll: (options: SubscribeOptions = {}): AllSubscription => {
      if (closed) throw new Error('event store is closed');
      const sub = new EsdbSubscription(client, options, () => subscriptions.delete(sub));
      subscriptions.add(sub);
      return sub;
    },
    headPosition,
    deleteStream,
    close: async () => {
      closed = true;
      await Promise.all([...subscriptions].map((s) => s.close()));
      await client.dispose();
    },
  };
};

/** Buffers a server subscription's events and hands them out in batches, pausing the stream when full. */
class Feed {
  private readonly queue: AllStreamResolvedEvent[] = [];
  private failure: unknown;
  private ended = false;
  private stopped = false;
  private notify: (() => void) | undefined;

  constructor(
    private readonly sub: AllStreamSubscription,
    private readonly highWater: number,
  ) {
    sub.on('data', (e) => this.push(e));
    sub.on('error', (error) => {
      this.failure = error;
      this.signal();
    });
    sub.on('end', () => this.finish());
    sub.on('close', () => this.finish());
  }

  /** Up to `max` buffered events, waiting for at least one; `null` once the stream ended; throws its error. */
  async take(max: number): Promise<AllStreamResolvedEvent[] | null> {
    while (this.queue.length === 0) {
      if (this.failure !== undefined) throw this.failure;
      if (this.ended) return null;
      await new Promise<void>((resolve) => {
        this.notify = resolve;
      });
    }
    const batch = this.queue.splice(0, max);
    if (this.sub.isPaused() && this.queue.length < this.highWater) this.sub.resume();
    return batch;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.finish();
    await this.sub.unsubscribe().catch(() => undefined);
    this.sub.destroy();
  }

  private push(e: AllStreamResolvedEvent) {
    this.queue.push(e);
    if (this.queue.length >= this.highWater) this.sub.pause();
    this.signal();
  }

  private finish() {
    this.ended = true;
    this.signal();
  }

  private signal() {
    const n = this.notify;
    this.notify = undefined;
    n?.();
  }
}

/**
 * `$all` subscription (catch-up, then live) on the server's own subscription with the system-event filter.
 * Delivery resumes after the last delivered position when the connection drops, so each event is handed out
 * exactly once and in log order.
 */
class EsdbSubscription implements AllSubscription {
  private closed = false;
  private feed: Feed | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly client: EventStoreDBClient,
    private readonly options: SubscribeOptions,
    private readonly onClose: () => void,
  ) {}

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
    this.wake?.();
    await this.feed?.stop();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent[]> {
    let after: LogPosition = this.options.after ?? START;
    const maxBatch = this.options.maxBatch ?? 1000;
    let failures = 0;
    try {
      while (!this.closed) {
        const feed = new Feed(
          this.client.subscribeToAll(
            { fromPosition: toReadPosition(after), filter: excludeSystemEvents() },
            { highWaterMark: maxBatch },
          ),
          maxBatch,
        );
        this.feed = feed;
        try {
          for (;;) {
            const raw = await feed.take(maxBatch);
            if (raw === null || this.closed) break;
            failures = 0;
            const events: RecordedEvent[] = [];
            for (const resolved of raw) {
              const e = resolved.event;
              // The position check drops the overlap after a resubscription (and the start event, should the
              // server ever include it).
              if (!e || isSystemType(e.type) || !isAfter(e.position, after)) continue;
              events.push(toRecorded(e));
              after = e.position;
            }
            if (events.length > 0) yield events;
          }
        } catch {
          // Server restart or connection loss: resubscribe after the last delivered event, below.
        } finally {
          await feed.stop();
        }
        if (this.closed) break;
        failures++;
        await this.pause(backoffDelayMs(failures, { baseMs: 10, maxMs: 1_000 }));
      }
    } finally {
      this.closed = true;
      this.onClose();
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wake = undefined;
        resolve();
      }
      this.wake = done;
    });
  }
}
