import { useEffect, useMemo, useState } from 'preact/hooks';
import type { BacktestListQuery, BacktestResults, BacktestStatus } from '../api/contract';
import { baseAsset, QUOTE } from '../api/pairs';
import * as venue from '../api/venue';
import { LineChart } from '../charts/chart';
import { href, navigate } from '../router';
import { Empty, ErrorNotice, Loading, Panel, Stat } from '../ui/components';
import { Badge, Count, Num, ShortId, Time } from '../ui/format';
import { useAsync } from '../ui/hooks';
import { DAYS, FILLS, type Noun, nounOf, TRADES } from '../ui/nouns';
import { markReady } from '../ui/ready';
import { Head, hidden, NumCell, right } from '../ui/table';
import { FillsTable } from '../ui/wallet-tables';

const STATUSES: BacktestStatus[] = ['created', 'running', 'completed', 'failed', 'cancelled'];
const SORTS = [
  { value: 'created_at', label: 'Newest' },
  { value: 'roi_pct', label: 'ROI' },
  { value: 'sharpe_ratio', label: 'Sharpe' },
] as const;
const PAGE = 20;

const statusTone = (s: string) =>
  s === 'completed' ? 'ok' : s === 'failed' ? 'bad' : s === 'running' ? 'live' : '';

/**
 * Backtests (docs/dashboard.md): the sessions of `/backtest/list` with its filters (strategy label, status) and
 * sorting (newest, ROI, Sharpe), paged; several can be ticked and compared.
 */
export const BacktestsPage = () => {
  const [label, setLabel] = useState('');
  const [status, setStatus] = useState<BacktestStatus | ''>('');
  const [sort, setSort] = useState<NonNullable<BacktestListQuery['sort_by']>>('created_at');
  const [offset, setOffset] = useState(0);
  const [picked, setPicked] = useState<string[]>([]);
  const query: BacktestListQuery = {
    sort_by: sort,
    limit: PAGE,
    offset,
    ...(label.trim() ? { strategy_label: label.trim() } : {}),
    ...(status ? { status } : {}),
  };
  const list = useAsync(() => venue.backtests(query), [label, status, sort, offset]);
  useEffect(() => {
    if (list.data) markReady('backtests');
  }, [list.data]);
  const toggle = (id: string) =>
    setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id].slice(-20)));

  return (
    <div class="page">
      <h1>Backtests</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter backtests">
        <label>
          Strategy label
          <input
            name="strategy_label"
            value={label}
            onInput={(e) => {
              setLabel(e.currentTarget.value);
              setOffset(0);
            }}
          />
        </label>
        <label>
          Status
          <select
            name="status"
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value as BacktestStatus | '');
              setOffset(0);
            }}
          >
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Sort by
          <select
            name="sort_by"
            value={sort}
            onChange={(e) => {
              setSort(e.currentTarget.value as typeof sort);
              setOffset(0);
            }}
          >
            {SORTS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          class="primary"
          disabled={picked.length < 2}
          onClick={() => navigate(`${href('backtests', 'compare')}?ids=${picked.join(',')}`)}
        >
          Compare {picked.length > 0 ? `(${picked.length})` : ''}
        </button>
      </form>
      <ErrorNotice error={list.error} />
      {list.data && list.data.backtests.length === 0 ? (
        <Empty>
          No backtests{label || status ? ' match these filters' : ''}. Agents create them through the API (
          <code>POST /api/v1/backtest/create</code>, see <code>examples/sma-crossover.ts</code>).
        </Empty>
      ) : list.data ? (
        <>
          <div class="table-scroll">
            <table data-testid="backtest-list">
              <Head
                cols={[
                  hidden('Compare'),
                  'Session',
                  'Label',
                  'Status',
                  'Pairs',
                  'Interval',
                  'Period',
                  right('ROI', '%'),
                  right('Sharpe', 'ratio'),
                  right('Max DD', '%'),
                  right('Win rate', '%'),
                  right('Fills'),
                  'Created',
                ]}
              />
              <tbody>
                {list.data.backtests.map((b) => (
                  <tr key={b.session_id} data-session={b.session_id}>
                    <td>
                      <input
                        type="checkbox"
                        checked={picked.includes(b.session_id)}
                        onChange={() => toggle(b.session_id)}
                        aria-label={`Compare ${b.session_id}`}
                      />
                    </td>
                    <td>
                      <a href={href('backtests', b.session_id)}>
                        <ShortId id={b.session_id} />
                      </a>
                    </td>
                    <td>{b.strategy_label ?? <span class="muted">—</span>}</td>
                    <td>
                      <Badge tone={statusTone(b.status)}>{b.status}</Badge>
                    </td>
                    <td title={b.pairs.join(', ')}>
                      {b.pairs.length <= 3 ? b.pairs.join(', ') : `${b.pairs.length} pairs`}
                    </td>
                    <td>{b.candle_interval}</td>
                    <td>
                      <Time iso={b.start_time} /> → <Time iso={b.end_time} />
                    </td>
                    <NumCell value={b.roi_pct} signed />
                    <NumCell value={b.sharpe_ratio} />
                    <NumCell value={b.max_drawdown_pct} />
                    <NumCell value={b.win_rate} />
                    <td class="r">
                      <Count n={b.total_trades} of={FILLS} />
                    </td>
                    <td>
                      <Time iso={b.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager offset={offset} total={list.data.total} page={PAGE} onChange={setOffset} />
        </>
      ) : (
        <Loading what="backtests" />
      )}
    </div>
  );
};

/** Previous / next over a paged list. */
const Pager = ({
  offset,
  total,
  page,
  onChange,
}: {
  offset: number;
  total: number;
  page: number;
  onChange: (offset: number) => void;
}) =>
  total > page ? (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - page))}>
        Previous
      </button>
      <span class="muted small">
        {offset + 1}–{Math.min(offset + page, total)} of {total}
      </span>
      <button type="button" disabled={offset + page >= total} onClick={() => onChange(offset + page)}>
        Next
      </button>
    </nav>
  ) : null;

