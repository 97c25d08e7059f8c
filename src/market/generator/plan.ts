import fs from 'node:fs';
import path from 'node:path';
import { type Candle, lowerBound } from '../../../domain/market/candle';
import { toUnits, toUnitsNumber } from '../../../domain/market/decimal';
import { INTERVAL_MS, type Interval } from '../../../domain/market/intervals';
import { parseKlineCsv } from '../../../domain/market/klines';
import {
  type Pair,
  type PairSnapshot,
  parseExchangeInfo,
  parseTicker24hr,
  type ReferenceTicker,
} from '../../../domain/market/pair';
import { dataRoot } from '../files';

/**
 * What `generate-market-data` makes (issue 24 item 5): which pairs, each anchored on which real hourly series and
 * scaled how. The anchors are the real hourly candles of the data set (`klines/1h/*.csv`, 16 pairs). The first
 * pairs are the anchors themselves (their own real hours, unscaled); every further pair is an active pair of the
 * real exchangeInfo, in order of its real 24h quote volume, anchored on one of the real series in turn and scaled to
 * its own price and volume (its reference ticker's last price and base volume against the anchor's last close and
 * mean daily volume), on its own tick size and lot step. So the generated market has real outages, real regimes
 * and real cross-pair correlation, at each pair's own price level and grid. Pegged pairs (a reference 24h range
 * under 1 % of the price: USDC, TUSD, BUSD, FDUSD) are left out: no volatile anchor describes them.
 */
export const GENERATED_INTERVALS = ['1m', '5m', '15m', '1h'] as const satisfies readonly Interval[];

/** One of {@link GENERATED_INTERVALS}: the intervals that divide the anchors' hour. */
export type GeneratedInterval = (typeof GENERATED_INTERVALS)[number];

/** A real hourly series with its candles in exact units. */
export interface AnchorSeries {
  symbol: string;
  candles: readonly Candle[];
  /** Close of the last candle (units), the base of the price scale of the pairs anchored on it. */
  lastClose: number;
  /** Mean base volume per day over the series (units), the base of the volume scale. */
  dailyVolume: number;
}

/** How one generated pair is made. */
export interface PairPlan {
  symbol: string;
  pair: Pair;
  /** The real series it follows. */
  anchor: AnchorSeries;
  /** True for an anchor pair itself: its real hours are kept exactly (prices and volumes unscaled). */
  own: boolean;
  /** Price factor applied to the anchor's prices (1 for `own`). */
  priceScale: number;
  /** Volume factor applied to the anchor's volumes (1 for `own`). */
  volumeScale: number;
  /** The pair's tick size and lot step in 1e-8 units. */
  tickUnits: number;
  stepUnits: number;
  /** Mean USDT value of one trade (from the reference ticker; 500 when unknown), for trade counts. */
  tradeQuote: number;
}

/** Everything the generator reads from the real data set. */
export interface GeneratorSource {
  exchangeInfo: unknown;
  snapshot: PairSnapshot;
  tickers: ReadonlyMap<string, ReferenceTicker>;
  tickerDoc: unknown[];
  anchors: AnchorSeries[];
  /** First open time and end of the last candle over every anchor (ms). */
  earliest: number;
  latest: number;
}

const DAY = 86_400_000;
/** A reference 24h range below this fraction of the price marks a pegged pair (a stablecoin). */
const PEGGED_RANGE = 0.01;

/** Reads the real data set (a directory in Binance's layout, e.g. `../shared/market-data`). */
export const readGeneratorSource = (dir: string): GeneratorSource => {
  const root = dataRoot(dir);
  const read = (name: string) => JSON.parse(fs.readFileSync(path.join(root, name), 'utf8')) as unknown;
  const exchangeInfo = read('exchangeInfo.json');
  const tickerDoc = read('ticker_24hr.json');
  const snapshot = parseExchangeInfo(exchangeInfo);
  const tickers = new Map(parseTicker24hr(tickerDoc).tickers.map((t) => [t.symbol, t]));
  const hourly = path.join(root, 'klines', '1h');
  const anchors: AnchorSeries[] = [];
  for (const name of fs.existsSync(hourly) ? fs.readdirSync(hourly).sort() : []) {
    const m = /^([A-Z0-9]+)-1h.*\.csv$/.exec(name);
    if (!m) continue;
    const parsed = parseKlineCsv(fs.readFileSync(path.join(hourly, name), 'utf8'), '1h');
    if (parsed.problems.length || parsed.candles.length === 0) {
      throw new Error(`anchor file ${name} has problems: ${parsed.problems[0]?.message ?? 'no candles'}`);
    }
    const candles = parsed.candles;
    let volume = 0n;
    for (const c of candles) volume += toUnits(c.volume);
    const days = Math.max(1, (candles.length * INTERVAL_MS['1h']) / DAY);
    anchors.push({
      symbol: m[1]!,
      candles,
      lastClose: toUnitsNumber(candles[candles.length - 1]!.close),
      dailyVolume: Number(volume) / days,
    });
  }
  if (anchors.length === 0) throw new Error(`no hourly kline files under ${hourly} to anchor on`);
  const earliest = Math.min(...anchors.map((a) => a.candles[0]!.openTime));
  const latest = Math.max(...anchors.map((a) => a.candles[a.candles.length - 1]!.openTime + 3_600_000));
  const sortedTickers = Array.isArray(tickerDoc) ? tickerDoc : [];
  return { exchangeInfo, snapshot, tickers, tickerDoc: sortedTickers, anchors, earliest, latest };
};

