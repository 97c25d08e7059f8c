import { type Kysely, sql } from 'kysely';
import {
  BACKTEST_STEPPED_ELIDED,
  BACKTEST_STREAM_EVENT_TYPES,
  type BacktestEndedData,
  type BacktestStreamEvent,
  backtestOf,
  equityPeakOf,
  upcastBacktestStepped,
} from '../domain/backtest/events';
import { fillFigures } from '../domain/backtest/sandbox-log';
import { INTERVAL_MS } from '../domain/market/intervals';
import { packUnits } from '../domain/metrics/equity-points';
import type { Performance } from '../domain/metrics/performance';
import type { MetricsFill } from '../domain/metrics/trades';
import type { RecordedEvent } from '../ports/event-store';
import {
  asText,
  deletedStreamOf,
  type Json,
  type NullableTimestamp,
  type Numeric,
  type Timestamp,
} from './columns';
import { COPY_TEXT, copyTextOf } from './copy-text';
import { declareTables, type TableDefinitions } from './ddl';
import { deleteRowsOf } from './entity-rows';
import { type EquityRowsText, type SessionPerformanceInput, sessionPerformance } from './equity-rows-text';
import type { TradesTable } from './orders';
import type { Projection } from './projection';

/** Status of a session (spec "Backtest session"). */
export type BacktestStatusValue = 'created' | 'running' | 'completed' | 'cancelled' | 'failed';

/** Results of an ended session (spec `GET /backtest/{id}/results`: `summary`, `metrics`, `by_pair`). */
export interface BacktestResults {
  summary: Performance['summary'] & { duration_real_seconds: string };
  metrics: Performance['metrics'];
  by_pair: Performance['by_pair'];
}

/** Row of `backtests`: one per session, its configuration, progress and, once ended, its results. */
export interface BacktestsTable {
  session_id: string;
  account_id: string;
  agent_id: string;
  strategy_label: string | null;
  status: BacktestStatusValue;
  candle_interval: string;
  start_time: Timestamp;
  end_time: Timestamp;
  starting_balance: Numeric;
  pairs: Json<string[]>;
  pairs_requested: Json<string[] | null>;
  total_steps: number;
  step: number;
  virtual_time: Timestamp;
  risk_profile: Json<Record<string, number>>;
  fee_rate: string;
  created_at: Timestamp;
  started_at: NullableTimestamp;
  ended_at: NullableTimestamp;
  failure_reason: string | null;
  final_equity: Numeric | null;
  roi_pct: Numeric | null;
  sharpe_ratio: Numeric | null;
  sortino_ratio: Numeric | null;
  max_drawdown_pct: Numeric | null;
  win_rate: Numeric | null;
  profit_factor: Numeric | null;
  total_trades: number;
  results: Json<BacktestResults | null>;
  updated_at: Timestamp;
}

/**
 * Row of `backtest_equity`: a run of consecutive steps' equity, packed (`domain/metrics/equity-points.ts`): the
 * start's row (step 0) and one row per `BacktestStepped` (one step, or a batch of up to 100,000). Point `j` of a
 * row is step `from_step + j`, at time `trunc(base_ms + (j + 1) × interval_ms)` (the batch's `from_time` and the
 * interval between its steps; interval 0 for the start's row, whose point is at `base_ms`).
 */
export interface BacktestEquityTable {
  session_id: string;
  from_step: number;
  points: number;
  base_ms: number;
  interval_ms: number;
  /** The highest equity of the row (a page's running peak before it). */
  peak: Numeric;
  /** The equity at each step packed as integer units and differences (`packUnits`, `domain/metrics/equity-points.ts`). */
  equity: string;
}

/**
 * Row of `backtest_trades`: one per sandbox fill, in execution order (`seq` = stream revision). A fill's columns are
 * those of a live fill in `trades` ({@link TradesTable}), with the time of the candle its reference price came from.
 */
export interface BacktestTradesTable extends Pick<TradesTable, BacktestFillColumn> {
  session_id: string;
  seq: number;
  reference_time: Timestamp;
}

/** The columns a sandbox fill shares with a live fill's row in `trades`. */
type BacktestFillColumn =
  | 'trade_id'
  | 'order_id'
  | 'symbol'
  | 'side'
  | 'type'
  | 'fill_trigger'
  | 'quantity'
  | 'price'
  | 'notional'
  | 'fee'
  | 'total'
  | 'realized_pnl'
  | 'slippage_pct'
  | 'reference_price'
  | 'price_source'
  | 'executed_at';

