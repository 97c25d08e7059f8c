import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { HistoryInterval, Order, Performance, Portfolio } from '../api/contract';
import { baseAsset, lockAsset, QUOTE } from '../api/pairs';
import * as venue from '../api/venue';
import { LineChart, type Point } from '../charts/chart';
import { href } from '../router';
import { Empty, ErrorNotice, Loading, Panel, Segmented, Stat } from '../ui/components';
import { Badge, Count, definedMetric, Num, Side, Time, viewerZone } from '../ui/format';
import { useAsync, useChannel, useCoalesced } from '../ui/hooks';
import { FILLS } from '../ui/nouns';
import { markReady } from '../ui/ready';
import { Head, hidden, NumCell, right } from '../ui/table';
import { FillsTable, PositionsTable } from '../ui/wallet-tables';
import { OrderTicket } from './ticket';

const INTERVALS: HistoryInterval[] = ['1m', '1h', '1d'];

/**
 * Overview (docs/dashboard.md): the viewed wallet's equity, cash, ROI and PnL, its equity curve, positions,
 * open orders (with cancel) and recent fills, and an order ticket. Live without polling: the `portfolio`
 * channel replaces the figures and positions on every change, and each event of the `orders` channel re-reads
 * the open orders, the fills and the metrics (coalesced). The curve is the recorded history
 * (`/analytics/portfolio/history`, one valuation a minute) followed by the live equity of each pushed snapshot.
 */
