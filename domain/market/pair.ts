import { normalizeDecimal } from './decimal';

/**
 * A trading pair (spec "Resources: Trading pair") plus the price tick size the venue uses to keep generated
 * prices on the exchange's grid. All pairs are quoted in USDT.
 */
export interface Pair {
  symbol: string;
  baseAsset: string;
  quoteAsset: 'USDT';
  status: 'active' | 'inactive';
  /** Minimum order quantity (base asset), 8-decimal string (Binance `LOT_SIZE.minQty`). */
  minQty: string;
  /** Quantity increment (Binance `LOT_SIZE.stepSize`). */
  stepSize: string;
  /** Minimum order value in USDT (Binance `NOTIONAL.minNotional`, formerly `MIN_NOTIONAL`). */
  minNotional: string;
  /** Price increment (Binance `PRICE_FILTER.tickSize`); `0.00000001` when unknown. */
  tickSize: string;
}

/** A pair snapshot: the pairs and the time the exchange reported them at (ms). */
export interface PairSnapshot {
  asOf: number;
  pairs: Pair[];
  /** Symbols quoted in USDT that were left out, with why. */
  skipped: { symbol: string; reason: string }[];
}

const MIN_UNIT = '0.00000001';

/** Normalizes a symbol as clients may send it (spec: case-insensitive): trimmed, upper case. */
export const normalizeSymbol = (raw: string): string => raw.trim().toUpperCase();

/**
 * Reads Binance's `GET /api/v3/exchangeInfo` response (ARCHITECTURE §7, issue "loaders"): keeps the symbols
 * quoted in USDT; status `TRADING` → `active`, anything else (`BREAK`, `HALT`...) → `inactive`; `min_qty` and
 * `step_size` from `LOT_SIZE`; `min_notional` from `NOTIONAL`, or the older `MIN_NOTIONAL`; `tick_size` from
 * `PRICE_FILTER`. A USDT symbol without a `LOT_SIZE` filter, or with values that are not decimals, is skipped
 * and reported. Throws when the document is not an exchangeInfo response.
 */
export const parseExchangeInfo = (doc: unknown): PairSnapshot => {
  if (!doc || typeof doc !== 'object' || !Array.isArray((doc as { symbols?: unknown }).symbols)) {
    throw new TypeError('not an exchangeInfo document: missing "symbols" array');
  }
  const { symbols, serverTime } = doc as { symbols: unknown[]; serverTime?: unknown };
  const pairs: Pair[] = [];
  const skipped: PairSnapshot['skipped'] = [];
  for (const entry of symbols) {
    if (!entry || typeof entry !== 'object') continue;
    const s = entry as Record<string, unknown>;
    if (s['quoteAsset'] !== 'USDT' || typeof s['symbol'] !== 'string') continue;
    const symbol = s['symbol'];
    const filters = Array.isArray(s['filters']) ? (s['filters'] as Record<string, unknown>[]) : [];
    const filter = (type: string) => filters.find((f) => f && f['filterType'] === type);
    const lot = filter('LOT_SIZE');
    const notional = filter('NOTIONAL') ?? filter('MIN_NOTIONAL');
    const price = filter('PRICE_FILTER');
    if (!lot) {
      skipped.push({ symbol, reason: 'no LOT_SIZE filter' });
      continue;
    }
    const minQty = normalizeDecimal(String(lot['minQty']));
    const stepSize = normalizeDecimal(String(lot['stepSize']));
    const minNotional = notional ? normalizeDecimal(String(notional['minNotional'])) : '0.00000000';
    const tick = price ? normalizeDecimal(String(price['tickSize'])) : MIN_UNIT;
    if (!minQty || !stepSize || !minNotional || !tick) {
      skipped.push({ symbol, reason: 'LOT_SIZE, NOTIONAL or PRICE_FILTER values are not decimals' });
      continue;
    }
    pairs.push({
      symbol: normalizeSymbol(symbol),
      baseAsset: String(s['baseAsset'] ?? symbol.slice(0, -4)),
      quoteAsset: 'USDT',
      status: s['status'] === 'TRADING' ? 'active' : 'inactive',
      minQty,
      stepSize,
      minNotional,
      tickSize: tick === '0.00000000' ? MIN_UNIT : tick,
    });
  }
  pairs.sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
  return { asOf: typeof serverTime === 'number' ? serverTime : 0, pairs, skipped };
};

/**
 * A 24-hour statistics snapshot as Binance's `GET /api/v3/ticker/24hr` reports it, for one symbol. Used as the
 * reference volume of pairs the live feed has no window for yet (order book depth, slippage inputs).
 */
export interface ReferenceTicker {
  symbol: string;
  open: string;
  high: string;
  low: string;
  last: string;
  volume: string;
  quoteVolume: string;
  tradeCount: number;
  openTime: number;
  closeTime: number;
}

/**
 * Reads a `ticker/24hr` response (an array, or one object for a single symbol), keeping USDT symbols.
 * Delisted symbols carry zeroed fields there (count 0, prices 0): they are kept, with their zeros, since a zero
 * volume is the truth for them. Entries with non-decimal values are skipped and reported.
 */
export const parseTicker24hr = (
  doc: unknown,
): { tickers: ReferenceTicker[]; skipped: { symbol: string; reason: string }[] } => {
  const list = Array.isArray(doc) ? doc : doc && typeof doc === 'object' ? [doc] : undefined;
  if (!list) throw new TypeError('not a ticker/24hr document: expected an array of tickers');
  const tickers: ReferenceTicker[] = [];
  const skipped: { symbol: string; reason: string }[] = [];
  for (const entry of list) {
    if (!entry || typeof entry !== 'object') continue;
    const t = entry as Record<string, unknown>;
    const symbol = t['symbol'];
    if (typeof symbol !== 'string' || !symbol.endsWith('USDT')) continue;
    const d = (k: string) => normalizeDecimal(String(t[k] ?? ''));
    const values = {
      open: d('openPrice'),
      high: d('highPrice'),
      low: d('lowPrice'),
      last: d('lastPrice'),
      volume: d('volume'),
      quoteVolume: d('quoteVolume'),
    };
    if (Object.values(values).some((v) => v === undefined)) {
      skipped.push({ symbol, reason: 'a price or volume is not a decimal' });
      continue;
    }
    tickers.push({
      symbol: normalizeSymbol(symbol),
      ...(values as Record<keyof typeof values, string>),
      tradeCount: Number.isSafeInteger(t['count']) ? (t['count'] as number) : 0,
      openTime: Number(t['openTime'] ?? 0),
      closeTime: Number(t['closeTime'] ?? 0),
    });
  }
  return { tickers, skipped };
};
