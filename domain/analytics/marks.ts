import type { Decider, DomainEvent } from '../shared/decider';

/**
 * Recorded marks (docs/analytics.md): the prices the equity snapshots value positions at. The market feed is not
 * in the event log, so a snapshot taken "at live prices" could not be rebuilt from it; recording the prices
 * once per minute as an event makes every snapshot a function of the log alone (ARCHITECTURE §2.1, §6).
 */

/** One price of a `MarksRecorded` event. Decimal strings with 8 places; times ISO 8601 UTC. */
export interface MarkPrice {
  symbol: string;
  /** USDT per unit of the base asset, as the price cache held it. */
  price: string;
  /** When the market published that price, and its source (`files`, `binance`, `synthetic`). */
  price_time: string;
  source: string;
}

/** The prices of every symbol held by some wallet at minute `at` (ISO 8601 UTC, whole minute). */
export interface MarksRecordedData {
  at: string;
  marks: MarkPrice[];
}

export type MarksEvent = DomainEvent<'MarksRecorded', MarksRecordedData>;

/** Record the marks of one minute. `at` must be a whole minute (ms divisible by 60,000). */
export interface RecordMarks {
  type: 'RecordMarks';
  data: MarksRecordedData;
}

/** State of one `marks-{day}` stream: the last minute recorded, if any. */
export interface MarksState {
  lastAt: string | null;
}

/** Every event type of the marks streams, for projections' `eventTypes`. */
export const MARKS_EVENT_TYPES = ['MarksRecorded'] as const satisfies readonly MarksEvent['type'][];

/** The stream category of recorded marks. */
export const MARKS_CATEGORY = 'marks';

const MINUTE_MS = 60_000;

/**
 * Stream of the marks of one UTC day (`marks-YYYY-MM-DD`): at most 1,440 events, so a writer loads a short
 * stream and optimistic concurrency makes a minute recorded by two processes appear once.
 */
export const marksStreamId = (at: Date): string => `${MARKS_CATEGORY}-${at.toISOString().slice(0, 10)}`;

/** The whole minute at or before `ms` (ms since the epoch). */
export const minuteOf = (ms: number): number => Math.floor(ms / MINUTE_MS) * MINUTE_MS;

/**
 * The marks decider: a minute is recorded once (a later or repeated `RecordMarks` for a minute at or before the
 * last one recorded decides nothing), so two snapshotters racing for the same minute leave one event.
 */
export const marksDecider: Decider<MarksState, RecordMarks, MarksEvent, unknown> = {
  initialState: () => ({ lastAt: null }),
  evolve: (_state, event) => ({ lastAt: event.data.at }),
  decide: (command, state) => {
    const at = Date.parse(command.data.at);
    if (!Number.isFinite(at) || at % MINUTE_MS !== 0) {
      throw new RangeError(`marks must be recorded at a whole minute, got ${command.data.at}`);
    }
    if (state.lastAt !== null && Date.parse(state.lastAt) >= at) return [];
    return [{ type: 'MarksRecorded', data: command.data }];
  },
};
