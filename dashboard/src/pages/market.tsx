import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Candle, CandleInterval, Ticker } from '../api/contract';
import { pairMap, QUOTE } from '../api/pairs';
import * as venue from '../api/venue';
import { CandleChart, type CandlePoint } from '../charts/chart';
import { href, navigate } from '../router';
import { Empty, ErrorNotice, Loading, Panel, Segmented, Stat } from '../ui/components';
import { Badge, Count, Num, Time, viewerZone } from '../ui/format';
import { useAsync, useChannel } from '../ui/hooks';
import { TRADES } from '../ui/nouns';
import { markReady } from '../ui/ready';
import { OrderTicket } from './ticket';

const INTERVALS: CandleInterval[] = ['1m', '5m', '15m', '1h', '4h', '1d'];

/**
 * Market (docs/dashboard.md): search over every pair of the venue (`/market/pairs`, with `/market/prices` for
 * the ones priced now), and for the chosen pair its candles with volume (`/market/candles`), the 24-hour ticker,
 * its order filters, a live price from the `ticker` channel, and the order ticket.
 */
export const MarketPage = ({ symbol }: { symbol: string | null }) => {
  const pairs = useAsync(() => pairMap(), []);
  const prices = useAsync(() => venue.prices(), []);
  const [query, setQuery] = useState('');
  const [pricedOnly, setPricedOnly] = useState(false);
  useEffect(() => {
    if (pairs.data) markReady('market');
  }, [pairs.data]);

  const list = useMemo(() => {
    const q = query.trim().toUpperCase();
    const priced = prices.data?.prices ?? {};
    return [...(pairs.data?.values() ?? [])]
      .filter(
        (p) =>
          (!q || p.symbol.includes(q) || p.base_asset.includes(q)) && (!pricedOnly || p.symbol in priced),
      )
      .sort(
        (a, b) => Number(b.symbol in priced) - Number(a.symbol in priced) || a.symbol.localeCompare(b.symbol),
      );
  }, [pairs.data, prices.data, query, pricedOnly]);

  // Without a pair in the address: BTCUSDT when it has a price, else the first priced pair.
  const priced = Object.keys(prices.data?.prices ?? {});
  const chosen =
    symbol ?? (prices.data ? (priced.includes('BTCUSDT') ? 'BTCUSDT' : (priced[0] ?? null)) : null);

  return (
    <div class="page market">
      <h1 class="sr-only">Market</h1>
      <aside class="pair-list" aria-label="Pairs">
        <label>
          Search pairs
          <input
            type="search"
            name="pair-search"
            value={query}
            placeholder="BTC, ETHUSDT…"
            onInput={(e) => setQuery(e.currentTarget.value)}
          />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={pricedOnly}
            onChange={(e) => setPricedOnly(e.currentTarget.checked)}
          />{' '}
          Priced now only
        </label>
        <ErrorNotice error={pairs.error} />
        <p class="muted small" role="status">
          {pairs.data ? `${list.length} of ${pairs.data.size} pairs` : 'Loading pairs…'}
          {prices.data ? `, ${prices.data.count} priced` : ''}
        </p>
        <ul class="pairs" data-testid="pair-list">
          {list.slice(0, 300).map((p) => (
            <li key={p.symbol}>
              <a href={href('market', p.symbol)} aria-current={p.symbol === chosen ? 'true' : undefined}>
                <span>{p.symbol}</span>
                {prices.data?.prices[p.symbol] ? (
                  <Num value={prices.data.prices[p.symbol]} unit={QUOTE} />
                ) : (
                  <span class="muted small">{p.status === 'active' ? 'no price' : p.status}</span>
                )}
              </a>
            </li>
          ))}
        </ul>
        {list.length > 300 ? (
          <p class="muted small">Refine the search to see the other {list.length - 300}.</p>
        ) : null}
      </aside>
      {chosen ? (
        <PairView key={chosen} symbol={chosen} />
      ) : pairs.data ? (
        <Empty>Choose a pair on the left.</Empty>
      ) : null}
    </div>
  );
};

/** A filter of the pair as "minimum / increment" (quantity and step, value and tick); empty until the pair is read. */
const FilterStat = (props: {
  label: string;
  unit: string | undefined;
  min: string | undefined;
  increment: string | undefined;
}) => (
  <Stat label={props.label} unit={props.unit}>
    {props.min !== undefined && props.increment !== undefined ? (
      <>
        <Num value={props.min} /> / <Num value={props.increment} />
      </>
    ) : null}
  </Stat>
);

