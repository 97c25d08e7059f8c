import { expect } from 'vitest';
import type { Decider, DomainEvent } from '../../domain/shared/decider';
import { DomainError, type ErrorCode } from '../../domain/shared/errors';

/**
 * Given/when/then for pure deciders (STYLE: Emmett's `DeciderSpecification`):
 * `spec.given(pastEvents).when(command, context).then(newEvents)` or `.thenThrows(code)`.
 */
export const deciderSpec = <State, Command, Event extends DomainEvent, Context>(
  decider: Decider<State, Command, Event, Context>,
) => ({
  given: (events: Event[]) => ({
    when: (command: Command, context: Context) => {
      const run = () => {
        let state = decider.initialState();
        for (const e of events) state = decider.evolve(state, e);
        return { state, produced: decider.decide(command, state, context) };
      };
      return {
        /** Asserts the decider produced exactly `expected` (deep equality, order kept). */
        thenEmits: (expected: Event[]) => {
          expect(run().produced).toEqual(expected);
        },
        /** Asserts on the produced events and the state they lead to. */
        thenAssert: (check: (produced: Event[], stateAfter: State) => void) => {
          const { state, produced } = run();
          let after = state;
          for (const e of produced) after = decider.evolve(after, e);
          check(produced, after);
        },
        /** Asserts the decider refused with a `DomainError` of `code` (and matching `details` when given). */
        thenThrows: (code: ErrorCode, details?: Record<string, unknown>) => {
          let thrown: unknown;
          try {
            run();
          } catch (error) {
            thrown = error;
          }
          expect(thrown).toBeInstanceOf(DomainError);
          expect((thrown as DomainError).code).toBe(code);
          if (details) expect((thrown as DomainError).details).toMatchObject(details);
        },
      };
    },
  }),
});
