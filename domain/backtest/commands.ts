import type { FillModelName } from '../fill-model/model';
import type { Interval } from '../market/intervals';
import type { BaseContext } from '../shared/decider';
import type { RiskProfile } from '../shared/risk-profile';
import type { PairFilters } from '../trading/quantity';
import type { OrderRequest } from '../wallet/commands';
import type { SessionMarket } from './market';

/** The configuration as the client sent it (spec `POST /backtest/create`), times already parsed to ms. */
export interface BacktestRequest {
  startTime: number;
  endTime: number;
  /** Checked by the decider against the intervals the venue serves. */
  candleInterval: string;
  startingBalance: string | number;
  strategyLabel: string | null;
  /** Symbols in any case, or null for every pair with data in the range. */
  pairs: string[] | null;
}

/** Commands of the backtest aggregate. */
export type BacktestCommand =
  /** `POST /backtest/create`: validates the configuration against the data, records it. */
  | {
      type: 'CreateBacktest';
      data: {
        sessionId: string;
        accountId: string;
        agentId: string;
        request: BacktestRequest;
        riskProfile: RiskProfile;
        feeRate: string;
        /** The maker fee rate in effect (absent: `feeRate`). */
        makerFeeRate?: string | undefined;
        /** The agent wallet's fill model, fixed for the session (absent: `instant`, as sessions before it). */
        fillModel?: FillModelName | undefined;
        /** The agent wallet's participation share (%), fixed for the session (absent: 10). */
        participationPct?: number | undefined;
      };
    }
  /**
   * `POST /backtest/{id}/start`: the session's candles are in the context's `market`; `loadError` says why they
   * could not be loaded (the session then fails). `fingerprint` identifies the loaded candles.
   */
  | { type: 'StartBacktest'; data: { fingerprint: string; loadError?: string } }
  /** `POST /backtest/{id}/step` (steps 1) and `/step/batch`. */
  | { type: 'StepBacktest'; data: { steps: number } }
  /** `POST /backtest/{id}/trade/order`: the live order rules at virtual time. */
  | { type: 'PlaceSandboxOrder'; data: { order: OrderRequest } }
  /** `DELETE /backtest/{id}/trade/order/{order_id}`. */
  | { type: 'CancelSandboxOrder'; data: { orderId: string } }
  /** `POST /backtest/{id}/cancel`: ends the session, partial results. */
  | { type: 'CancelBacktest'; data: Record<string, never> };

/** What market data says about pairs when a session is created. */
export interface BacktestCatalog {
  /** A known pair's filters; undefined for an unknown symbol. */
  pair(symbol: string): PairFilters | undefined;
  /** First open time and end of the last candle (ms) of a pair's data at `interval`; undefined without data. */
  range(symbol: string, interval: Interval): { earliest: number; latest: number } | undefined;
  /** Symbols with data at `interval`, sorted. */
  symbolsWithData(interval: Interval): string[];
  /**
   * How many `interval` candles of a pair open in [start, end) (ms): a window can fall into a hole of the data
   * (the files have one between the 2020 minute candles and the 2021 hourly ones) while the overall range spans it.
   */
  candleCount(symbol: string, interval: Interval, start: number, end: number): number;
}

/**
 * The context of a backtest command (ARCHITECTURE §4): `now` is the wall clock (creation, start and end
 * stamps); the virtual clock comes from the session's own state. `newId` must be deterministic for replays
 * (the command layer derives ids from the session and revision). `market` (the session's candles) is needed by
 * start, step and orders; `catalog` by create.
 */
export interface BacktestContext extends BaseContext {
  market?: SessionMarket;
  catalog?: BacktestCatalog;
}