const toPoint = (k: Candle): CandlePoint => ({
  time: Date.parse(k.time),
  open: Number(k.open),
  high: Number(k.high),
  low: Number(k.low),
  close: Number(k.close),
  volume: Number(k.volume),
});

const PairView = ({ symbol }: { symbol: string }) => {
  const [interval, setCandleInterval] = useState<CandleInterval>('1h');
  const pairs = useAsync(() => pairMap(), []);
  const pair = pairs.data?.get(symbol);
  const candles = useAsync(() => venue.candles(symbol, interval, 500), [symbol, interval]);
  const first = useAsync(() => venue.ticker(symbol), [symbol]);
  const [tick, setTick] = useState<Partial<Ticker> & { price?: string }>({});
  useChannel({ channel: 'ticker', symbol }, (m) => {
    if (m.channel === 'ticker' && m.type === 'ticker') setTick(m.data as Partial<Ticker> & { price: string });
  });
  const t = { ...first.data, ...tick };
  const price = tick.price ?? first.data?.close;

  // The newest candle follows the live price (its close, and its high or low when passed).
  const points = useMemo(() => {
    const list = (candles.data?.candles ?? []).map(toPoint);
    const last = list.at(-1);
    if (last && tick.price) {
      const p = Number(tick.price);
      list[list.length - 1] = { ...last, close: p, high: Math.max(last.high, p), low: Math.min(last.low, p) };
    }
    return list;
  }, [candles.data, tick.price]);

  if (pairs.data && !pair) {
    return <Empty>No pair {symbol} on the venue.</Empty>;
  }
  return (
    <div class="pair-view">
      <header class="pair-head">
        <h2>
          {symbol} {pair && pair.status !== 'active' ? <Badge tone="warn">{pair.status}</Badge> : null}
        </h2>
        <div class="big-price" data-testid="live-price">
          <Num value={price} unit={QUOTE} />
        </div>
        {t.change_pct ? (
          <span class="small">
            24 h <Num value={t.change_pct} signed unit="%" />
          </span>
        ) : null}
      </header>
      <ErrorNotice error={first.error} title="Ticker" />
      <div class="stats compact">
        <Stat label="24 h high">
          <Num value={t.high} unit={QUOTE} />
        </Stat>
        <Stat label="24 h low">
          <Num value={t.low} unit={QUOTE} />
        </Stat>
        <Stat label="24 h volume">
          <Num value={t.volume} unit={pair?.base_asset} />
        </Stat>
        <Stat label="24 h trades">
          <Count n={t.trade_count} of={TRADES} />
        </Stat>
        <FilterStat
          label="Min qty / step"
          unit={pair?.base_asset}
          min={pair?.min_qty}
          increment={pair?.step_size}
        />
        <FilterStat
          label="Min value / tick"
          unit={QUOTE}
          min={pair?.min_notional}
          increment={pair?.tick_size}
        />
      </div>
      <Panel
        id="candles"
        title="Candles"
        actions={
          <Segmented
            label="Candle interval"
            value={interval}
            options={INTERVALS}
            onChange={setCandleInterval}
          />
        }
      >
        <ErrorNotice error={candles.error} />
        {candles.data && points.length === 0 ? (
          <Empty>
            No candles stored for {symbol} at {interval}.
          </Empty>
        ) : candles.data ? (
          <CandleChart
            candles={points}
            label={`${symbol} ${interval} candles: ${points.length}, last close ${points.at(-1)?.close ?? ''}`}
          />
        ) : (
          <Loading what="candles" />
        )}
        <p class="muted small">
          {candles.data?.candles.length ? (
            <>
              From <Time iso={candles.data.candles[0]?.time} /> to{' '}
              <Time iso={candles.data.candles.at(-1)?.time} /> ({viewerZone()}).
            </>
          ) : null}{' '}
          With the replayed data set the candles carry the data's own dates.
        </p>
      </Panel>
      <div class="market-ticket">
        <Panel
          id="ticket"
          title={`Trade ${symbol}`}
          actions={
            <button type="button" onClick={() => navigate(href('overview'))}>
              Overview
            </button>
          }
        >
          <OrderTicket initialSymbol={symbol} />
        </Panel>
      </div>
    </div>
  );
};
