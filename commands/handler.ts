import type { Decider, DomainEvent } from '../domain/shared/decider';
import {
  type AppendResult,
  type EventMetadataInput,
  type EventStore,
  type ExpectedRevision,
  WrongExpectedRevisionError,
} from '../ports/event-store';
import { StateCache } from './state-cache';

/** Options of {@link createCommandHandler}. */
export interface CommandHandlerOptions {
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

/** A command handler for one decider: `handle(streamId, command, context)`. */
export interface CommandHandler<State, Command, Event extends DomainEvent, Context> {
  handle(
    streamId: string,
    command: Command,
    context: Context | (() => Context),
    options?: HandleOptions,
  ): Promise<HandleResult<State, Event>>;
  /** Current state of a stream (through the cache) and its revision (-1 when absent). */
  load(streamId: string): Promise<{ state: State; revision: number }>;
  /** Forgets a stream's cached state (after it was deleted or reset out of band). */
  forget(streamId: string): void;
}

/**
 * The write-side workflow (ARCHITECTURE §4, Emmett's `CommandHandler`): load the stream (through a bounded
 * state cache, reading only events after the cached revision), call the pure decider with the injected context,
 * append with the expected revision, and on a conflict reload and decide again (bounded attempts, jittered
 * back-off). With `trustCache` (default) a cached state is decided on without a read first; anything but a
 * successful append (a conflict, a refusal, no events) is then decided again on the re-read stream. A context given as a function is rebuilt on every attempt (fresh prices and time).
 * Throws the decider's `DomainError` unchanged; throws `WrongExpectedRevisionError` after the last attempt.
 */
export const createCommandHandler = <State, Command, Event extends DomainEvent, Context>(
  store: EventStore,
  decider: StatefulDecider<State, Command, Event, Context>,
  options: CommandHandlerOptions = {},
): CommandHandler<State, Command, Event, Context> => {
  const cache = new StateCache<State>(options.cacheSize ?? 10_000);
  const maxAttempts = options.maxAttempts ?? 8;
  const backoffMs = options.backoffMs ?? 2;
  const trustCache = options.trustCache ?? true;

  const load = async (streamId: string): Promise<{ state: State; revision: number }> => {
    const cached = cache.get(streamId);
    let state = cached?.state ?? decider.initialState();
    let revision = cached?.revision ?? -1;
    const events = await store.readStream(streamId, { fromRevision: revision + 1 });
    for (const e of events) {
      state = decider.evolve(state, { type: e.type, data: e.data } as Event);
      revision = e.revision;
    }
    if (events.length > 0 || cached) cache.set(streamId, state, revision);
    return { state, revision };
  };

  const handle = async (
    streamId: string,
    command: Command,
    context: Context | (() => Context),
    handleOptions: HandleOptions = {},
  ): Promise<HandleResult<State, Event>> => {
    for (let attempt = 1; ; attempt++) {
      // The first attempt may decide on the cached state alone (see `trustCache`); retries always re-read.
      const cached = trustCache && attempt === 1 ? cache.get(streamId) : undefined;
      const { state, revision } = cached ?? (await load(streamId));
      const ctx = typeof context === 'function' ? (context as () => Context)() : context;
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
        cache.set(streamId, next, append.nextRevision);
        return { events, state: next, revision: append.nextRevision, append };
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        cache.delete(streamId);
        if (handleOptions.expectedRevision !== undefined || attempt >= maxAttempts) throw error;
        // A conflict on a state taken from the cache alone only means the cache was behind: re-read at once.
        if (cached) continue;
        const delay = backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random());
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  };

  return { handle, load, forget: (id) => cache.delete(id) };
};