export const OverviewPage = () => {
  const initial = useAsync(() => venue.portfolio(), []);
  const [pushed, setPushed] = useState<Portfolio | null>(null);
  const [interval, setHistoryInterval] = useState<HistoryInterval>('1m');
  // The figures first, alone: the other panels read once they are in (the venue answers one wallet's reads
  // one after the other on an embedded database; the first figures should not wait behind a history).
  const after = initial.data !== undefined || initial.error !== undefined;
  const later = <T,>(read: () => Promise<T>) => (after ? read() : new Promise<never>(() => {}));
  const history = useAsync(() => later(() => venue.portfolioHistory(interval)), [interval, after]);
  const orders = useAsync(() => later(() => venue.openOrders()), [after]);
  const fills = useAsync(() => later(() => venue.tradeHistory(20)), [after]);
  const perf = useAsync(() => later(() => venue.performance()), [after]);
  const [live, setLive] = useState<Point[]>([]);
  const historyReadAt = useRef(Date.now());

  const rereadActivity = useCoalesced(() => {
    orders.reload();
    fills.reload();
    perf.reload();
  }, 150);
  // New valuations are recorded once a minute: re-read the history when a snapshot arrives a minute later.
  const rereadHistory = () => {
    if (Date.now() - historyReadAt.current < 60_000) return;
    historyReadAt.current = Date.now();
    history.reload();
  };

  useChannel(
    { channel: 'portfolio' },
    (m) => {
      if (m.channel !== 'portfolio' || m.type !== 'portfolio') return;
      const p = m.data as Portfolio;
      setPushed(p);
      setLive((points) => [
        ...points.slice(-500),
        { time: Date.parse(p.timestamp), value: Number(p.total_equity) },
      ]);
      rereadHistory();
    },
    // After a reconnect every read above runs again (useAsync); the last pushed figures may be stale, so the
    // re-read portfolio is shown until the next push.
    () => setPushed(null),
  );
  useChannel({ channel: 'orders' }, rereadActivity);

  const p = pushed ?? initial.data;
  useEffect(() => {
    if (p) markReady('overview');
  }, [p]);

  const curve = useMemo(() => {
    const recorded = (history.data?.snapshots ?? []).map((s) => ({
      time: Date.parse(s.time),
      value: Number(s.total_equity),
    }));
    const lastRecorded = recorded.at(-1)?.time ?? 0;
    const tail = live.filter((x) => x.time > lastRecorded);
    const first =
      p && recorded.length === 0 && tail.length === 0
        ? [{ time: Date.parse(p.timestamp), value: Number(p.total_equity) }]
        : [];
    return [...recorded, ...first, ...tail];
  }, [history.data, live, p]);

  return (
    <div class="page overview">
      <h1 class="sr-only">Overview</h1>
      <div class="main-col">
        <ErrorNotice error={initial.error} title="Portfolio" />
        {p ? <Summary p={p} /> : <Loading what="the portfolio" />}
        <Panel
          id="equity"
          title="Equity"
          actions={
            <Segmented
              label="History interval"
              value={interval}
              options={INTERVALS}
              onChange={setHistoryInterval}
            />
          }
        >
          <ErrorNotice error={history.error} title="Equity history" />
          {curve.length > 0 ? (
            <LineChart
              lines={[{ id: 'equity', name: 'Equity', points: curve }]}
              label={`Equity curve: ${curve.length} points, last ${curve.at(-1)?.value ?? ''} USDT`}
            />
          ) : (
            <Empty>
              No equity recorded yet: the venue values wallets once a minute after their first trade.
            </Empty>
          )}
          <p class="muted small">
            Recorded valuations every {interval === '1m' ? 'minute' : interval === '1h' ? 'hour' : 'day'},
            then the live equity of each update. Times in {viewerZone()}; UTC on hover.
          </p>
        </Panel>
        {perf.data ? <Metrics perf={perf.data} /> : null}
        <Panel id="positions" title="Positions">
          {p && p.positions.length === 0 ? (
            <Empty>
              No open positions. Buy with the order ticket, or let an agent trade through the API.
            </Empty>
          ) : p ? (
            <PositionsTable positions={p.positions} />
          ) : null}
        </Panel>
        <OpenOrders orders={orders.data?.orders} error={orders.error} />
        <Panel
          id="fills"
          title="Recent fills"
          actions={fills.data ? <span class="muted small">{fills.data.total} in all</span> : null}
        >
          <ErrorNotice error={fills.error} />
          {fills.data && fills.data.trades.length === 0 ? (
            <Empty>
              No fills yet. Market orders fill at once; limit and conditional orders when the price reaches
              them.
            </Empty>
          ) : fills.data ? (
            <FillsTable fills={fills.data.trades} />
          ) : null}
        </Panel>
      </div>
      <aside class="side-col" aria-label="Trade">
        <Panel id="ticket" title="Order ticket" actions={<a href={href('market')}>Market</a>}>
          <OrderTicket />
        </Panel>
      </aside>
    </div>
  );
};

const Summary = ({ p }: { p: Portfolio }) => (
  <div class="stats" data-testid="summary" data-revision={p.revision}>
    <Stat label="Equity" id="equity">
      <Num value={p.total_equity} unit={QUOTE} />
    </Stat>
    <Stat label="Cash available" id="cash">
      <Num value={p.available_cash} unit={QUOTE} />
    </Stat>
    <Stat label="Locked" id="locked">
      <Num value={p.locked_cash} unit={QUOTE} />
    </Stat>
    <Stat label="ROI" id="roi">
      <Num value={p.roi_pct} signed unit="%" />
    </Stat>
    <Stat label="Total PnL" id="pnl">
      <Num value={p.total_pnl} signed unit={QUOTE} />
    </Stat>
    <Stat label="Realized / unrealized" id="realized">
      <Num value={p.realized_pnl} signed unit={QUOTE} /> /{' '}
      <Num value={p.unrealized_pnl} signed unit={QUOTE} />
    </Stat>
    <Stat label="Fees paid" id="fees">
      <Num value={p.fees_paid} unit={QUOTE} />
    </Stat>
    <Stat label="Net PnL" id="net">
      <Num value={p.net_pnl} signed unit={QUOTE} />
    </Stat>
  </div>
);