/** The read models of backtests (joined into `Database` in `src/db/schema.ts`). */
export interface BacktestTables {
  backtests: BacktestsTable;
  backtest_equity: BacktestEquityTable;
  backtest_trades: BacktestTradesTable;
}

type DB = Kysely<BacktestTables>;

/** The key of `BacktestStepped` a subscription may be handed without (`BACKTEST_STEPPED_ELIDED`). */
const ELIDED_KEY = BACKTEST_STEPPED_ELIDED.key;

interface EquityRow {
  session_id: string;
  from_step: number;
  points: number;
  base_ms: number;
  interval_ms: number;
  peak: string;
  /** The packed text; null when the event was handed without it (`elided`): copied from the event by `pos`. */
  equity: string | null;
  /** The event's global position (`events.global_position`) when `equity` is null. */
  pos?: string;
}

/**
 * The row of a run of `points` points packed by `packUnits` (a `BacktestStepped`'s `equity_units` as it is: the
 * fold copies the text), with its peak (the event's `equity_peak`: the fold does not walk the text).
 */
const equityRow = (
  sessionId: string,
  fromStep: number,
  baseMs: number,
  intervalMs: number,
  points: number,
  packed: string | { pos: string },
  peak: string,
): EquityRow => ({
  session_id: sessionId,
  from_step: fromStep,
  points,
  base_ms: baseMs,
  interval_ms: intervalMs,
  peak,
  ...(typeof packed === 'string' ? { equity: packed } : { equity: null, pos: packed.pos }),
});

/** Results of a session from its rows (deterministic: the event data only). */
const computeResults = async (
  db: DB,
  sessionId: string,
  ended: BacktestEndedData,
  performanceOf: PerformanceComputer,
): Promise<BacktestResults> => {
  const row = await db
    .selectFrom('backtests')
    .select(['start_time', 'candle_interval', 'starting_balance'])
    .where('session_id', '=', sessionId)
    .executeTakeFirstOrThrow();
  const interval = INTERVAL_MS[row.candle_interval as keyof typeof INTERVAL_MS];
  const start = new Date(row.start_time).getTime();
  // The rows as bytes (a server answers their COPY text as it arrives, PGlite's rows are written as the same text):
  // no string of a whole-year session's ~4.4 MB of packed equity and no point's time on this thread (the request
  // thread, where a fold runs); the metrics computer reads them (`packedEquityOfRows`) and builds the times
  // (issue 24).
  const { rows: equityRows } = await sql<Record<string, unknown>>`${sql.raw(COPY_TEXT)}
    select from_step, points, equity from backtest_equity where session_id = ${sessionId} order by from_step`.execute(
    db,
  );
  const equity: EquityRowsText = { start, stepMs: interval, rows: copyTextOf(equityRows) };
  const trades = await db
    .selectFrom('backtest_trades')
    .select([
      'symbol',
      'side',
      ...asText('quantity', 'price', 'notional', 'fee', 'realized_pnl'),
      'executed_at',
    ])
    .where('session_id', '=', sessionId)
    .orderBy('seq')
    .execute();
  const fills: MetricsFill[] = trades.map((t) => ({
    symbol: t.symbol,
    side: t.side,
    quantity: t.quantity,
    price: t.price,
    notional: t.notional,
    fee: t.fee,
    realizedPnl: t.realized_pnl,
    time: new Date(t.executed_at).getTime(),
  }));
  const performance = await performanceOf({
    startingBalance: row.starting_balance,
    equity,
    intervalMs: interval,
    fills,
    marks: ended.final_prices,
    // The equity at the end as the session measured it: a cancel after orders placed at virtual time includes
    // their fees and slippage, which no step's point does.
    finalEquity: ended.final_equity,
    period: { start, end: Date.parse(ended.virtual_time) },
  });
  return {
    summary: { ...performance.summary, duration_real_seconds: ended.duration_real_seconds },
    metrics: performance.metrics,
    by_pair: performance.by_pair,
  };
};

