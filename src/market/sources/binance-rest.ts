import type { Candle } from '../../../domain/market/candle';
import { INTERVAL_MS, type Interval } from '../../../domain/market/intervals';
import { parseKlineJson } from '../../../domain/market/klines';
import {
  type PairSnapshot,
  parseExchangeInfo,
  parseTicker24hr,
  type ReferenceTicker,
} from '../../../domain/market/pair';

/**
 * Binance spot REST calls the `binance` source makes (public endpoints, no key): `GET /api/v3/exchangeInfo`,
 * `GET /api/v3/ticker/24hr`, `GET /api/v3/klines`. The base URL is configurable (`BINANCE_REST_URL`); tests
 * point it at a local fake server.
 */
export interface BinanceRest {
  exchangeInfo(): Promise<PairSnapshot>;
  tickers24hr(): Promise<ReferenceTicker[]>;
  /**
   * Closed klines of `symbol` from `startTime` (ms) up to `now`, following pages of 1,000. The kline still
   * open at `now` is dropped (Binance returns it, but it is not final).
   */
  klines(symbol: string, interval: Interval, startTime: number, now: number): Promise<Candle[]>;
}

const getJson = async (url: string, timeoutMs: number): Promise<unknown> => {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return response.json();
};

/** Creates the REST client for `baseUrl` (e.g. `https://api.binance.com`). */
export const binanceRest = (baseUrl: string, timeoutMs = 10_000): BinanceRest => ({
  async exchangeInfo() {
    return parseExchangeInfo(await getJson(`${baseUrl}/api/v3/exchangeInfo`, timeoutMs));
  },
  async tickers24hr() {
    return parseTicker24hr(await getJson(`${baseUrl}/api/v3/ticker/24hr`, timeoutMs)).tickers;
  },
  async klines(symbol, interval, startTime, now) {
    const ms = INTERVAL_MS[interval];
    const out: Candle[] = [];
    let from = startTime;
    for (let page = 0; page < 100 && from < now; page++) {
      const url = `${baseUrl}/api/v3/klines?symbol=${encodeURIComponent(symbol)}&interval=${interval}&startTime=${from}&limit=1000`;
      const parsed = parseKlineJson(await getJson(url, timeoutMs), interval);
      if (parsed.problems.length) {
        const p = parsed.problems[0]!;
        throw new Error(`GET ${url}: row ${p.line}: ${p.message}`);
      }
      const closed = parsed.candles.filter((c) => c.openTime + ms <= now);
      out.push(...closed);
      const last = parsed.candles[parsed.candles.length - 1];
      if (parsed.candles.length < 1000 || !last || last.openTime + ms <= from) break;
      from = last.openTime + ms;
    }
    const seen = new Set<number>();
    return out
      .filter((c) => !seen.has(c.openTime) && seen.add(c.openTime))
      .sort((a, b) => a.openTime - b.openTime);
  },
});
