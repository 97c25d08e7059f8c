/**
 * Pure aggregate deciders (ARCHITECTURE §2.2, Emmett's `Decider`): `decide(command, state, context)` returns the
 * new events or throws a {@link DomainError}; `evolve(state, event)` folds one event into the state. No I/O, no
 * clock, no randomness inside: time, prices and ids arrive in the context, so the same decider runs live, in
 * backtests and in historical battles.
 */
export interface Decider<State, Command, Event extends DomainEvent, Context> {
  /** The state of a stream that has no events yet. */
  initialState: () => State;
  /** Folds one event into the state; must not mutate `state`. */
  evolve: (state: State, event: Event) => State;
  /** Decides which events a command causes; throws `DomainError` to refuse it (nothing is appended). */
  decide: (command: Command, state: State, context: Context) => Event[];
}

/** An event as the domain sees it: a discriminated union member `{ type, data }` (past-tense `type`). */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
}

/**
 * What every command context carries (ARCHITECTURE §4): business time (`now`, virtual in backtests) and an id
 * source. Capabilities extend it with prices and the like.
 */
export interface BaseContext {
  /** Business time of the command (wall clock live, virtual clock in backtests). */
  now: Date;
  /** Returns a fresh unique id (UUID v4 live; deterministic in tests and replays). */
  newId: () => string;
}

/** Folds a sequence of events from the initial state: the state a stream's history implies. */
export const foldEvents = <State, Event extends DomainEvent>(
  decider: Pick<Decider<State, never, Event, never>, 'initialState' | 'evolve'>,
  events: Iterable<Event>,
  from: State = decider.initialState(),
): State => {
  let state = from;
  for (const event of events) state = decider.evolve(state, event);
  return state;
};
