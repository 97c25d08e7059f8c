import type { Candle } from './candle';
import { toUnits, toUnitsNumber } from './decimal';
import { hash32, mulberry32 } from './random';

/**
 * Deterministic intra-candle price path for the `files` replay (ARCHITECTURE §7, issue item 3): one tick per
 * `stepMs` (1 s by default) from the candle's open to its close. The path passes exactly through the open
 * (first tick), the close (last tick) and both extremes, in the order ARCHITECTURE §9 uses for backtests:
 * open → low → high → close when close ≥ open, else open → high → low → close. Between these waypoints it
 * follows a seeded Brownian bridge around the straight line, clamped to [low, high] and snapped to the pair's
 * tick size, so the same candle always yields the same ticks; an interior tick that would repeat the previous
 * price moves one tick (bid-ask bounce), so prices change every second wherever the candle's range allows.
 * The candle's base volume is split over the ticks with seeded weights; the quantities sum exactly to the
 * volume.
 */
export interface CandlePath {
  openTime: number;
  stepMs: number;
  /** Price of each tick in 1e-8 units (safe integers). */
  prices: Float64Array;
  /** Base quantity of each tick in 1e-8 units; sums to the candle volume. */
  quantities: bigint[];
  /** Per tick: true when the aggressor sold (price fell), Binance's `is_buyer_maker`. */
  buyerMaker: Uint8Array;
}

/** Options of {@link candlePath}. */
export interface CandlePathOptions {
  symbol: string;
  intervalMs: number;
  /** Price tick size in 1e-8 units (≥ 1). */
  tickUnits: number;
  /** Spacing of ticks (ms), default 1,000. */
  stepMs?: number;
  /** Relative size of the wiggle around the straight path, as a fraction of high − low (default 0.08). */
  noise?: number;
}

/** Builds the tick path of one candle (pure: same inputs, same path). */
export const candlePath = (candle: Candle, options: CandlePathOptions): CandlePath => {
  const stepMs = options.stepMs ?? 1000;
  const n = Math.max(1, Math.floor(options.intervalMs / stepMs));
  const rng = mulberry32(hash32(options.symbol, candle.openTime));
  const O = toUnitsNumber(candle.open);
  const H = toUnitsNumber(candle.high);
  const L = toUnitsNumber(candle.low);
  const C = toUnitsNumber(candle.close);
  const tick = Math.max(1, Math.round(options.tickUnits));
  const prices = new Float64Array(n);
  if (n < 4) {
    const way = [O, C >= O ? L : H, C >= O ? H : L, C];
    for (let k = 0; k < n; k++) prices[k] = way[Math.min(3, Math.round((k * 3) / Math.max(1, n - 1)))]!;
    prices[n - 1] = C;
  } else {
    const half = Math.max(1, Math.floor((n - 2) / 2));
    const k1 = 1 + Math.floor(rng() * half);
    const k2 = k1 + 1 + Math.floor(rng() * Math.max(1, n - 2 - k1));
    const idx = [0, k1, Math.min(k2, n - 2), n - 1];
    const way = C >= O ? [O, L, H, C] : [O, H, L, C];
    const range = H - L;
    const noise = options.noise ?? 0.08;
    for (let s = 0; s < 3; s++) {
      const a = idx[s]!;
      const b = idx[s + 1]!;
      const va = way[s]!;
      const vb = way[s + 1]!;
      const m = b - a;
      const walk = new Float64Array(m + 1);
      for (let j = 1; j <= m; j++) walk[j] = walk[j - 1]! + (rng() * 2 - 1);
      const scale = (range * noise) / Math.sqrt(Math.max(1, m));
      for (let j = 0; j <= m; j++) {
        const u = j / m;
        const straight = va + (vb - va) * u;
        const bridge = walk[j]! - u * walk[m]!;
        let v = Math.round((straight + scale * bridge) / tick) * tick;
        if (v < L) v = L;
        if (v > H) v = H;
        prices[a + j] = v;
      }
      prices[a] = va;
      prices[b] = vb;
    }
    // Trades rarely print the same price twice in a row (bid-ask bounce): an interior tick equal to the one
    // before moves one tick up or down, staying inside [low, high]. Waypoints are never moved.
    const waypoints = new Set(idx);
    for (let k = 1; k < n; k++) {
      if (waypoints.has(k) || prices[k] !== prices[k - 1]) continue;
      const dir = rng() < 0.5 ? -1 : 1;
      const up = prices[k]! + dir * tick;
      const down = prices[k]! - dir * tick;
      if (up >= L && up <= H && up !== prices[k + 1]) prices[k] = up;
      else if (down >= L && down <= H && down !== prices[k + 1]) prices[k] = down;
    }
  }
  // Volume split with seeded weights; the remainder goes to the last tick so the sum is exact.
  const volume = toUnits(candle.volume);
  const weights = new Array<number>(n);
  let total = 0;
  for (let k = 0; k < n; k++) {
    const w = 1 + Math.floor(rng() * 1000);
    weights[k] = w;
    total += w;
  }
  const quantities = new Array<bigint>(n);
  let assigned = 0n;
  const bigTotal = BigInt(total);
  for (let k = 0; k < n; k++) {
    const q = (volume * BigInt(weights[k]!)) / bigTotal;
    quantities[k] = q;
    assigned += q;
  }
  quantities[n - 1] = quantities[n - 1]! + (volume - assigned);
  const buyerMaker = new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    const prev = k === 0 ? prices[0]! : prices[k - 1]!;
    const p = prices[k]!;
    buyerMaker[k] = p < prev ? 1 : p > prev ? 0 : rng() < 0.5 ? 1 : 0;
  }
  return { openTime: candle.openTime, stepMs, prices, quantities, buyerMaker };
};
