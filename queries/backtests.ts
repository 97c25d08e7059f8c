import { type Kysely, sql } from 'kysely';
import { compare8, unpackUnits } from '../domain/metrics/equity-points';
import type { BacktestStatusValue } from '../projections/backtests';
import { asNullableText, asText } from '../projections/columns';
import type { ReadModels } from '../projections/read-models';

/** A session row as the queries return it (numerics as text, times as dates). */
export type BacktestRow = NonNullable<Awaited<ReturnType<typeof getBacktest>>>;

const columns = [
  'session_id',
  'account_id',
  'agent_id',
  'strategy_label',
  'status',
  'candle_interval',
  'start_time',
  'end_time',
  sql<string>`starting_balance::text`.as('starting_balance'),
  'pairs',
  'total_steps',
  'step',
  'virtual_time',
  'created_at',
  'started_at',
  'ended_at',
  'failure_reason',
  ...asNullableText(
    'final_equity',
    'roi_pct',
    'sharpe_ratio',
    'sortino_ratio',
    'max_drawdown_pct',
    'win_rate',
    'profit_factor',
  ),
  'total_trades',
  'results',
] as const;

/** The ids of every session of an agent, whatever its status (what its deletion deletes with it). */
export const backtestIdsOfAgent = async (db: Kysely<ReadModels>, agentId: string): Promise<string[]> =>
  (
    await db
      .selectFrom('backtests')
      .select('session_id')
      .where('agent_id', '=', agentId)
      .orderBy('session_id')
      .execute()
  ).map((r) => r.session_id);

/** One session's row, or undefined. */
export const getBacktest = (db: Kysely<ReadModels>, sessionId: string) =>
  db.selectFrom('backtests').select(columns).where('session_id', '=', sessionId).executeTakeFirst();

/** Whose sessions a list or search covers: an account, or one of its agents. */
export interface BacktestScope {
  accountId: string;
  agentId?: string | null;
}

/** Sort keys of `GET /backtest/list` (descending; sessions without the metric last). */
export type BacktestSort = 'roi_pct' | 'sharpe_ratio' | 'created_at';

/** Sessions of a scope, filtered and sorted (ties: newest first, then by id). */
export const listBacktests = async (
  db: Kysely<ReadModels>,
  scope: BacktestScope,
  options: {
    strategyLabel?: string;
    status?: BacktestStatusValue;
    sortBy: BacktestSort;
    limit: number;
    offset?: number;
  },
) => {
  let q = db.selectFrom('backtests').where('account_id', '=', scope.accountId);
  if (scope.agentId) q = q.where('agent_id', '=', scope.agentId);
  if (options.strategyLabel !== undefined) q = q.where('strategy_label', '=', options.strategyLabel);
  if (options.status) q = q.where('status', '=', options.status);
  const total = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  let sorted = q.select(columns);
  sorted =
    options.sortBy === 'created_at'
      ? sorted.orderBy('created_at', 'desc')
      : sorted
          .orderBy(sql`${sql.ref(`backtests.${options.sortBy}`)} desc nulls last`)
          .orderBy('created_at', 'desc');
  const rows = await sorted
    .orderBy('session_id')
    .limit(options.limit)
    .offset(options.offset ?? 0)
    .execute();
  return { rows, total: Number(total.n) };
};

/** Metrics `GET /backtest/best` can rank by (higher is better). */
export type BestMetric = 'roi_pct' | 'sharpe_ratio' | 'win_rate' | 'profit_factor';

/** The completed session of a scope with the highest `metric` (ties: the earliest created), or undefined. */
export const bestBacktest = (
  db: Kysely<ReadModels>,
  scope: BacktestScope,
  metric: BestMetric,
  strategyLabel?: string,
) => {
  let q = db
    .selectFrom('backtests')
    .select(columns)
    .where('account_id', '=', scope.accountId)
    .where('status', '=', 'completed')
    .where(`backtests.${metric}`, 'is not', null);
  if (scope.agentId) q = q.where('agent_id', '=', scope.agentId);
  if (strategyLabel !== undefined) q = q.where('strategy_label', '=', strategyLabel);
  // Qualified: the selected text aliases have the same names and would sort as text.
  return q
    .orderBy(`backtests.${metric}`, 'desc')
    .orderBy('created_at')
    .orderBy('session_id')
    .limit(1)
    .executeTakeFirst();
};

/**
 * A page of a session's equity curve, oldest first (`rows`: step, time, equity as 8-place text), the number of
 * points, and the highest equity before the page (`peakBefore`), from the packed rows of `backtest_equity` (a row
 * per batch, `projections/backtests.ts`): only the rows the page overlaps are read and unpacked; the peak before
 * it is the rows' `peak` before those, and the points of the first one before the page.
 */
export const equityCurve = async (
  db: Kysely<ReadModels>,
  sessionId: string,
  page: { limit: number; offset: number },
) => {
  // Each row's index in the curve (points before it), without reading the packed texts.
  const index = await db
    .selectFrom('backtest_equity')
    .select([
      'from_step',
      'points',
      sql<string>`peak::text`.as('peak'),
      sql<number>`(sum(points) over (order by from_step) - points)::float8`.as('first'),
    ])
    .where('session_id', '=', sessionId)
    .orderBy('from_step')
    .execute();
  const total = index.reduce((n, r) => n + r.points, 0);
  const end = page.offset + page.limit;
  const overlapping = index.filter((r) => r.first < end && r.first + r.points > page.offset);
  let peakBefore: string | null = null;
  const higher = (v: string) => {
    if (peakBefore === null || compare8(v, peakBefore) > 0) peakBefore = v;
  };
  for (const r of index) if (r.first + r.points <= page.offset) higher(r.peak);
  const rows: { step: number; time: Date; equity: string }[] = [];
  if (overlapping.length > 0) {
    const packed = await db
      .selectFrom('backtest_equity')
      .select(['from_step', 'points', 'base_ms', 'interval_ms', 'equity'])
      .where('session_id', '=', sessionId)
      .where(
        'from_step',
        'in',
        overlapping.map((r) => r.from_step),
      )
      .orderBy('from_step')
      .execute();
    for (const [k, r] of packed.entries()) {
      const first = overlapping[k]!.first;
      const values = unpackUnits(r.equity);
      for (let j = 0; j < values.length; j++) {
        const at = first + j;
        if (at < page.offset) {
          higher(values[j]!);
          continue;
        }
        if (at >= end) break;
        rows.push({
          step: r.from_step + j,
          time: new Date(r.base_ms + (j + 1) * r.interval_ms),
          equity: values[j]!,
        });
      }
    }
  }
  return { rows, total, peakBefore: peakBefore as string | null };
};

/** A page of a session's trade log, in execution order. */
export const backtestTrades = async (
  db: Kysely<ReadModels>,
  sessionId: string,
  page: { limit: number; offset: number; symbol?: string },
) => {
  let q = db.selectFrom('backtest_trades').where('session_id', '=', sessionId);
  if (page.symbol) q = q.where('symbol', '=', page.symbol);
  const total = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q
    .select([
      'trade_id',
      'order_id',
      'symbol',
      'side',
      'type',
      'fill_trigger',
      ...asText(
        'quantity',
        'price',
        'notional',
        'fee',
        'total',
        'realized_pnl',
        'slippage_pct',
        'reference_price',
      ),
      'reference_time',
      'price_source',
      'executed_at',
    ])
    .orderBy('seq')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return { rows, total: Number(total.n) };
};
