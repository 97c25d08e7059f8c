import type { FillModelName } from '../fill-model/model';
import type { Interval } from '../market/intervals';
import { maxOfPacked, packUnits } from '../metrics/equity-points';
import type { DomainEvent } from '../shared/decider';
import type { RiskProfile } from '../shared/risk-profile';
import { WALLET_EVENT_TYPES, type WalletEvent } from '../wallet/events';

/**
 * Events of the `backtest-{session_id}` stream (ARCHITECTURE §4, §9; catalogue in `docs/events.md`): the session's
 * configuration, start, every step or batch (from, to, virtual time and the equity at each step), completion,
 * cancel or failure — and, interleaved, the sandbox wallet's own events (`WalletOpened`, `OrderPlaced`,
 * `OrderFilled`, ...), the same types a live wallet records, with every time field in virtual time. Money is
 * decimal strings with 8 places; times ISO 8601 UTC.
 */
export type BacktestEvent =
  | DomainEvent<'BacktestCreated', BacktestCreatedData>
  | DomainEvent<'BacktestStarted', BacktestStartedData>
  | DomainEvent<'BacktestStepped', BacktestSteppedData | BacktestSteppedDataV2 | BacktestSteppedDataV1>
  | DomainEvent<'BacktestCompleted', BacktestEndedData>
  | DomainEvent<'BacktestCancelled', BacktestEndedData>
  | DomainEvent<'BacktestFailed', BacktestFailedData>;

/** Everything a backtest stream holds. */
export type BacktestStreamEvent = BacktestEvent | WalletEvent;

/** A session was created (status `created`). */
export interface BacktestCreatedData {
  /** `bt_` + 32 hex digits. */
  session_id: string;
  account_id: string;
  /** The agent whose risk profile the sandbox copies (and who owns the session with the account). */
  agent_id: string;
  strategy_label: string | null;
  start_time: string;
  end_time: string;
  candle_interval: Interval;
  /** USDT. */
  starting_balance: string;
  /** The pairs the session trades, resolved (null in the request means every pair with data). */
  pairs: string[];
  /** What the client asked for: a list, or null for all pairs. */
  pairs_requested: string[] | null;
  /** floor((end − start) / interval). */
  total_steps: number;
  /** Copied from the agent at creation. */
  risk_profile: RiskProfile;
  /** Fee per fill as a fraction of notional, fixed for the session: the taker rate (and every fill's before maker rates). */
  fee_rate: string;
  /**
   * The maker rate (resting limit fills), fixed for the session (docs/trading-rules.md, "Fees by liquidity"); absent
   * (sessions created before 2026-11-28): `fee_rate`, as those sessions charged.
   */
  maker_fee_rate?: string;
  /**
   * The agent wallet's fill model at creation, which the sandbox wallet fills with; absent (sessions created before
   * 2026-11-25): `instant`.
   */
  fill_model?: FillModelName;
  /**
   * The agent wallet's participation share (%) at creation, which the sandbox's resting orders fill with under
   * `realistic`; absent (sessions created before 2026-11-28): 10, the default they filled with.
   */
  participation_pct?: number;
  /** Wall clock. */
  created_at: string;
}

/** What was loaded for one pair at start. */
export interface LoadedPair {
  symbol: string;
  /** Candles of the session's interval loaded (every candle up to `end_time`, history before the start included). */
  candles: number;
  /** Open time of the first and last candle loaded. */
  first_open_time: string | null;
  last_open_time: string | null;
}

/** The session started (status `running`): candles in memory, the virtual clock at `start_time`. */
export interface BacktestStartedData {
  session_id: string;
  /** Virtual time after the start: `start_time`. */
  virtual_time: string;
  total_steps: number;
  pairs: LoadedPair[];
  /** SHA-256 (hex) over every loaded candle: a continuation after a restart checks it still holds. */
  data_fingerprint: string;
  /** Wall clock (the base of `duration_real_seconds`). */
  started_at: string;
}

/**
 * The virtual clock advanced from step `from_step` to `to_step` (one step or a batch). The sandbox's fills and
 * gap cancels of those candles precede this event in the same append. Version 2 (metadata `schema_version` 2,
 * since 2026-11-29): the equity at steps `from_step + 1` … `to_step` (at virtual time `start_time + step ×
 * interval`) as one packed text, `equity_units` (`packUnits` of `domain/metrics/equity-points.ts`: integer 1e-8
 * units, each step's difference from the one before, `d*n` for a run of n equal differences), instead of version
 * 1's one string per step; a batch of 100,000 steps is one string instead of 100,000. Version 3 (`schema_version`
 * 3, since 2026-11-29) adds the points' peak, `equity_peak`. Old events are read through
 * {@link upcastBacktestStepped}.
 */
