import { normalizeDecimal, toUnits, toUnitsNumber } from '../../../domain/market/decimal';
import { tickerValues } from '../../../domain/market/rolling-window';
import type { Ticker } from '../feed';
import type { PriceTick } from '../ticks';

/**
 * Decoding of Binance combined-stream frames (`{"stream": "...", "data": {...}}`): `trade` and `aggTrade`
 * events become trade ticks; `24hrMiniTicker` (alone or in `!miniTicker@arr`) and `24hrTicker` become a
 * price-only tick plus the exchange's own rolling 24h ticker. Anything else is ignored. Pure.
 */
export interface DecodedFrame {
  ticks: PriceTick[];
  tickers: Ticker[];
}

const decimal = (v: unknown): string | undefined => (typeof v === 'string' ? normalizeDecimal(v) : undefined);

const decodeTrade = (d: Record<string, unknown>): PriceTick | undefined => {
  const price = decimal(d['p']);
  const quantity = decimal(d['q']);
  const symbol = d['s'];
  const time = d['T'] ?? d['E'];
  const id = d['e'] === 'aggTrade' ? d['a'] : d['t'];
  if (
    !price ||
    !quantity ||
    typeof symbol !== 'string' ||
    typeof time !== 'number' ||
    typeof id !== 'number'
  ) {
    return undefined;
  }
  return {
    symbol,
    price,
    priceUnits: toUnitsNumber(price),
    quantity,
    quantityUnits: toUnits(quantity),
    time,
    tradeId: id,
    isBuyerMaker: d['m'] === true,
    trade: true,
    source: 'binance',
  };
};

const decodeTicker = (d: Record<string, unknown>): { tick: PriceTick; ticker: Ticker } | undefined => {
  const symbol = d['s'];
  const time = d['E'];
  const [open, high, low, close, volume, quoteVolume] = ['o', 'h', 'l', 'c', 'v', 'q'].map((k) =>
    decimal(d[k]),
  );
  if (typeof symbol !== 'string' || typeof time !== 'number' || !open || !high || !low || !close)
    return undefined;
  if (!volume || !quoteVolume) return undefined;
  const values = tickerValues({
    open: toUnitsNumber(open),
    high: toUnitsNumber(high),
    low: toUnitsNumber(low),
    close: toUnitsNumber(close),
    volume: toUnits(volume),
    quoteVolume: toUnits(quoteVolume),
    tradeCount: typeof d['n'] === 'number' ? d['n'] : 0,
    firstTime: time,
    lastTime: time,
  });
  return {
    tick: {
      symbol,
      price: close,
      priceUnits: toUnitsNumber(close),
      quantity: '0.00000000',
      quantityUnits: 0n,
      time,
      tradeId: 0,
      isBuyerMaker: false,
      trade: false,
      source: 'binance',
    },
    ticker: { symbol, ...values, time, basis: 'exchange', source: 'binance' },
  };
};

/** Decodes one text frame; frames that are not JSON or not a known event give nothing. */
export const decodeFrame = (text: string): DecodedFrame => {
  const out: DecodedFrame = { ticks: [], tickers: [] };
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return out;
  }
  const data =
    frame && typeof frame === 'object' && 'data' in frame ? (frame as { data: unknown }).data : frame;
  const events = Array.isArray(data) ? data : [data];
  for (const e of events) {
    if (!e || typeof e !== 'object') continue;
    const d = e as Record<string, unknown>;
    try {
      if (d['e'] === 'trade' || d['e'] === 'aggTrade') {
        const tick = decodeTrade(d);
        if (tick) out.ticks.push(tick);
      } else if (d['e'] === '24hrMiniTicker' || d['e'] === '24hrTicker') {
        const t = decodeTicker(d);
        if (t) {
          out.ticks.push(t.tick);
          out.tickers.push(t.ticker);
        }
      }
    } catch {
      // A value too large for exact price arithmetic: skip the event.
    }
  }
  return out;
};