/**
 * Computes a session's results from its equity points and fills (`sessionPerformance`: the rows read as
 * `projections/equity-rows-text.ts` reads them, then `domain/metrics/performance.ts`): in process by default; the runtime passes one that runs on a worker thread (`src/backtest/metrics-pool.ts`), since a
 * whole-range session has tens of thousands of points and the projection runs on the request thread (issue 24,
 * item 4). Either gives the same figures: the function is pure. The projection hands the equity as
 * {@link EquityRowsText}, its bytes built for the call and not read after it, so a computer may take them (a worker
 * thread's transfer detaches them).
 */
export type PerformanceComputer = (input: SessionPerformanceInput) => Promise<Performance> | Performance;

/** The DDL of its read-model tables. */
const BACKTESTS_TABLES: TableDefinitions = {
  backtests: {
    columns: {
      session_id: 'text primary key',
      account_id: 'text not null',
      agent_id: 'text not null',
      strategy_label: 'text',
      status: 'text not null',
      candle_interval: 'text not null',
      start_time: 'timestamptz not null',
      end_time: 'timestamptz not null',
      starting_balance: 'numeric(38, 8) not null',
      pairs: 'jsonb not null',
      pairs_requested: 'jsonb',
      total_steps: 'integer not null',
      step: 'integer not null',
      virtual_time: 'timestamptz not null',
      risk_profile: 'jsonb not null',
      fee_rate: 'text not null',
      created_at: 'timestamptz not null',
      started_at: 'timestamptz',
      ended_at: 'timestamptz',
      failure_reason: 'text',
      final_equity: 'numeric(38, 8)',
      roi_pct: 'numeric(38, 8)',
      sharpe_ratio: 'numeric(38, 8)',
      sortino_ratio: 'numeric(38, 8)',
      max_drawdown_pct: 'numeric(38, 8)',
      win_rate: 'numeric(38, 8)',
      profit_factor: 'numeric(38, 8)',
      total_trades: 'integer not null',
      results: 'jsonb',
      updated_at: 'timestamptz not null',
    },
    indexes: {
      backtests_account: ['account_id', 'created_at'],
    },
  },
  backtest_equity: {
    columns: {
      session_id: 'text not null',
      from_step: 'integer not null',
      points: 'integer not null',
      base_ms: 'double precision not null',
      interval_ms: 'double precision not null',
      peak: 'numeric(38, 8) not null',
      equity: 'text not null',
    },
    primaryKey: ['session_id', 'from_step'],
  },
  backtest_trades: {
    columns: {
      session_id: 'text not null',
      seq: 'integer not null',
      trade_id: 'text not null',
      order_id: 'text not null',
      symbol: 'text not null',
      side: 'text not null',
      type: 'text not null',
      fill_trigger: 'text not null',
      quantity: 'numeric(38, 8) not null',
      price: 'numeric(38, 8) not null',
      notional: 'numeric(38, 8) not null',
      fee: 'numeric(38, 8) not null',
      total: 'numeric(38, 8) not null',
      realized_pnl: 'numeric(38, 8) not null',
      slippage_pct: 'numeric(38, 8) not null',
      reference_price: 'numeric(38, 8) not null',
      reference_time: 'timestamptz not null',
      price_source: 'text not null',
      executed_at: 'timestamptz not null',
    },
    primaryKey: ['session_id', 'seq'],
  },
};

/**
 * `backtests`, `backtest_equity`, `backtest_trades` (ARCHITECTURE §6, §9): sessions with their status and
 * progress, the equity at every step (the `equity_units` texts of `BacktestStepped`, a row per event, see
 * {@link BacktestEquityTable}), the sandbox's fills, and —
 * when a session completes or is cancelled — its results, computed from those rows by `domain/metrics` (a rebuild
 * recomputes them: a corrected formula reaches every past session). Rows are written in bulk: the equity, fills
 * and progress a batch adds go out in one statement.
 */