/**
 * The performance figures; a metric the venue names in `undefined_metrics` (too few returns, no losing trade…) is
 * answered as "0" on the wire and shown as a dash here, so an undefined ratio is not read as a real zero.
 */
const Metrics = ({ perf }: { perf: Performance }) => (
  <div class="stats compact" data-testid="metrics">
    <Stat label="Sharpe">
      <Num value={definedMetric(perf, 'sharpe_ratio')} unit="ratio" />
    </Stat>
    <Stat label="Max drawdown">
      <Num value={perf.max_drawdown_pct} unit="%" />
    </Stat>
    <Stat label="Win rate">
      <Num value={definedMetric(perf, 'win_rate')} unit="%" />
    </Stat>
    <Stat label="Profit factor">
      <Num value={definedMetric(perf, 'profit_factor')} unit="ratio" />
    </Stat>
    <Stat label="Fills">
      <Count n={perf.total_trades} of={FILLS} />
    </Stat>
  </div>
);

/**
 * Open orders with a cancel button each (the order's id on the pair's hover) (`DELETE /trade/order/{id}`) and cancel-all; each lock names its asset
 * (USDT for buys, the base for sells: one column holds both).
 */
const OpenOrders = ({ orders, error }: { orders: Order[] | undefined; error: unknown }) => {
  const [cancelling, setCancelling] = useState<Set<string>>(new Set());
  const [failure, setFailure] = useState<unknown>(null);
  const cancel = async (id: string) => {
    setFailure(null);
    setCancelling((s) => new Set(s).add(id));
    try {
      await venue.cancelOrder(id);
    } catch (e) {
      setFailure(e);
    } finally {
      setCancelling((s) => {
        const n = new Set(s);
        n.delete(id);
        return n;
      });
    }
  };
  const cancelAll = async () => {
    if (!confirm(`Cancel all ${orders?.length ?? 0} open orders?`)) return;
    setFailure(null);
    try {
      await venue.cancelAllOrders();
    } catch (e) {
      setFailure(e);
    }
  };
  return (
    <Panel
      id="orders"
      title="Open orders"
      actions={
        orders && orders.length > 1 ? (
          <button type="button" onClick={cancelAll}>
            Cancel all
          </button>
        ) : null
      }
    >
      <ErrorNotice error={error} />
      <ErrorNotice error={failure} title="Cancel" />
      {orders && orders.length === 0 ? (
        <Empty>
          No open orders. Limit, stop-loss and take-profit orders wait here until the price reaches them.
        </Empty>
      ) : orders ? (
        <table>
          <Head
            cols={[
              'Pair',
              'Side',
              'Type',
              right('Quantity'),
              right('Price / trigger', QUOTE),
              right('Locked'),
              'Status',
              'Placed',
              hidden('Cancel'),
            ]}
          />
          <tbody>
            {orders.map((o) => (
              <tr key={o.order_id} data-order={o.order_id}>
                {/* The order's id on hover: a column of its own pushed Cancel out of the panel at 1280 px. */}
                <td title={`order ${o.order_id}`}>{o.symbol}</td>
                <td>
                  <Side side={o.side} />
                </td>
                <td>{o.type.replace('_', ' ')}</td>
                <NumCell value={o.quantity} unit={baseAsset(o.symbol)} />
                <NumCell value={o.price ?? o.trigger_price} />
                <NumCell value={o.locked_amount} unit={lockAsset(o.side, o.symbol)} />
                <td>
                  <Badge>{o.status.replace('_', ' ')}</Badge>
                </td>
                <td>
                  <Time iso={o.created_at} />
                </td>
                <td>
                  <button
                    type="button"
                    class="small"
                    disabled={cancelling.has(o.order_id)}
                    onClick={() => cancel(o.order_id)}
                    aria-label={`Cancel ${o.side} ${o.type} ${o.symbol} order ${o.order_id.slice(0, 8)}`}
                  >
                    {cancelling.has(o.order_id) ? 'Cancelling…' : 'Cancel'}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Panel>
  );
};
