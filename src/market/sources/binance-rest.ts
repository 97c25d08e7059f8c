import { setTimeout } from 'node:timers/promises';
import pRetry, { AbortError } from 'p-retry';
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

/** Retries of a failed GET (network error, timeout, HTTP 429/418/5xx) before it fails. */
const RETRIES = 4;
/** The longest `Retry-After` honoured (ms): a ban longer than this fails the backfill instead of stalling start-up. */
const MAX_RETRY_AFTER_MS = 60_000;

/** An HTTP answer worth asking again: 429 (rate limit), 418 (IP ban) or a server error. */
class RetryableStatus extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message);
  }
}

/** `Retry-After` in ms: Binance sends seconds on 429 and 418 (its REST API docs, "LIMITS"). */
const retryAfterMsOf = (response: Response): number | undefined => {
  const seconds = Number(response.headers.get('retry-after'));
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1_000 : undefined;
};

/**
 * GETs `url` as JSON, each attempt bounded by `timeoutMs`, retried with exponential back-off (p-retry) on network
 * errors, timeouts, 5xx, 429 and 418, waiting at least the server's `Retry-After` (up to a minute) before the next
 * attempt. Any other 4xx fails at once (asking again cannot help). Throws `Error` naming the URL and status.
 */
const getJson = (url: string, timeoutMs: number): Promise<unknown> =>
  pRetry(
    async () => {
      const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
      if (response.ok) return response.json();
      const message = `GET ${url}: HTTP ${response.status}`;
      if (response.status === 429 || response.status === 418 || response.status >= 500)
        throw new RetryableStatus(message, retryAfterMsOf(response));
      throw new AbortError(message);
    },
    {
      retries: RETRIES,
      minTimeout: 250,
      maxTimeout: 5_000,
      randomize: true,
      onFailedAttempt: async ({ error }) => {
        if (!(error instanceof RetryableStatus) || error.retryAfterMs === undefined) return;
        if (error.retryAfterMs > MAX_RETRY_AFTER_MS) throw error;
        await setTimeout(error.retryAfterMs);
      },
    },
  );

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