export const createBacktestsProjection = (
  options: { performance?: PerformanceComputer } = {},
): Projection => {
  const performanceOf = options.performance ?? sessionPerformance;
  return {
    name: 'backtests',
    // 2: `backtest_equity` packed, a row per batch instead of a row per step (issue 24); 3: the rows' `equity` in
    // packed units (`BacktestStepped` version 2's text) instead of decimals joined by commas; 4: results take the
    // ended event's `final_equity` (a cancel after orders placed at virtual time). The runner rebuilds.
    version: 4,
    ...declareTables(BACKTESTS_TABLES),
    eventTypes: [...BACKTEST_STREAM_EVENT_TYPES, 'StreamDeleted'],
    async apply(db: DB, events: readonly RecordedEvent[]) {
      let equity: EquityRow[] = [];
      let trades: Record<string, unknown>[] = [];
      /** Per session: the latest step of the batch and the fills it added. */
      const progress = new Map<
        string,
        { step?: number; virtual_time?: string; trades: number; at: string }
      >();
      const progressOf = (id: string, at: string) => {
        let p = progress.get(id);
        if (!p) {
          p = { trades: 0, at };
          progress.set(id, p);
        }
        p.at = at;
        return p;
      };

      /**
       * Writes what the batch gathered in one statement (one round trip, however many sessions and steps): the
       * equity rows and the fills are inserted by data-modifying CTEs, and each session's row gets its latest step,
       * virtual time, added fills and `updated_at` from the same statement.
       */
      const flush = async () => {
        if (equity.length === 0 && trades.length === 0 && progress.size === 0) return;
        const inserts = [];
        if (equity.length) {
          // A row handed without its text takes it from its stored event (`events`, found on the runner's
          // search path); one whose event is gone (its stream deleted since) is skipped: the deletion that
          // follows it in the log removes the session's rows anyway.
          const copied = equity.some((r) => r.equity === null);
          inserts.push(sql`equity_rows as (
          insert into backtest_equity (session_id, from_step, points, base_ms, interval_ms, peak, equity)
          select x.session_id, x.from_step, x.points, x.base_ms, x.interval_ms, x.peak,
                 ${copied ? sql`coalesce(x.equity, e.data->>${ELIDED_KEY}::text)` : sql`x.equity`}
          from jsonb_to_recordset(${JSON.stringify(equity)}::jsonb)
            as x(session_id text, from_step integer, points integer, base_ms double precision,
                 interval_ms double precision, peak numeric, equity text, pos bigint)
          ${
            copied
              ? sql`left join events e on e.global_position = x.pos
          where x.equity is not null or e.data ? ${ELIDED_KEY}::text`
              : sql``
          })`);
          equity = [];
        }
        if (trades.length) {
          inserts.push(sql`trade_rows as (
          insert into backtest_trades (session_id, seq, trade_id, order_id, symbol, side, type, fill_trigger,
            quantity, price, notional, fee, total, realized_pnl, slippage_pct, reference_price, reference_time,
            price_source, executed_at)
          select session_id, seq, trade_id, order_id, symbol, side, type, fill_trigger, quantity, price, notional,
                 fee, total, realized_pnl, slippage_pct, reference_price, reference_time, price_source, executed_at
          from jsonb_to_recordset(${JSON.stringify(trades)}::jsonb)
            as x(session_id text, seq integer, trade_id text, order_id text, symbol text, side text, type text,
                 fill_trigger text, quantity numeric, price numeric, notional numeric, fee numeric, total numeric,
                 realized_pnl numeric, slippage_pct numeric, reference_price numeric, reference_time timestamptz,
                 price_source text, executed_at timestamptz))`);
          trades = [];
        }
        const sessions = [...progress].map(([id, p]) => ({
          session_id: id,
          step: p.step ?? null,
          virtual_time: p.virtual_time ?? null,
          trades: p.trades,
          at: p.at,
        }));
        progress.clear();
        await sql`${inserts.length ? sql`with ${sql.join(inserts)} ` : sql``}update backtests as b
        set step = coalesce(p.step, b.step), virtual_time = coalesce(p.virtual_time, b.virtual_time),
            total_trades = b.total_trades + p.trades, updated_at = p.at
        from jsonb_to_recordset(${JSON.stringify(sessions)}::jsonb)
          as p(session_id text, step integer, virtual_time timestamptz, trades integer, at timestamptz)
        where b.session_id = p.session_id`.execute(db);
      };

      for (const e of events) {
        const deleted = deletedStreamOf(e);
        if (deleted !== undefined) {
          const id = backtestOf(deleted);
          if (!id) continue;
          await flush();
          await deleteRowsOf(db, ['backtests', 'backtest_equity', 'backtest_trades'], 'session_id', id);
          continue;
        }
        const id = backtestOf(e.streamId);
        if (!id) continue;
        const event = { type: e.type, data: e.data } as BacktestStreamEvent;
        const at = e.metadata.occurred_at;
        switch (event.type) {
          case 'BacktestCreated': {
            const d = event.data;
            await db
              .insertInto('backtests')
              .values({
                session_id: d.session_id,
                account_id: d.account_id,
                agent_id: d.agent_id,
                strategy_label: d.strategy_label,
                status: 'created',
                candle_interval: d.candle_interval,
                start_time: d.start_time,
                end_time: d.end_time,
                starting_balance: d.starting_balance,
                pairs: JSON.stringify(d.pairs),
                pairs_requested: JSON.stringify(d.pairs_requested),
                total_steps: d.total_steps,
                step: 0,
                virtual_time: d.start_time,
                risk_profile: JSON.stringify(d.risk_profile),
                fee_rate: d.fee_rate,
                created_at: d.created_at,
                started_at: null,
                ended_at: null,
                failure_reason: null,
                final_equity: null,
                roi_pct: null,
                sharpe_ratio: null,
                sortino_ratio: null,
                max_drawdown_pct: null,
                win_rate: null,
                profit_factor: null,
                total_trades: 0,
                results: JSON.stringify(null),
                updated_at: d.created_at,
              })
              .execute();
            break;
          }
          case 'BacktestStarted': {
            const d = event.data;
            const row = await db
              .updateTable('backtests')
              .set({
                status: 'running',
                started_at: d.started_at,
                virtual_time: d.virtual_time,
                updated_at: at,
              })
              .where('session_id', '=', id)
              .returning(['starting_balance'])
              .executeTakeFirst();
            const start = packUnits([row?.starting_balance ?? '0']);
            equity.push(equityRow(id, 0, Date.parse(d.virtual_time), 0, 1, start, equityPeakOf(start)));
            break;
          }
          case 'BacktestStepped': {
            // Version 1 events (a string per step) are packed here and version 2 ones given their peak; version 3
            // ones are copied.
            const d = upcastBacktestStepped(event.data);
            const from = Date.parse(d.from_time);
            const points = d.to_step - d.from_step;
            const interval = points > 0 ? (Date.parse(d.to_time) - from) / points : 0;
            // Handed without its text (a subscription of the venue's store): the statement copies it from the
            // stored event, so the ~1 MB text never comes through this process (issue 24).
            const packed = e.elided?.includes(ELIDED_KEY)
              ? { pos: e.position.prepare.toString() }
              : d.equity_units;
            if (points > 0)
              equity.push(equityRow(id, d.from_step + 1, from, interval, points, packed, d.equity_peak));
            const p = progressOf(id, at);
            p.step = d.to_step;
            p.virtual_time = d.to_time;
            break;
          }
          case 'OrderFilled': {
            const d = event.data;
            trades.push({
              session_id: id,
              seq: e.revision,
              trade_id: d.trade_id,
              order_id: d.order_id,
              symbol: d.symbol,
              side: d.side,
              type: d.type,
              fill_trigger: d.trigger,
              ...fillFigures(d),
            });
            progressOf(id, at).trades++;
            break;
          }
          case 'BacktestCompleted':
          case 'BacktestCancelled': {
            await flush();
            const d = event.data;
            const results = await computeResults(db, id, d, performanceOf);
            await db
              .updateTable('backtests')
              .set({
                status: event.type === 'BacktestCompleted' ? 'completed' : 'cancelled',
                step: d.step,
                virtual_time: d.virtual_time,
                ended_at: d.ended_at,
                final_equity: results.summary.final_equity,
                roi_pct: results.summary.roi_pct,
                sharpe_ratio: results.metrics.sharpe_ratio,
                sortino_ratio: results.metrics.sortino_ratio,
                max_drawdown_pct: results.metrics.max_drawdown_pct,
                win_rate: results.metrics.win_rate,
                profit_factor: results.metrics.profit_factor,
                total_trades: results.summary.total_trades,
                results: JSON.stringify(results),
                updated_at: at,
              })
              .where('session_id', '=', id)
              .execute();
            break;
          }
          case 'BacktestFailed':
            await flush();
            await db
              .updateTable('backtests')
              .set({
                status: 'failed',
                failure_reason: event.data.reason,
                ended_at: event.data.failed_at,
                updated_at: at,
              })
              .where('session_id', '=', id)
              .execute();
            break;
          default:
            break;
        }
      }
      await flush();
    },
  };
};

/** The projection computing results in process (rebuilds from the CLI, tests). */
export const backtestsProjection: Projection = createBacktestsProjection();
