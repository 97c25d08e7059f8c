import { backoffDelayMs } from '../domain/shared/backoff';
import type { Decider, DomainEvent } from '../domain/shared/decider';
import {
  type AppendResult,
  type EventMetadataInput,
  type EventStore,
  type ExpectedRevision,
  type RecordedEvent,
  readStreamPages,
  WrongExpectedRevisionError,
} from '../ports/event-store';
import { eventsAfterSnapshot, type Snapshotter } from './snapshots';
import { StateCache } from './state-cache';

/** Options of {@link createCommandHandler}. */
export interface CommandHandlerOptions<State = unknown> {
  /** Streams whose state is kept in memory (default 10,000). */
  cacheSize?: number;
  /** Attempts on a revision conflict before giving up (default 8). */
  maxAttempts?: number;
  /** Base of the jittered exponential back-off between attempts (ms, default 2). */
  backoffMs?: number;
  /**
   * Decide on a cached state without first reading the stream for newer events (default true). Safe because
   * the append carries the cached revision: if another process appended meanwhile, the append conflicts and
   * the command is decided again on the re-read stream. A decision that appends nothing is re-checked
   * against the stream before it is returned, so a stale cache never answers on its own.
   */
  trustCache?: boolean;
  /**
   * Snapshots of the streams' states (docs/architecture.md, "Snapshots"): a cold load starts from the stream's
   * snapshot and folds only the events after it; appends and loads leave new ones every `every` events. Absent,
   * every cold load replays the stream from its first event.
   */
  snapshots?: Snapshotter<State>;
  /**
   * Events read per page of a load (default 5,000): a load folds the stream a page at a time, so its memory is
   * one page whatever the stream's length (a wallet replayed from event 0 after a state version bump can hold
   * millions of events).
   */
  loadPageSize?: number;
}

/** Per-call options of a command. */
export interface HandleOptions {
  /** Metadata stamped on every new event (causation, correlation, actor, occurred_at). */
  metadata?: EventMetadataInput;
  /** Require the stream to be at this revision (no retry on conflict when set). */
  expectedRevision?: ExpectedRevision;
}

/** What handling a command produced. */
export interface HandleResult<State, Event> {
  /** The new events (empty when the decider decided nothing). */
  events: Event[];
  /** State after the new events. */
  state: State;
  /** Stream revision after the append (-1 for a stream that still does not exist). */
  revision: number;
  /** The append's result, absent when nothing was appended. */
  append?: AppendResult;
}

/**
 * A decider that may also return the state its new events lead to (exactly what folding them with `evolve`
 * gives), which spares the handler folding them a second time after the append.
 */
export type StatefulDecider<State, Command, Event extends DomainEvent, Context> = Decider<
  State,
  Command,
  Event,
  Context
> & {
  decideWithState?: (command: Command, state: State, context: Context) => { events: Event[]; state: State };
};

/**
 * A context built for each attempt, after the state it decides on was loaded (fresh prices and time; lookups of
 * the log such as an idempotency key's claim, which must not be older than that state): may be async.
 */
type ContextOf<State, Context> = (state: State, revision: number) => Context | Promise<Context>;

/** Events read per page of a cold load (`CommandHandlerOptions.loadPageSize`). */
const LOAD_PAGE = 5_000;

/** A command handler for one decider: `handle(streamId, command, context)`. */
export interface CommandHandler<State, Command, Event extends DomainEvent, Context> {
  handle(
    streamId: string,
    command: Command,
    context: Context | ContextOf<State, Context>,
    options?: HandleOptions,
  ): Promise<HandleResult<State, Event>>;
  /** Current state of a stream (through the cache) and its revision (-1 when absent). */
  load(streamId: string): Promise<{ state: State; revision: number }>;
  /** Forgets a stream's cached state (after it was deleted or reset out of band). */
  forget(streamId: string): void;
}

/**
 * The write-side workflow (ARCHITECTURE §4, Emmett's `CommandHandler`): load the stream (through a bounded
 * state cache, reading only the events after the cached revision, with the cached revision's own event in the
 * same read to check its hash: a stream another process deleted or re-created is then loaded afresh, not taken
 * for the cached one), call the pure decider with the injected context,
 * append with the expected revision, and on a conflict reload and decide again (bounded attempts, jittered
 * back-off). With `trustCache` (default) a cached state is decided on without a read first; anything but a
 * successful append (a conflict, a refusal, no events) is then decided again on the re-read stream. A context given as a function is rebuilt on every attempt, after the load (fresh prices, time and lookups).
 * Throws the decider's `DomainError` unchanged; throws `WrongExpectedRevisionError` after the last attempt.
 */
