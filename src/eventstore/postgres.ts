import { randomUUID } from 'node:crypto';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import {
  type AllSubscription,
  type AppendResult,
  DELETIONS_STREAM,
  type ElidedField,
  type EventStore,
  type ExpectedRevision,
  formatPosition,
  isAfter,
  type LogPosition,
  maxPosition,
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
import { isConnectionError } from '../db/connection-errors';
import type { DatabaseHandle } from '../db/database';
import { PREPARED } from '../db/prepared';
import type { Database } from '../db/schema';
import { AppendBatcher, type BatcherOptions, type BatcherStats } from './append-batcher';
import { type AppendOutcome, type BatchRow, recoverBatch } from './append-recovery';
import { decodeDataText } from './data-text';
import { canonicalCopy, canonicalJson } from './hash-chain';
import { LiveReader } from './live-reader';

/**
 * NOTIFY channel the adapter signals after each commit. The payload is the batch's last position in full,
 * `<commit>/<prepare>` (transaction id, global position: `formatPosition`), so a listener compares it with
 * checkpoints exactly (`comparePositions`) without reading the log. A bare `<prepare>` (a process of an older
 * version, in a rolling deploy) wakes readers and has the log's head read as heard instead. An older process reads
 * `<commit>/<prepare>` as no position (it only wakes), so while versions are mixed it does not know the new ones'
 * appends unfolded: its credential lag check and remembered write-side answers act as before that check, for the
 * length of the deploy (docs/architecture.md, "Authentication").
 */
export const EVENTS_CHANNEL = 'events_appended';

/**
 * `application_name` prefix of a store's LISTEN connection on {@link EVENTS_CHANNEL}: followed by the store's own
 * random id, it lets a writer see in `pg_stat_activity` whether a store other than itself listens.
 */
export const LISTENER_NAME_PREFIX = 'ptv-events:';

/**
 * How long a writer trusts what it last saw of the other listeners (ms). A store that starts listening may miss
 * the wake-ups of this long (a writer that saw nobody sends none until it looks again), so its subscriptions poll
 * quickly for {@link LISTENER_DISCOVERY_MS} after its LISTEN connection is (re)established.
 */
const LISTENERS_RECHECK_MS = 250;

/**
 * Quick polling of a store whose LISTEN connection was just (re)established (ms): the recheck and a wide margin (a
 * reader that starts over after a database fault, like the projection runner, may subscribe again a while later).
 */
const LISTENER_DISCOVERY_MS = 6 * LISTENERS_RECHECK_MS;

/**
 * Least time (ms) between two reads of the log's head for bare `<prepare>` notifications (a process of an older
 * version, during a rolling deploy): one statement per 20 ms at most, the lag check's own poll interval.
 */
const LEGACY_HEAD_READ_MS = 20;

/**
 * Sends the post-commit wake-up to other stores (processes): at most one NOTIFY in flight, always carrying the
 * highest position committed so far, so a burst of appends costs a few NOTIFYs. Each runs with
 * `synchronous_commit = off` (it carries no data, only a hint). PGlite is single-process: nothing to send.
 *
 * A NOTIFY is sent only while another store listens (issue 23: a lone venue process spent one statement per append
 * batch on NOTIFYs only its own listener heard, and ignored). Who listens is read from `pg_stat_activity` (the
 * `application_name` of the LISTEN connections, {@link LISTENER_NAME_PREFIX}; visible to every role), within the
 * NOTIFY statement itself, and trusted for {@link LISTENERS_RECHECK_MS}: after that the next wake-up is sent in
 * any case, with a fresh look. A listener that appeared meanwhile polls quickly until every writer has looked
 * again (`LiveReader.pollQuickly`), so it sees appends promptly from its first moment.
 */
const createNotifier = (
  handle: DatabaseHandle,
  ownListenerName: string,
  sent: (position: LogPosition) => void,
) => {
  let inFlight = false;
  let pending: LogPosition | undefined;
  /** Whether another store listened at the last look, and when that look was sent (ms since epoch). */
  let othersListen = true;
  let lookedAt = Number.NEGATIVE_INFINITY;
  const send = async (): Promise<void> => {
    while (pending !== undefined) {
      const position = pending;
      pending = undefined;
      try {
        // One statement, so one round trip: its implicit transaction commits without waiting for the WAL
        // flush (`set_config(..., true)` is the statement's `SET LOCAL`).
        const sentAt = Date.now();
        sent(position);
        const { rows } = await sql<{ others: boolean }>`${sql.raw(PREPARED)}
          select set_config('synchronous_commit', 'off', true), pg_notify(${EVENTS_CHANNEL}, ${formatPosition(position)}),
            exists(select 1 from pg_stat_activity where datname = current_database()
              and starts_with(application_name, ${LISTENER_NAME_PREFIX}) and application_name <> ${ownListenerName}) as others`.execute(
          handle.db,
        );
        othersListen = rows[0]?.others !== false;
        lookedAt = sentAt;
      } catch (error) {
        // A lost wake-up would delay readers until their idle poll (up to a second): when the connection was
        // lost, send it again (with the highest position by then) as soon as the database answers.
        if (handle.availability.report(error) && (await handle.availability.waitUntilAvailable(2_000))) {
          pending = pending === undefined ? position : maxPosition(position, pending);
        }
      }
    }
    inFlight = false;
  };
  return (position: LogPosition) => {
    if (handle.kind === 'pglite') return;
    // Nobody else listened a moment ago: nobody to wake (a newcomer polls quickly meanwhile).
    if (!othersListen && Date.now() - lookedAt < LISTENERS_RECHECK_MS) return;
    pending = pending === undefined ? position : maxPosition(position, pending);
    if (!inFlight) {
      inFlight = true;
      void send();
    }
  };
};

const expectedCode = (e: ExpectedRevision | undefined): number => {
  if (e === undefined || e === 'any') return -2;
  if (e === 'no_stream') return -1;
  if (e === 'stream_exists') return -3;
  if (!Number.isInteger(e) || e < 0) throw new RangeError(`invalid expected revision: ${e}`);
  return e;
};

/** One append, validated and serialised, as `append_events_batch` takes it. */
interface PreparedAppend {
  streamId: string;
  /** As the caller gave it (for the error). */
  expectedRevision: ExpectedRevision | undefined;
  /** As the SQL function takes it: >= 0 exact, -1 no stream, -2 any, -3 stream exists. */
  expected: number;
  ids: string[];
  types: string[];
  /** Canonical JSON of each event's data (hashed as is): a text, or its UTF-8 bytes as given (`NewEvent.dataText`). */
  dataTexts: (string | Uint8Array)[];
  /** What each text reads back as (`canonicalCopy`), undefined where only parsing the text gives it. */
  dataCopies: unknown[];
  /** Each event's metadata (with `occurred_at`) and its canonical JSON. */
  metas: Record<string, unknown>[];
  metaTexts: string[];
  /** Its weight in a batch: the JSON texts' length plus {@link EVENT_OVERHEAD} per event. */
  weight: number;
}

/** What an event weighs in a batch beyond its JSON (ids, type, row and index overhead), in bytes. */
const EVENT_OVERHEAD = 256;

/** Validates and serialises an append. Throws `RangeError` for no events or a bad expected revision. */
const prepareAppend = (
  streamId: string,
  events: NewEvent[],
  expectedRevision: ExpectedRevision | undefined,
): PreparedAppend => {
  if (events.length === 0) throw new RangeError('append needs at least one event');
  const expected = expectedCode(expectedRevision);
  const metas: Record<string, unknown>[] = [];
  const metaTexts: string[] = [];
  for (let i = 0; i < events.length; i++) {
    const given = events[i]!.metadata;
    // The events of one command carry one metadata object (`eventMetadata`): serialised once for all of them.
    if (i > 0 && given !== undefined && given === events[i - 1]!.metadata) {
      metas.push(metas[i - 1]!);
      metaTexts.push(metaTexts[i - 1]!);
      continue;
    }
    const meta = { ...given, occurred_at: given?.occurred_at ?? new Date().toISOString() };
    metas.push(meta);
    metaTexts.push(canonicalJson(meta));
  }
  const dataTexts: (string | Uint8Array)[] = [];
  const dataCopies: unknown[] = [];
  for (const e of events) {
    if (e.dataText) {
      // Encoded where it was decided: sent as these bytes; read back from them only if the answer's data is read.
      dataTexts.push(e.dataText);
      dataCopies.push(undefined);
      continue;
    }
    const { text, copy } = canonicalCopy(e.data ?? null);
    dataTexts.push(text);
    dataCopies.push(copy);
  }
  let weight = 0;
  for (let i = 0; i < events.length; i++) {
    weight += dataTexts[i]!.length + metaTexts[i]!.length + EVENT_OVERHEAD;
  }
  return {
    streamId,
    expectedRevision,
    expected,
    ids: events.map((e) => (e.eventId ?? randomUUID()).toLowerCase()),
    types: events.map((e) => e.type),
    dataTexts,
    dataCopies,
    metas,
    metaTexts,
    weight,
  };
};

/**
 * A `text[]` argument of JSON texts, sent as one JSON array of them (no escaping: each text is already JSON) and
 * taken apart in order by the server, each element's text exactly as sent. Texts given as UTF-8 bytes
 * (`NewEvent.dataText`) make the array a `Buffer` on `pg` ({@link jsonArrayBytes}: `pg` sends a `Buffer` in
 * binary format, which for `json` is the text itself, so the server takes apart the same characters); PGlite, whose
 * parameters are serialised by their type, gets the text.
 */
const jsonTexts = (texts: readonly (string | Uint8Array)[], kind: DatabaseHandle['kind']) =>
  sql`array(select t.e::text from json_array_elements(${jsonArrayParameter(texts, kind)}::json) with ordinality t(e, i) order by t.i)`;

const jsonArrayParameter = (
  texts: readonly (string | Uint8Array)[],
  kind: DatabaseHandle['kind'],
): string | Buffer => {
  if (texts.every((t) => typeof t === 'string')) return jsonArrayText(texts as string[]);
  if (kind === 'postgres') return jsonArrayBytes(texts);
  return jsonArrayText(texts.map((t) => (typeof t === 'string' ? t : decodeDataText(t))));
};

/**
 * {@link jsonArrayText}'s text as UTF-8 bytes, with the texts given as bytes copied in as they are: no V8 string
 * of them is made (a 1 MB string is a large-object allocation of the request thread's heap; the `Buffer` is one
 * copy outside it, which `pg` copies into its message as it would a string's bytes).
 */
export const jsonArrayBytes = (texts: readonly (string | Uint8Array)[]): Buffer => {
  const parts: Uint8Array[] = [];
  let small: string[] = ['['];
  const flush = () => {
    parts.push(Buffer.from(small.join(''), 'utf8'));
    small = [];
  };
  for (let i = 0; i < texts.length; i++) {
    if (i > 0) small.push(',');
    const text = texts[i]!;
    if (typeof text === 'string') {
      small.push(text);
      continue;
    }
    flush();
    parts.push(text);
  }
  small.push(']');
  flush();
  return Buffer.concat(parts);
};

/**
 * `[` + the texts joined by `,` + `]`, made by one `join` into one flat string. The template literal
 * `` `[${texts.join(',')}]` `` it replaces was a rope over the joined copy, which `pg`'s `Buffer.byteLength` then
 * flattened into a second copy: with a `BacktestStepped`'s ~1 MB `equity_units` in the batch, two fresh 1 MB strings
 * on the request thread instead of one (~15 against ~7 ms at load; docs/benchmarks.md, "Market data at scale",
 * 2026-11-30, issue 24). Since the stepping thread hands its `BacktestStepped` over as bytes ({@link jsonArrayBytes}),
 * that case reaches this only on PGlite and for batches stepped in process. The text is the same character for
 * character.
 */
export const jsonArrayText = (texts: readonly string[]): string => {
  // The separators are parts of their own: a `,${text}` would be a rope over a 1 MB text, flattened into a copy.
  const parts: string[] = ['['];
  for (const text of texts) {
    if (parts.length > 1) parts.push(',');
    parts.push(text);
  }
  parts.push(']');
  return parts.join('');
};

/** Makes `e.data` the JSON `text` holds, parsed the first time it is read (then a plain property). */
const lazyData = (e: RecordedEvent, text: Uint8Array): void => {
  Object.defineProperty(e, 'data', {
    configurable: true,
    enumerable: true,
    get() {
      const data: unknown = JSON.parse(decodeDataText(text));
      Object.defineProperty(e, 'data', { value: data, writable: true, configurable: true, enumerable: true });
      return data;
    },
    set(value: unknown) {
      Object.defineProperty(e, 'data', { value, writable: true, configurable: true, enumerable: true });
    },
  });
};

/** The caller's result of one append; throws {@link WrongExpectedRevisionError} for a conflict. */
const toAppendResult = (a: PreparedAppend, outcome: AppendOutcome): AppendResult => {
  if (outcome.conflict) {
    throw new WrongExpectedRevisionError(a.streamId, a.expectedRevision ?? 'any', outcome.actual);
  }
  if (outcome.rows.length !== a.ids.length) {
    throw new Error(`append to ${a.streamId}: ${a.ids.length} events sent, ${outcome.rows.length} recorded`);
  }
  const recorded: RecordedEvent[] = outcome.rows.map((r, i) => {
    const text = a.dataTexts[i]!;
    const e: RecordedEvent = {
      eventId: a.ids[i]!,
      streamId: a.streamId,
      revision: Number(r.o_revision),
      position: { commit: BigInt(r.o_transaction_id!), prepare: BigInt(r.o_global_position!) },
      type: a.types[i]!,
      // The data as stored: the canonical text parsed back (or the copy it was made from, which is the same value);
      // bytes encoded elsewhere (a backtest batch's ~1 MB `BacktestStepped`) are decoded when the data is first read.
      data: typeof text === 'string' ? (a.dataCopies[i] ?? JSON.parse(text)) : undefined,
      metadata: { ...(a.metas[i]! as RecordedMetadata), prev_hash: r.o_prev_hash!, hash: r.o_hash! },
      recordedAt: r.o_recorded_at instanceof Date ? r.o_recorded_at : new Date(r.o_recorded_at!),
    };
    if (typeof text !== 'string') lazyData(e, text);
    return e;
  });
  const last = recorded[recorded.length - 1]!;
  return {
    nextRevision: last.revision,
    position: last.position,
    lastHash: last.metadata.hash,
    events: recorded,
  };
};

/**
 * True for an error the server reported for the statement (a `DatabaseError` of `pg` or PGlite: a SQLSTATE and a
 * severity): the batch's implicit transaction rolled back, so its appends can be retried one by one.
 * Connection errors (SQLSTATE class 08, or a socket error without a severity) leave the outcome of the commit
 * unknown and are not retried.
 */
const isServerError = (error: unknown): boolean => {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return (
    !isConnectionError(error) &&
    typeof severity === 'string' &&
    typeof code === 'string' &&
    /^[0-9A-Z]{5}$/.test(code) &&
    !code.startsWith('08')
  );
};

/** Most weight of one batch: about 1 MiB of events (at most ~4,000 small ones). */
const MAX_BATCH_WEIGHT = 1 << 20;

/**
 * Batching on a server (measured with `bench/eventstore.ts`, docs/benchmarks.md): up to 2 batches in flight,
 * each at most 128 appends and {@link MAX_BATCH_WEIGHT}.
 */
const POSTGRES_BATCHING: BatcherOptions = { maxInFlight: 2, maxItems: 128, maxWeight: MAX_BATCH_WEIGHT };

/** PGlite runs queries one at a time in this process: one batch in flight, the rest queue behind it. */
const PGLITE_BATCHING: BatcherOptions = { maxInFlight: 1, maxItems: 128, maxWeight: MAX_BATCH_WEIGHT };

/** Options of {@link createPostgresEventStore}. */
export interface PostgresEventStoreOptions {
  /**
   * The append batcher: concurrent appends (to any streams) share one call and one transaction. `false` sends
   * each append alone (one transaction each). Default: on, tuned per backend; options given here override
   * the defaults one by one.
   */
  batching?: BatcherOptions | false;
  /** Hears every batch sent (`/metrics`): its appends, its round trip in seconds, whether it was stored. */
  observeBatch?: (appends: number, seconds: number, ok: boolean) => void;
  /**
   * Large fields the subscriptions (`subscribeToAll`: the process's shared tail of `$all`) are handed without
   * (`RecordedEvent.elided`); at most one per event type. The server leaves them out of the rows, so their text is
   * neither sent nor parsed in this process (a `BacktestStepped`'s ~1 MB `equity_units`: ~15–40 ms of the request
   * thread per batch at load, issue 24). `readAll`, `readStream` and appends always give whole events. Give it
   * only when every subscriber of the process reads none of these values, or reads them from the `events` table.
   */
  elide?: readonly ElidedField[];
}

/** The PostgreSQL adapter: the {@link EventStore} port plus what benchmarks and tests look at. */
export interface PostgresEventStore extends EventStore {
  /** Batches sent by the append batcher so far (a copy); `undefined` when batching is off. */
  appendBatchStats(): BatcherStats | undefined;
}

interface EventRow {
  global_position: string;
  transaction_id: string;
  stream_id: string;
  revision: string;
  event_id: string;
  type: string;
  data: unknown;
  metadata: RecordedMetadata;
  recorded_at: Date | string;
  /** The key left out of `data` (reads with elided fields only), else null. */
  elided?: string | null;
}

const toRecorded = (r: EventRow): RecordedEvent => {
  const e: RecordedEvent = {
    eventId: r.event_id,
    streamId: r.stream_id,
    revision: Number(r.revision),
    position: { commit: BigInt(r.transaction_id), prepare: BigInt(r.global_position) },
    type: r.type,
    data: r.data,
    metadata: r.metadata,
    recordedAt: r.recorded_at instanceof Date ? r.recorded_at : new Date(r.recorded_at),
  };
  if (r.elided) e.elided = [r.elided];
  return e;
};

/**
 * The columns of an event row; `data` is the expression of its data (the column itself, or the subscriptions'
 * eliding `case`), and `extra` more columns after them. Output names equal the column names: ORDER BY must qualify
 * `events.` or it would sort the text aliases.
 */
const eventColumns = (data: RawBuilder<unknown> = sql`data`, extra: RawBuilder<unknown> = sql``) =>
  sql`global_position::text as global_position, transaction_id::text as transaction_id,
  stream_id, revision::text as revision, event_id::text as event_id, type, ${data} as data, metadata, recorded_at${extra}`;

const EVENT_COLUMNS = eventColumns();

/**
 * {@link EVENT_COLUMNS} with `fields` left out of the data of their events (`data - key`, computed by the server),
 * and the key left out as `elided` (null for every other event). Throws `RangeError` for two fields of one type.
 */
const elidingColumns = (fields: readonly ElidedField[]) => {
  if (new Set(fields.map((f) => f.type)).size !== fields.length)
    throw new RangeError('at most one elided field per event type');
  const when = (f: ElidedField) =>
    sql`type = ${f.type} and data ? ${f.onlyWith}::text and data ? ${f.key}::text`;
  const cases = (then: (f: ElidedField) => RawBuilder<unknown>) =>
    sql.join(
      fields.map((f) => sql`when ${when(f)} then ${then(f)}`),
      sql` `,
    );
  return eventColumns(
    sql`case ${cases((f) => sql`data - ${f.key}::text`)} else data end`,
    sql`, case ${cases((f) => sql`${f.key}::text`)} end as elided`,
  );
};

/**
 * The PostgreSQL event store adapter (ARCHITECTURE §5), on a `pg` pool or on PGlite.
 * - Appends go through the `append_events_batch` function (migration 0004): row locks on the stream heads,
 *   optimistic concurrency per append, hash chain. Appends arriving while earlier ones are in flight are
 *   batched (`AppendBatcher`): one round trip and one transaction (one commit flush) for many streams, each
 *   append still succeeding or failing with {@link WrongExpectedRevisionError} on its own. The NOTIFY wake-up
 *   follows the commit (see `createNotifier`), once per batch.
 * - `$all` is read in `(transaction_id, global_position)` order and only below
 *   `pg_snapshot_xmin(pg_current_snapshot())`, so an event whose transaction commits late is never skipped.
 * - Subscriptions are woken by LISTEN/NOTIFY and by this process's own appends, and poll as a fallback.
 */
export const createPostgresEventStore = (
  handle: DatabaseHandle,
  options: PostgresEventStoreOptions = {},
): PostgresEventStore => {
  const db = handle.all;
  const listenerName = `${LISTENER_NAME_PREFIX}${randomUUID()}`;
  /** The highest position another store announced ({@link EventStore.heardHead}). */
  let heard: LogPosition = START;
  /**
   * Global positions (`prepare`, unique per event) this store announced and has not heard back yet: its own echo
   * is not another's append.
   */
  const ownAnnounced = new Set<bigint>();
  const notifyOthers = createNotifier(handle, listenerName, (position) => {
    ownAnnounced.add(position.prepare);
    if (ownAnnounced.size > 1024) ownAnnounced.delete(ownAnnounced.values().next().value!);
  });
  /**
   * Raises `heard` to the log's head (PostgreSQL): what was appended before this store listened (a restart) or while
   * its LISTEN connection was lost sent it no notification, yet may not be folded by the read models either.
   */
  const hearHead = (): void => {
    if (handle.kind !== 'postgres') return;
    headPosition().then(
      (head) => {
        if (isAfter(head, heard)) heard = head;
      },
      () => undefined,
    );
  };
  /** When {@link hear} last read the head for an older process's bare `<prepare>` (ms since epoch). */
  let legacyHeadReadAt = Number.NEGATIVE_INFINITY;
  /**
   * Takes a notification in: raises {@link heard} unless it is this store's own echo; the `prepare` to wake at. A
   * bare `<prepare>` raises it to the log's head instead ({@link hearHead}).
   */
  const hear = (notified: Notified | undefined): bigint | undefined => {
    if (notified === undefined) return undefined;
    if ('prepare' in notified) {
      if (!ownAnnounced.delete(notified.prepare) && isAfter(notified, heard)) heard = notified;
      return notified.prepare;
    }
    // An older process names no transaction: the log's head (one statement, at most one per
    // LEGACY_HEAD_READ_MS) stands in for it, so its appends still count as heard during a rolling deploy.
    if (Date.now() - legacyHeadReadAt >= LEGACY_HEAD_READ_MS) {
      legacyHeadReadAt = Date.now();
      hearHead();
    }
    return notified.legacyPrepare;
  };
  const subscribedColumns = options.elide?.length ? elidingColumns(options.elide) : EVENT_COLUMNS;
  const live: LiveReader = new LiveReader({
    readAll: (o) => readAll(o, subscribedColumns),
    // After a lost LISTEN connection is re-subscribed, every reader re-reads the log (a catch-up read), so a
    // notification missed meanwhile delays nothing; and polls quickly while writers learn that it listens again.
    listen: async (onWake) => {
      const unlisten = await handle.listen(
        EVENTS_CHANNEL,
        (payload) => onWake(hear(parseNotified(payload))),
        {
          applicationName: listenerName,
          // Wake-ups stop the moment the connection is lost (a restart, a failover, a terminated backend): poll
          // from then on rather than wait for the re-subscription (100–300 ms under load) or the idle poll.
          onLost: () => live.pollQuickly(LISTENER_DISCOVERY_MS),
          onResubscribed: () => {
            live.pollQuickly(LISTENER_DISCOVERY_MS);
            hearHead();
          },
        },
      );
      hearHead();
      if (handle.kind === 'postgres') live.pollQuickly(LISTENER_DISCOVERY_MS);
      return unlisten;
    },
  });

  /** Wakes this process's readers and tells the other stores of a stored position (`undefined`: none stored). */
  const announce = (position: LogPosition | undefined): void => {
    if (position === undefined) return;
    live.wake(position.prepare);
    notifyOthers(position);
  };

  /** Runs one batch through `append_events_batch` on `executor`; one outcome per append, in order. */
  const sendBatch = async (
    appends: PreparedAppend[],
    executor: Kysely<Database> = db,
  ): Promise<AppendOutcome[]> => {
    const streams: string[] = [];
    const expected: number[] = [];
    const counts: number[] = [];
    const ids: string[] = [];
    const types: string[] = [];
    const dataTexts: (string | Uint8Array)[] = [];
    const metaTexts: string[] = [];
    for (const a of appends) {
      streams.push(a.streamId);
      expected.push(a.expected);
      counts.push(a.ids.length);
      ids.push(...a.ids);
      types.push(...a.types);
      dataTexts.push(...a.dataTexts);
      metaTexts.push(...a.metaTexts);
    }
    // The JSON texts travel as one JSON array each, joined as they are, and `json_array_elements` gives each back
    // verbatim (the `json` type keeps its input text), so the hash covers the very bytes made here. As a `text[]`
    // literal every quote of every text was escaped by `pg` and unescaped by the server (docs/benchmarks.md,
    // "Trading", 2026-11-29: ~9 % of the server's allocations per order).
    const { rows } = await sql<BatchRow>`${sql.raw(PREPARED)}
      select o_append, o_conflict, o_revision::text as o_revision, o_global_position::text as o_global_position,
             o_transaction_id, o_prev_hash, o_hash, o_recorded_at
      from append_events_batch(${streams}::text[], ${expected}::bigint[], ${counts}::int[], ${ids}::uuid[],
        ${types}::text[], ${jsonTexts(dataTexts, handle.kind)}, ${jsonTexts(metaTexts, handle.kind)})`.execute(
      executor,
    );
    const outcomes: AppendOutcome[] = appends.map(() => ({ conflict: false, rows: [] }));
    for (const r of rows) {
      const k = r.o_append - 1;
      if (r.o_conflict) {
        outcomes[k] = { conflict: true, actual: Number(r.o_revision) };
        continue;
      }
      (outcomes[k] as { rows: BatchRow[] }).rows.push(r);
    }
    // One wake-up per batch: its appends share one transaction, so they become readable together.
    if (executor === db) announce(lastStored(outcomes));
    return outcomes;
  };

  /**
   * A batch on the pool; when its connection is lost before the commit is confirmed, it is settled by looking its
   * event ids up once the database answers, and sent again only if nothing of it was stored (`recoverBatch`).
   */
  const sendSurvivingLoss = async (appends: PreparedAppend[]): Promise<AppendOutcome[]> => {
    const started = performance.now();
    try {
      const outcomes = await sendBatch(appends);
      options.observeBatch?.(appends.length, (performance.now() - started) / 1000, true);
      return outcomes;
    } catch (error) {
      options.observeBatch?.(appends.length, (performance.now() - started) / 1000, false);
      if (handle.kind === 'pglite' || !isConnectionError(error)) throw error;
      handle.availability.report(error);
      const outcomes = await recoverBatch(
        { db, availability: handle.availability, send: (again) => sendBatch(again) },
        appends,
        error,
      );
      announce(lastStored(outcomes));
      return outcomes;
    }
  };

  const batcher =
    options.batching === false
      ? undefined
      : new AppendBatcher<PreparedAppend, AppendOutcome>(
          {
            send: (appends) => sendSurvivingLoss(appends),
            weight: (a) => a.weight,
            key: (a) => a.streamId,
            isolatable: isServerError,
          },
          {
            ...(handle.kind === 'pglite' ? PGLITE_BATCHING : POSTGRES_BATCHING),
            ...options.batching,
          },
        );

  const append = async (
    streamId: string,
    events: NewEvent[],
    appendOptions: { expectedRevision?: ExpectedRevision } = {},
    executor: Kysely<Database> = db,
  ): Promise<AppendResult> => {
    const prepared = prepareAppend(streamId, events, appendOptions.expectedRevision);
    const outcome =
      executor === db && batcher
        ? await batcher.submit(prepared)
        : (await (executor === db ? sendSurvivingLoss([prepared]) : sendBatch([prepared], executor)))[0]!;
    return toAppendResult(prepared, outcome);
  };

  const readStream = async (streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> => {
    const from = options.fromRevision ?? 0;
    const max = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    const page = 10_000;
    const out: RecordedEvent[] = [];
    let next = from;
    while (out.length < max) {
      const want = Math.min(page, max - out.length);
      const { rows } = await sql<EventRow>`
        select ${EVENT_COLUMNS} from events
        where stream_id = ${streamId} and revision >= ${next}
        order by events.revision limit ${want}`.execute(db);
      for (const r of rows) out.push(toRecorded(r));
      if (rows.length < want) break;
      next = out[out.length - 1]!.revision + 1;
    }
    return out;
  };

  const findByIdempotencyKey = async (streamId: string, key: string): Promise<RecordedEvent | undefined> => {
    // The partial index `events_idempotency_key` (migration 0008): one index probe, whatever the stream's length.
    const { rows } = await sql<EventRow>`
      select ${EVENT_COLUMNS} from events
      where stream_id = ${streamId} and data->>'idempotency_key' = ${key}
        and data->>'idempotency_key' is not null
      order by revision desc limit 1`.execute(db);
    return rows[0] ? toRecorded(rows[0]) : undefined;
  };

  const streamRevision = async (streamId: string): Promise<number> => {
    const row = await db
      .selectFrom('streams')
      .select('revision')
      .where('stream_id', '=', streamId)
      .executeTakeFirst();
    return row ? Number(row.revision) : -1;
  };

  /** A page of `$all`; `columns` the rows' columns ({@link EVENT_COLUMNS}, or the subscriptions' eliding ones). */
  const readAll = async (options: ReadAllOptions = {}, columns = EVENT_COLUMNS): Promise<ReadAllResult> => {
    const after = options.after ?? START;
    const max = options.maxCount ?? 1000;
    const { rows } = await sql<EventRow>`${sql.raw(PREPARED)}
      select ${columns} from events
      where (transaction_id, global_position) > (${after.commit.toString()}::xid8, ${after.prepare.toString()}::bigint)
        and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
      order by events.transaction_id, events.global_position
      limit ${max}`.execute(db);
    const events = rows.map(toRecorded);
    return { events, next: events.length ? events[events.length - 1]!.position : after };
  };

  const countEvents = async (): Promise<number> => {
    const row = await db
      .selectFrom('events')
      .select(sql<string>`count(*)::text`.as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };

  const countEventsAfter = async (after: LogPosition, limit: number): Promise<number> => {
    // The rows `readAll` would read, by the same index, without their data: a lag of 100,000 events is counted
    // from the index, not read and decoded.
    const { rows } = await sql<{ n: string }>`
      select count(*)::text as n from (
        select 1 from events
        where (transaction_id, global_position) > (${after.commit.toString()}::xid8, ${after.prepare.toString()}::bigint)
          and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        order by events.transaction_id, events.global_position
        limit ${limit}) as following`.execute(db);
    return Number(rows[0]!.n);
  };

  const headPosition = async (): Promise<LogPosition> => {
    const { rows } = await sql<{ transaction_id: string; global_position: string }>`
      select transaction_id::text as transaction_id, global_position::text as global_position from events
      where transaction_id < pg_snapshot_xmin(pg_current_snapshot())
      order by events.transaction_id desc, events.global_position desc limit 1`.execute(db);
    const r = rows[0];
    return r ? { commit: BigInt(r.transaction_id), prepare: BigInt(r.global_position) } : START;
  };

  const deleteStream = async (streamId: string, options: { expectedRevision?: ExpectedRevision } = {}) => {
    if (streamId === DELETIONS_STREAM) throw new RangeError(`${DELETIONS_STREAM} cannot be deleted`);
    const expected = options.expectedRevision;
    let position: LogPosition | undefined;
    await db.transaction().execute(async (trx) => {
      const head = await sql<{ revision: string }>`
        select revision::text as revision from streams where stream_id = ${streamId} for update`.execute(trx);
      const current = head.rows[0] ? Number(head.rows[0].revision) : -1;
      if (current === -1) throw new StreamNotFoundError(streamId);
      if (typeof expected === 'number' && expected !== current) {
        throw new WrongExpectedRevisionError(streamId, expected, current);
      }
      if (expected === 'no_stream') throw new WrongExpectedRevisionError(streamId, expected, current);
      await sql`delete from events where stream_id = ${streamId}`.execute(trx);
      await sql`delete from streams where stream_id = ${streamId}`.execute(trx);
      // Its snapshots go with it, historical ones too (a cache of what was deleted; a new stream of that id starts
      // afresh, and a kept bucket would otherwise never be rewritten).
      await sql`delete from snapshots where stream_id = ${streamId}`.execute(trx);
      await sql`delete from snapshot_history where stream_id = ${streamId}`.execute(trx);
      const result = await append(
        DELETIONS_STREAM,
        [
          {
            type: 'StreamDeleted',
            data: { stream_id: streamId, last_revision: current, deleted_at: new Date().toISOString() },
            metadata: { actor: 'system' },
          },
        ],
        {},
        trx,
      );
      position = result.position;
    });
    if (!position) throw new Error(`deleting ${streamId} recorded no StreamDeleted event`);
    announce(position);
    return { position };
  };

  return {
    name: handle.kind,
    append: (streamId, events, options) => append(streamId, events, options),
    readStream,
    findByIdempotencyKey,
    streamRevision,
    readAll: (o) => readAll(o),
    subscribeToAll: (options: SubscribeOptions = {}): AllSubscription => live.subscribe(options),
    headPosition,
    heardHead: () => {
      live.listen();
      return heard;
    },
    countEvents,
    countEventsAfter,
    deleteStream,
    close: () => live.close(),
    appendBatchStats: () => (batcher ? { ...batcher.stats } : undefined),
  };
};

/**
 * A notification's payload read: a position in full, or an older process's bare `prepare` (it wakes readers and has
 * the head read as heard: `hear`).
 */
type Notified = LogPosition | { legacyPrepare: bigint };

/** Reads {@link EVENTS_CHANNEL}'s payload: `<commit>/<prepare>`, or a bare `<prepare>`; `undefined` if neither. */
const parseNotified = (payload: string): Notified | undefined => {
  const match = /^(\d+)(?:\/(\d+))?$/.exec(payload);
  if (!match) return undefined;
  return match[2] === undefined
    ? { legacyPrepare: BigInt(match[1]!) }
    : { commit: BigInt(match[1]!), prepare: BigInt(match[2]) };
};

/** The highest position of the events an append batch stored, `undefined` when it stored none (all conflicts). */
const lastStored = (outcomes: readonly AppendOutcome[]): LogPosition | undefined => {
  let last: LogPosition | undefined;
  for (const o of outcomes) {
    if (o.conflict) continue;
    for (const r of o.rows) {
      const position = { commit: BigInt(r.o_transaction_id!), prepare: BigInt(r.o_global_position!) };
      last = last === undefined ? position : maxPosition(position, last);
    }
  }
  return last;
};