export interface BacktestSteppedData {
  session_id: string;
  from_step: number;
  to_step: number;
  from_time: string;
  to_time: string;
  /** The equity at each step (`to_step − from_step` points), packed (see above). */
  equity_units: string;
  /**
   * The highest of those points, 8-place decimal (`maxOfPacked` of `equity_units`; "0" without a point). Version 3
   * (since 2026-11-29): computed where the points are made (the stepping thread), so the read model's fold, which
   * records it as its row's peak, does not walk the text on the request thread.
   */
  equity_peak: string;
  /** Fills during these steps. */
  fills: number;
}

/** Version 2 of {@link BacktestSteppedData} (events recorded on 2026-11-29 before version 3): no `equity_peak`. */
export type BacktestSteppedDataV2 = Omit<BacktestSteppedData, 'equity_peak'>;

/**
 * Version 1 of {@link BacktestSteppedData} (events recorded before 2026-11-29): `equity[i]` is the equity at step
 * `from_step + 1 + i`, an 8-place decimal string.
 */
export interface BacktestSteppedDataV1 extends Omit<BacktestSteppedData, 'equity_units' | 'equity_peak'> {
  equity: string[];
}

/** The schema version `BacktestStepped` is recorded with (metadata `schema_version`). */
export const BACKTEST_STEPPED_VERSION = 3;

/**
 * The large field of `BacktestStepped` the venue's subscriptions are handed without (`ElidedField` in
 * `ports/event-store.ts`; issue 24): a version 3 event's `equity_units` (~0.6–1.1 MB per 100,000 steps), which only
 * the `backtests` projection reads, and which it copies in the database from the stored event. A version 2 event
 * keeps it (its peak is computed from it when folded).
 */
export const BACKTEST_STEPPED_ELIDED = {
  type: 'BacktestStepped',
  key: 'equity_units',
  onlyWith: 'equity_peak',
} as const;

/** The peak of a batch's packed points, as `BacktestStepped` version 3 records it. */
export const equityPeakOf = (equityUnits: string): string => maxOfPacked(equityUnits) ?? '0';

/**
 * `BacktestStepped` data of any version as version 3 (the same points packed, and their peak: an upcast version-1
 * or version-2 event gives exactly the data the decider records today for the same steps). Told apart by shape
 * (`equity`, or `equity_units` without `equity_peak`), so the fold needs no metadata.
 */
export const upcastBacktestStepped = (
  data: BacktestSteppedData | BacktestSteppedDataV2 | BacktestSteppedDataV1,
): BacktestSteppedData => {
  if ('equity' in data) {
    const { equity, fills, ...rest } = data;
    const equity_units = packUnits(equity);
    return { ...rest, equity_units, equity_peak: equityPeakOf(equity_units), fills };
  }
  if ('equity_peak' in data) return data;
  const { fills, ...rest } = data;
  return { ...rest, equity_peak: equityPeakOf(data.equity_units), fills };
};

/**
 * The session ended: completed on its last step, or cancelled (partial results). `final_prices` are the closes
 * of every pair's last candle closed by `virtual_time` (the marks of open positions in the results).
 */
export interface BacktestEndedData {
  session_id: string;
  step: number;
  virtual_time: string;
  final_equity: string;
  final_prices: Record<string, string>;
  /** Wall clock. */
  ended_at: string;
  /** Wall-clock seconds from start to end (3 decimal places); 0 for a session never started. */
  duration_real_seconds: string;
}

/** The session could not start: its data could not be loaded (status `failed`). */
export interface BacktestFailedData {
  session_id: string;
  reason: string;
  failed_at: string;
}

/** The backtest's own event types (projections add the wallet types of `backtest-` streams). */
export const BACKTEST_EVENT_TYPES = [
  'BacktestCreated',
  'BacktestStarted',
  'BacktestStepped',
  'BacktestCompleted',
  'BacktestCancelled',
  'BacktestFailed',
] as const satisfies readonly BacktestEvent['type'][];

/** Every event type a backtest stream may hold. */
export const BACKTEST_STREAM_EVENT_TYPES = [...BACKTEST_EVENT_TYPES, ...WALLET_EVENT_TYPES] as const;

/** The stream category of backtests. */
export const BACKTEST_CATEGORY = 'backtest';

/** Stream of one session. */
export const backtestStreamId = (sessionId: string): string => `${BACKTEST_CATEGORY}-${sessionId}`;

/** The session id of a backtest stream, or undefined for another stream. */
export const backtestOf = (streamId: string): string | undefined =>
  streamId.startsWith(`${BACKTEST_CATEGORY}-`) ? streamId.slice(BACKTEST_CATEGORY.length + 1) : undefined;

/** Shape of a session id: `bt_` and 32 lower-case hex digits. */
export const SESSION_ID_PATTERN = /^bt_[0-9a-f]{32}$/;

/** True when a stream event is one of the backtest's own (not a sandbox wallet event). */
export const isBacktestEvent = (e: BacktestStreamEvent): e is BacktestEvent => e.type.startsWith('Backtest');