export const createCommandHandler = <State, Command, Event extends DomainEvent, Context>(
  store: EventStore,
  decider: StatefulDecider<State, Command, Event, Context>,
  options: CommandHandlerOptions<State> = {},
): CommandHandler<State, Command, Event, Context> => {
  const cache = new StateCache<State>(options.cacheSize ?? 10_000);
  const maxAttempts = options.maxAttempts ?? 8;
  const backoffMs = options.backoffMs ?? 2;
  const trustCache = options.trustCache ?? true;

  const snapshots = options.snapshots;
  const pageSize = options.loadPageSize ?? LOAD_PAGE;

  /**
   * A cold load's start: the stream's snapshot and the events after it when its last event is still the log's
   * event at its revision (same hash; read with the tail, so it costs no extra round trip), else nothing.
   */
  const fromSnapshot = async (streamId: string) => {
    const snapshot = await snapshots?.read(streamId);
    if (!snapshot) return undefined;
    // The snapshot's own event and the first page after it.
    const events = await eventsAfterSnapshot(store, streamId, snapshot, pageSize + 1);
    return events ? { snapshot, events } : undefined;
  };

  const load = async (streamId: string): Promise<{ state: State; revision: number; annex: unknown }> => {
    let cached = cache.get(streamId);
    let page: RecordedEvent[] | undefined;
    if (cached) {
      // The read after the cached revision starts at that revision's own event (one row more, same statement):
      // gone or another event means another process deleted the stream (maybe re-created it since), which an
      // empty read after the revision cannot tell apart from "nothing new". The cached state is then dropped.
      page = await eventsAfterSnapshot(
        store,
        streamId,
        { revision: cached.revision, eventHash: cached.hash },
        pageSize + 1,
      );
      if (!page) {
        cache.delete(streamId);
        cached = undefined;
      }
    }
    let state = cached?.state ?? decider.initialState();
    let revision = cached?.revision ?? -1;
    let hash = cached?.hash;
    // The snapshot annex (metadata folds such as the latest business time) moves with the state.
    let annex = cached ? cached.annex : snapshots?.initialAnnex();
    if (!cached && snapshots) {
      const start = await fromSnapshot(streamId);
      if (start) {
        state = start.snapshot.state;
        annex = start.snapshot.annex;
        revision = start.snapshot.revision;
        hash = start.snapshot.eventHash;
        page = start.events;
      }
    }
    const base = revision;
    let last: RecordedEvent | undefined;
    for await (const events of readStreamPages(store, streamId, {
      fromRevision: revision + 1,
      pageSize,
      firstPage: page,
    })) {
      for (const e of events) {
        state = decider.evolve(state, { type: e.type, data: e.data } as Event);
        if (snapshots) annex = snapshots.evolveAnnex(annex, e);
        revision = e.revision;
        hash = e.metadata.hash;
        last = e;
      }
    }
    // Known exactly when the stream has an event (a stream that does not exist is not cached).
    if (hash !== undefined) cache.set(streamId, state, revision, hash, annex);
    if (snapshots && last && snapshots.dueAfterLoad(base, revision))
      snapshots.take(streamId, state, annex, revision, last.metadata.hash);
    return { state, revision, annex };
  };

  const handle = async (
    streamId: string,
    command: Command,
    context: Context | ContextOf<State, Context>,
    handleOptions: HandleOptions = {},
  ): Promise<HandleResult<State, Event>> => {
    for (let attempt = 1; ; attempt++) {
      // The first attempt may decide on the cached state alone (see `trustCache`); retries always re-read.
      const cached = trustCache && attempt === 1 ? cache.get(streamId) : undefined;
      const { state, revision, annex: annexBefore } = cached ?? (await load(streamId));
      const ctx =
        typeof context === 'function'
          ? await (context as ContextOf<State, Context>)(state, revision)
          : context;
      let events: Event[];
      let after: State | undefined;
      try {
        if (decider.decideWithState) {
          const decided = decider.decideWithState(command, state, ctx);
          events = decided.events;
          after = decided.state;
        } else {
          events = decider.decide(command, state, ctx);
        }
      } catch (error) {
        // A refusal on a state from the cache alone could be the cache's fault: decide again on the stream.
        if (cached) continue;
        throw error;
      }
      if (events.length === 0) {
        if (cached) continue;
        return { events, state, revision };
      }
      const expected = handleOptions.expectedRevision ?? (revision === -1 ? 'no_stream' : revision);
      try {
        const append = await store.append(
          streamId,
          events.map((e) => ({ type: e.type, data: e.data, metadata: handleOptions.metadata })),
          { expectedRevision: expected },
        );
        let next = after ?? state;
        if (after === undefined) for (const e of events) next = decider.evolve(next, e);
        let annex = annexBefore;
        if (snapshots) for (const e of append.events) annex = snapshots.evolveAnnex(annex, e);
        cache.set(streamId, next, append.nextRevision, append.lastHash, annex);
        if (snapshots?.due(revision, append.nextRevision))
          snapshots.take(streamId, next, annex, append.nextRevision, append.lastHash);
        return { events, state: next, revision: append.nextRevision, append };
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        cache.delete(streamId);
        if (handleOptions.expectedRevision !== undefined || attempt >= maxAttempts) throw error;
        // A conflict on a state taken from the cache alone only means the cache was behind: re-read at once.
        if (cached) continue;
        const delay = backoffDelayMs(attempt - 1, {
          baseMs: backoffMs,
          maxMs: Number.POSITIVE_INFINITY,
          jitter: 0.5,
        });
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  };

  return { handle, load, forget: (id) => cache.delete(id) };
};