/** A metric's unit: a word said as is, or a noun whose singular is said of the figure 1 ("1 day", "2.5 days"). */
type Unit = string | Noun;

/** The word of `unit` for `value` (a venue decimal or number). */
const unitOf = (unit: Unit, value: string | number | null | undefined): string =>
  typeof unit === 'string' ? unit : nounOf(unit, value);

/**
 * The metrics of `/backtest/{id}/results`, in the order and names of the response, each with its unit (the
 * integers count closed trades, a sell each: ARCHITECTURE §11).
 */
const METRIC_ROWS: { key: keyof BacktestResults['metrics']; label: string; unit: Unit }[] = [
  { key: 'sharpe_ratio', label: 'Sharpe ratio', unit: 'ratio' },
  { key: 'sortino_ratio', label: 'Sortino ratio', unit: 'ratio' },
  { key: 'max_drawdown_pct', label: 'Max drawdown', unit: '%' },
  { key: 'max_drawdown_duration_days', label: 'Max drawdown duration', unit: DAYS },
  { key: 'win_rate', label: 'Win rate', unit: '%' },
  { key: 'profit_factor', label: 'Profit factor', unit: 'ratio' },
  { key: 'avg_win', label: 'Average win', unit: QUOTE },
  { key: 'avg_loss', label: 'Average loss', unit: QUOTE },
  { key: 'best_trade', label: 'Best trade', unit: QUOTE },
  { key: 'worst_trade', label: 'Worst trade', unit: QUOTE },
  { key: 'avg_trade_duration_minutes', label: 'Average trade duration', unit: 'min' },
  { key: 'trades_per_day', label: 'Trades per day', unit: 'fills/day' },
  { key: 'closed_trades', label: 'Closed trades', unit: TRADES },
  { key: 'winning_trades', label: 'Winning trades', unit: TRADES },
  { key: 'losing_trades', label: 'Losing trades', unit: TRADES },
  { key: 'gross_profit', label: 'Gross profit', unit: QUOTE },
  { key: 'gross_loss', label: 'Gross loss', unit: QUOTE },
  { key: 'longest_win_streak', label: 'Longest win streak', unit: TRADES },
  { key: 'longest_loss_streak', label: 'Longest loss streak', unit: TRADES },
];

const TRADES_PAGE = 100;

/**
 * One session's results (`/backtest/{id}/results`): summary, metrics, the equity curve and its drawdown
 * (`/results/equity-curve`, whose `drawdown_pct` the venue computes), the trade log (`/results/trades`, paged)
 * and the by-pair table.
 */
