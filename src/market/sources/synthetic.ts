import { fromUnits, toUnits, toUnitsNumber } from '../../../domain/market/decimal';
import type { Pair } from '../../../domain/market/pair';
import { hash32, mulberry32 } from '../../../domain/market/random';
import type { LocalSourceOptions, MarketSource } from './port';
import { everySecond, tickingStatus } from './second-timer';

/**
 * The `synthetic` source (ARCHITECTURE §7): a seeded random walk per pair, only so that a machine with
 * neither data nor network still starts. Every price it serves is labelled `synthetic`. Pairs come from the
 * stored pair list, else from {@link BUILT_IN_PAIRS}; a walk starts at the pair's reference price (Binance
 * `ticker/24hr` snapshot), else its last stored close, else the built-in price. One step per second and pair:
 * a log-return of about 0.02 % standard deviation, snapped to the tick size. The previous 24 h are backfilled
 * minute by minute so tickers exist at once.
 */
export interface SyntheticSourceOptions extends LocalSourceOptions {
  seed: number;
}

/**
 * Pairs and start prices for a bare machine (no exchangeInfo stored). Filters follow Binance's values for these
 * pairs in 2023; prices are round figures, not market data.
 */
export const BUILT_IN_PAIRS: readonly (Pair & { startPrice: string })[] = [
  ['BTC', '0.00001000', '0.00001000', '5.00000000', '0.01000000', '43000.00000000'],
  ['ETH', '0.00010000', '0.00010000', '5.00000000', '0.01000000', '2300.00000000'],
  ['BNB', '0.00100000', '0.00100000', '5.00000000', '0.10000000', '310.00000000'],
  ['SOL', '0.01000000', '0.01000000', '5.00000000', '0.01000000', '100.00000000'],
  ['XRP', '1.00000000', '1.00000000', '5.00000000', '0.00010000', '0.60000000'],
  ['ADA', '0.10000000', '0.10000000', '5.00000000', '0.00010000', '0.55000000'],
  ['DOGE', '1.00000000', '1.00000000', '5.00000000', '0.00001000', '0.09000000'],
  ['LTC', '0.00100000', '0.00100000', '5.00000000', '0.01000000', '70.00000000'],
].map(([base, minQty, stepSize, minNotional, tickSize, startPrice]) => ({
  symbol: `${base}USDT`,
  baseAsset: base!,
  quoteAsset: 'USDT' as const,
  status: 'active' as const,
  minQty: minQty!,
  stepSize: stepSize!,
  minNotional: minNotional!,
  tickSize: tickSize!,
  startPrice: startPrice!,
}));

interface Walk {
  symbol: string;
  price: number;
  tick: number;
  step: number;
  /** Typical base quantity per second (units). */
  qty: number;
  rng: () => number;
  tradeId: number;
}

const SIGMA = 0.0002;

/** Creates the `synthetic` source. */
export const createSyntheticSource = (options: SyntheticSourceOptions): MarketSource => {
  const { feed, data, logger, seed } = options;
  const now = options.now ?? Date.now;
  const walks = new Map<string, Walk>();
  let timer: { stop(): void } | undefined;
  let lastSecond = 0;

  const step = (w: Walk, time: number, live: boolean) => {
    const z = (w.rng() + w.rng() + w.rng() - 1.5) * 2; // ≈ N(0, 1)
    let next = Math.round((w.price * Math.exp(SIGMA * z)) / w.tick) * w.tick;
    if (next < w.tick) next = w.tick;
    const quantity = BigInt(Math.max(w.step, Math.floor((w.qty * (0.2 + 1.6 * w.rng())) / w.step) * w.step));
    const tick = {
      symbol: w.symbol,
      price: fromUnits(next),
      priceUnits: next,
      quantity: fromUnits(quantity),
      quantityUnits: quantity,
      time,
      tradeId: ++w.tradeId,
      isBuyerMaker: next < w.price,
      trade: true,
      source: 'synthetic' as const,
    };
    w.price = next;
    if (live) feed.ingest(tick);
    else feed.backfill(tick);
  };

  return {
    name: 'synthetic',
    async start() {
      if (data.pairs().length === 0) {
        data.setPairs(
          { asOf: 0, pairs: BUILT_IN_PAIRS.map(({ startPrice: _, ...p }) => p), skipped: [] },
          true,
        );
      }
      const wanted = options.symbols ? new Set(options.symbols) : undefined;
      for (const pair of data.pairs()) {
        if (pair.status !== 'active' || (wanted && !wanted.has(pair.symbol))) continue;
        const reference = data.referenceTicker(pair.symbol);
        const stored = data.candles.last(pair.symbol, '1d')?.close;
        const builtIn = BUILT_IN_PAIRS.find((p) => p.symbol === pair.symbol)?.startPrice;
        const start = [reference?.last, stored, builtIn].find((v) => v !== undefined && toUnits(v) > 0n);
        if (!start) continue;
        const price = toUnitsNumber(start);
        const quoteVolume = reference ? Number(reference.quoteVolume) : 1e7;
        walks.set(pair.symbol, {
          symbol: pair.symbol,
          price,
          tick: Math.max(1, toUnitsNumber(pair.tickSize)),
          step: Math.max(1, toUnitsNumber(pair.stepSize)),
          qty: Math.max(1, ((quoteVolume || 1e7) / 86_400 / (price / 1e8)) * 1e8),
          rng: mulberry32(hash32(pair.symbol, seed)),
          tradeId: 0,
        });
      }
      const nowMs = now();
      const nowSecond = Math.floor(nowMs / 1000);
      for (const w of walks.values()) {
        for (let m = 1440; m >= 1; m--) step(w, (nowSecond - m * 60) * 1000, false);
        step(w, nowSecond * 1000, false);
      }
      lastSecond = nowSecond;
      timer = everySecond(() => {
        const target = Math.floor(now() / 1000);
        const from = Math.max(lastSecond + 1, target - 120);
        for (let s = from; s <= target; s++) for (const w of walks.values()) step(w, s * 1000, true);
        lastSecond = Math.max(lastSecond, target);
      }, options.timerMs);
      logger?.warn(
        { symbols: walks.size, seed },
        'synthetic market source: random-walk prices (not market data)',
      );
    },
    async stop() {
      timer?.stop();
      timer = undefined;
    },
    status: () => tickingStatus(walks.size, timer !== undefined, feed.lastTickAt, { seed }),
  };
};