/** The pairs a generator run makes: the anchors first, then the other active pairs, each by reference quote volume. */
export const planPairs = (source: GeneratorSource, count: number): PairPlan[] => {
  const bySymbol = new Map(source.snapshot.pairs.map((p) => [p.symbol, p]));
  const anchorSymbols = new Set(source.anchors.map((a) => a.symbol));
  const quote = (s: string) => Number(source.tickers.get(s)?.quoteVolume ?? 0);
  const moves = (s: string) => {
    const t = source.tickers.get(s);
    const last = Number(t?.last);
    return last > 0 && (Number(t!.high) - Number(t!.low)) / last >= PEGGED_RANGE;
  };
  const others = source.snapshot.pairs
    .filter((p) => p.status === 'active' && !anchorSymbols.has(p.symbol) && moves(p.symbol))
    .sort((a, b) => quote(b.symbol) - quote(a.symbol) || (a.symbol < b.symbol ? -1 : 1));
  const available = source.anchors.filter((a) => bySymbol.has(a.symbol)).length + others.length;
  if (count > available) {
    throw new RangeError(`--pairs ${count}: the data set has ${available} pairs that can be generated`);
  }
  const plans: PairPlan[] = [];
  const tradeQuoteOf = (symbol: string) => {
    const t = source.tickers.get(symbol);
    const q = Number(t?.quoteVolume ?? 0);
    return t && t.tradeCount > 0 && q > 0 ? q / t.tradeCount : 500;
  };
  const anchorsByVolume = [...source.anchors].sort(
    (a, b) => quote(b.symbol) - quote(a.symbol) || (a.symbol < b.symbol ? -1 : 1),
  );
  for (const anchor of anchorsByVolume) {
    const pair = bySymbol.get(anchor.symbol);
    if (!pair || plans.length >= count) continue;
    plans.push({
      symbol: pair.symbol,
      pair,
      anchor,
      own: true,
      priceScale: 1,
      volumeScale: 1,
      tickUnits: toUnitsNumber(pair.tickSize),
      stepUnits: toUnitsNumber(pair.stepSize),
      tradeQuote: tradeQuoteOf(pair.symbol),
    });
  }
  for (let i = 0; plans.length < count; i++) {
    const pair = others[i]!;
    const anchor = source.anchors[i % source.anchors.length]!;
    const ticker = source.tickers.get(pair.symbol)!;
    const last = toUnitsNumber(ticker.last);
    const volume = Number(toUnits(ticker.volume));
    plans.push({
      symbol: pair.symbol,
      pair,
      anchor,
      own: false,
      priceScale: last / anchor.lastClose,
      volumeScale: volume > 0 ? volume / anchor.dailyVolume : 1 / anchor.dailyVolume,
      tickUnits: toUnitsNumber(pair.tickSize),
      stepUnits: toUnitsNumber(pair.stepSize),
      tradeQuote: tradeQuoteOf(pair.symbol),
    });
  }
  return plans;
};

/** The anchor candles of `plan` opening in [from, to) (ms). */
export const anchorCandles = (plan: PairPlan, from: number, to: number): readonly Candle[] => {
  const list = plan.anchor.candles;
  return list.slice(lowerBound(list, from), lowerBound(list, to));
};

/** One output file: a pair's candles over one calendar month (or day), clipped to the requested range. */
export interface FilePlan {
  symbol: string;
  interval: GeneratedInterval;
  /** `YYYY-MM` or `YYYY-MM-DD`: the Binance file name's date part. */
  label: string;
  from: number;
  to: number;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The monthly (or daily) files covering [from, to) for each pair, pair by pair. */
export const planFiles = (
  plans: readonly PairPlan[],
  interval: GeneratedInterval,
  from: number,
  to: number,
  period: 'monthly' | 'daily',
): FilePlan[] => {
  const files: FilePlan[] = [];
  for (const plan of plans) {
    let t = from;
    while (t < to) {
      const d = new Date(t);
      const y = d.getUTCFullYear();
      const m = d.getUTCMonth();
      const next = period === 'monthly' ? Date.UTC(y, m + 1, 1) : Date.UTC(y, m, d.getUTCDate() + 1);
      const label = period === 'monthly' ? `${y}-${pad(m + 1)}` : `${y}-${pad(m + 1)}-${pad(d.getUTCDate())}`;
      files.push({ symbol: plan.symbol, interval, label, from: t, to: Math.min(next, to) });
      t = next;
    }
  }
  return files;
};