export const BacktestPage = ({ id }: { id: string }) => {
  const results = useAsync(() => venue.backtestResults(id), [id]);
  const curve = useAsync(() => venue.backtestEquityCurve(id), [id]);
  const [offset, setOffset] = useState(0);
  const trades = useAsync(() => venue.backtestTrades(id, offset, TRADES_PAGE), [id, offset]);
  useEffect(() => {
    if (results.data) markReady('backtest');
  }, [results.data]);
  const lines = useMemo(() => {
    const points = curve.data ?? [];
    return {
      equity: [
        {
          id,
          name: 'Equity',
          points: points.map((p) => ({ time: Date.parse(p.time), value: Number(p.equity) })),
        },
      ],
      drawdown: [
        {
          id: `${id}-dd`,
          name: 'Drawdown',
          points: points.map((p) => ({ time: Date.parse(p.time), value: -Number(p.drawdown_pct) })),
        },
      ],
    };
  }, [curve.data, id]);

  if (results.error) {
    return (
      <div class="page">
        <h1>Backtest {id}</h1>
        <ErrorNotice error={results.error} />
        <p>
          <a href={href('backtests')}>All backtests</a>
        </p>
      </div>
    );
  }
  const r = results.data;
  if (!r) return <Loading what="the results" />;
  return (
    <div class="page backtest" data-session={r.session_id}>
      <p>
        <a href={href('backtests')}>← All backtests</a>
      </p>
      <h1>
        {r.config.strategy_label ?? 'Backtest'} <ShortId id={r.session_id} />{' '}
        <Badge tone={statusTone(r.status)}>{r.status}</Badge>
      </h1>
      <p class="muted">
        {r.config.pairs.join(', ')} · {r.config.candle_interval} candles · <Time iso={r.config.start_time} />{' '}
        → <Time iso={r.config.end_time} /> · starting balance{' '}
        <Num value={r.config.starting_balance} unit={QUOTE} />
      </p>
      <div class="stats" data-testid="bt-summary">
        <Stat label="Final equity" id="final_equity">
          <Num value={r.summary.final_equity} unit={QUOTE} />
        </Stat>
        <Stat label="Total PnL" id="total_pnl">
          <Num value={r.summary.total_pnl} signed unit={QUOTE} />
        </Stat>
        <Stat label="ROI" id="roi_pct">
          <Num value={r.summary.roi_pct} signed unit="%" />
        </Stat>
        <Stat label="Fills" id="total_trades">
          <Count n={r.summary.total_trades} of={FILLS} />
        </Stat>
        <Stat label="Fees" id="total_fees">
          <Num value={r.summary.total_fees} unit={QUOTE} />
        </Stat>
        <Stat label="Simulated" id="duration_simulated_days">
          <Num
            value={r.summary.duration_simulated_days}
            unit={unitOf(DAYS, r.summary.duration_simulated_days)}
          />
        </Stat>
      </div>
      <div class="two">
        <Panel id="bt-equity" title="Equity curve">
          <ErrorNotice error={curve.error} />
          {curve.data ? (
            <LineChart
              lines={lines.equity}
              label={`Equity curve of ${r.session_id}: ${curve.data.length} steps`}
            />
          ) : (
            <Loading what="the equity curve" />
          )}
        </Panel>
        <Panel id="bt-drawdown" title="Drawdown">
          {curve.data ? (
            <LineChart
              lines={lines.drawdown}
              baseline={0}
              height={200}
              label={`Drawdown of ${r.session_id}, deepest ${r.metrics.max_drawdown_pct} %`}
            />
          ) : null}
          <p class="muted small">Below the running peak, in % (the deepest is the max drawdown).</p>
        </Panel>
      </div>
      <div class="two">
        <Panel id="bt-metrics" title="Metrics">
          <table class="kv" data-testid="bt-metrics">
            <tbody>
              {METRIC_ROWS.map((m) => (
                <tr key={m.key} data-metric={m.key}>
                  <th scope="row">{m.label}</th>
                  <td class="r">
                    <Num
                      value={r.metrics[m.key] as string | number | null}
                      signed={m.unit === QUOTE}
                      unit={unitOf(m.unit, r.metrics[m.key] as string | number | null)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Panel>
        <Panel id="bt-pairs" title="By pair">
          {r.by_pair.length === 0 ? (
            <Empty>No fills in this session.</Empty>
          ) : (
            <table data-testid="bt-by-pair">
              <Head
                cols={[
                  'Pair',
                  right('Fills'),
                  right('Closed'),
                  right('Win rate', '%'),
                  right('Realized', QUOTE),
                  right('Fees', QUOTE),
                  right('Net PnL', QUOTE),
                  right('Open qty'),
                ]}
              />
              <tbody>
                {r.by_pair.map((b) => (
                  <tr key={b.symbol}>
                    <th scope="row">{b.symbol}</th>
                    <td class="r">
                      <Count n={b.trades} of={FILLS} />
                    </td>
                    <td class="r">
                      <Count n={b.closed_trades} of={TRADES} />
                    </td>
                    <NumCell value={b.win_rate} />
                    <NumCell value={b.realized_pnl} signed />
                    <NumCell value={b.fees} />
                    <NumCell value={b.net_pnl} signed />
                    <NumCell value={b.open_quantity} unit={baseAsset(b.symbol)} />
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Panel>
      </div>
      <Panel
        id="bt-trades"
        title="Trade log"
        actions={
          trades.data ? (
            <span class="muted small">
              <Count n={trades.data.total} of={FILLS} />
            </span>
          ) : null
        }
      >
        <ErrorNotice error={trades.error} />
        {trades.data && trades.data.trades.length === 0 ? (
          <Empty>No fills in this session.</Empty>
        ) : trades.data ? (
          <>
            <FillsTable fills={trades.data.trades} virtual testId="bt-trades" />
            <Pager offset={offset} total={trades.data.total} page={TRADES_PAGE} onChange={setOffset} />
          </>
        ) : (
          <Loading what="the trade log" />
        )}
      </Panel>
    </div>
  );
};

/**
 * Several sessions side by side (`/backtest/compare`): the venue's comparison table with its best-by marks and
 * recommendation, and the sessions' equity curves overlaid.
 */
export const BacktestComparePage = ({ ids }: { ids: string[] }) => {
  const key = ids.join(',');
  const compare = useAsync(() => venue.backtestCompare(ids), [key]);
  const curves = useAsync(
    () => Promise.all(ids.map(async (id) => ({ id, points: await venue.backtestEquityCurve(id) }))),
    [key],
  );
  useEffect(() => {
    if (compare.data) markReady('compare');
  }, [compare.data]);
  const labels = new Map(
    compare.data?.comparisons.map((c) => [c.session_id, c.strategy_label ?? c.session_id]),
  );
  const lines = useMemo(
    () =>
      (curves.data ?? []).map((c) => ({
        id: c.id,
        name: labels.get(c.id) ?? c.id,
        points: c.points.map((p) => ({ time: Date.parse(p.time), value: Number(p.equity) })),
      })),
    [curves.data, compare.data],
  );
  const c = compare.data;
  return (
    <div class="page">
      <p>
        <a href={href('backtests')}>← All backtests</a>
      </p>
      <h1>Compare {ids.length} backtests</h1>
      {ids.length < 2 ? <Empty>Tick two or more sessions in the list to compare them.</Empty> : null}
      <ErrorNotice error={compare.error} />
      {c ? (
        <>
          <p class="notice" data-testid="recommendation">
            {c.recommendation}
          </p>
          <div class="table-scroll">
            <table data-testid="compare-table">
              <Head
                cols={[
                  'Session',
                  'Label',
                  'Status',
                  right('ROI', '%'),
                  right('Sharpe', 'ratio'),
                  right('Sortino', 'ratio'),
                  right('Max DD', '%'),
                  right('Win rate', '%'),
                  right('Profit factor', 'ratio'),
                  right('Fills'),
                  right('Final equity', QUOTE),
                ]}
              />
              <tbody>
                {c.comparisons.map((x) => (
                  <tr key={x.session_id}>
                    <th scope="row">
                      <a href={href('backtests', x.session_id)}>
                        <ShortId id={x.session_id} />
                      </a>
                    </th>
                    <td>{x.strategy_label ?? '—'}</td>
                    <td>{x.status}</td>
                    <td class={`r ${c.best_by_roi === x.session_id ? 'best' : ''}`}>
                      <Num value={x.roi_pct} signed />
                    </td>
                    <td class={`r ${c.best_by_sharpe === x.session_id ? 'best' : ''}`}>
                      <Num value={x.sharpe_ratio} />
                    </td>
                    <NumCell value={x.sortino_ratio} />
                    <td class={`r ${c.best_by_drawdown === x.session_id ? 'best' : ''}`}>
                      <Num value={x.max_drawdown_pct} />
                    </td>
                    <NumCell value={x.win_rate} />
                    <NumCell value={x.profit_factor} />
                    <td class="r">
                      <Count n={x.total_trades} of={FILLS} />
                    </td>
                    <NumCell value={x.final_equity} />
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p class="muted small">
            Highlighted: the best by ROI, by Sharpe and by drawdown, as the venue ranks them.
          </p>
        </>
      ) : null}
      <Panel id="compare-equity" title="Equity curves">
        <ErrorNotice error={curves.error} />
        {curves.data ? (
          <LineChart lines={lines} label={`Equity curves of ${lines.length} backtests`} height={340} />
        ) : (
          <Loading what="equity curves" />
        )}
      </Panel>
    </div>
  );
};
