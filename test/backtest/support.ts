import type { SteppedEvent } from '../../commands/backtest';
import type { BacktestCatalog, BacktestCommand, BacktestRequest } from '../../domain/backtest/commands';
import { BACKTEST_STEPPED_ELIDED } from '../../domain/backtest/events';
import { buildSessionMarket, type SessionMarket } from '../../domain/backtest/market';
import type { Candle } from '../../domain/market/candle';
import { normalizeDecimal } from '../../domain/market/decimal';
import { INTERVAL_MS, type Interval } from '../../domain/market/intervals';
import { DEFAULT_RISK_PROFILE } from '../../domain/shared/risk-profile';
import type { PairFilters } from '../../domain/trading/quantity';
import { decodeDataText } from '../../src/eventstore/data-text';
import { canonicalJson } from '../../src/eventstore/hash-chain';
import { PAIRS } from '../trading/support';

export const H = 3_600_000;
/** 2024-01-01T00:00:00Z */
export const T0 = Date.UTC(2024, 0, 1);

const d8 = (v: string | number): string => normalizeDecimal(String(v))!;

/** A candle from plain numbers: [open, high, low, close] and a volume. */
export const candle = (openTime: number, ohlc: [number, number, number, number], volume = 100): Candle => ({
  openTime,
  open: d8(ohlc[0]),
  high: d8(ohlc[1]),
  low: d8(ohlc[2]),
  close: d8(ohlc[3]),
  volume: d8(volume),
  quoteVolume: null,
  tradeCount: null,
});

/** Hourly candles from `start`, one per OHLC tuple (a `null` leaves a gap). */
export const series = (
  start: number,
  ohlc: ([number, number, number, number] | null)[],
  interval = H,
): Candle[] => ohlc.flatMap((p, i) => (p ? [candle(start + i * interval, p, 1_000_000)] : []));

/** A market of BTCUSDT and ETHUSDT (filters of the trading tests). */
export const testMarket = (candles: Record<string, Candle[]>, interval: Interval = '1h'): SessionMarket =>
  buildSessionMarket(
    interval,
    Object.entries(candles).map(([symbol, list]) => ({
      filters: PAIRS[symbol] as PairFilters,
      candles: list,
    })),
  );

/** A catalog over the same candles. */
export const testCatalog = (
  candles: Record<string, Candle[]>,
  interval: Interval = '1h',
): BacktestCatalog => ({
  pair: (symbol) => PAIRS[symbol],
  range: (symbol, i) => {
    const list = candles[symbol];
    if (!list?.length || i !== interval) return undefined;
    return { earliest: list[0]!.openTime, latest: list[list.length - 1]!.openTime + INTERVAL_MS[interval] };
  },
  symbolsWithData: (i) => (i === interval ? Object.keys(candles).sort() : []),
  candleCount: (symbol, i, start, end) =>
    i === interval
      ? (candles[symbol] ?? []).filter((c) => c.openTime >= start && c.openTime < end).length
      : 0,
});

/** Sequential ids `id-1`, `id-2`, … */
export const sequentialIds = (prefix = 'id') => {
  let n = 0;
  return () => `${prefix}-${++n}`;
};

/**
 * The `CreateBacktest` command of the decider and stepper tests: session `sessionId` of account `acc` and agent
 * `agent`, fee rate 0.1 %, under the default risk profile with the order and position size limits at 100 % (one
 * order may take the whole balance); `request` is the configuration as a client sent it.
 */
export const createBacktestCommand = (
  sessionId: string,
  request: BacktestRequest,
): Extract<BacktestCommand, { type: 'CreateBacktest' }> => ({
  type: 'CreateBacktest',
  data: {
    sessionId,
    accountId: 'acc',
    agentId: 'agent',
    request,
    riskProfile: { ...DEFAULT_RISK_PROFILE, max_order_size_pct: 100, max_position_size_pct: 100 },
    feeRate: '0.001',
  },
});

/**
 * Events as they would be stored, as one text to compare: a `BacktestStepped` as the canonical text of its whole
 * data (the bytes a stepping thread encoded, `dataText`, or the in-process event's `canonicalJson`) and the data the
 * command handler folds and answers from (without the packed equity a thread leaves out), every other event as it
 * is. A stepper's answer and the in-process decider's events give the same text when the append would store the
 * same events and the handler would read the same data.
 */
export const stored = (events: readonly unknown[]): string =>
  JSON.stringify(
    (events as SteppedEvent[]).map((e) => {
      if (e.type !== 'BacktestStepped') return e;
      const { [BACKTEST_STEPPED_ELIDED.key]: _packed, ...read } = e.data as Record<string, unknown>;
      return { type: e.type, text: e.dataText ? decodeDataText(e.dataText) : canonicalJson(e.data), read };
    }),
  );
