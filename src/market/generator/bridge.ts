/**
 * Finer candles bridged inside one coarser anchor candle, for `generate-market-data` (issue 24 item 5): `n`
 * sub-candles whose aggregate is exactly the anchor — the first opens at its open, the last closes at its close,
 * one reaches its high and one its low, none leaves [low, high], and the volumes sum exactly to its volume.
 *
 * Prices are integer ticks (multiples of the pair's tick size), volumes integer lot steps, so every value lands on
 * the exchange's grid. The path of closes is a Brownian bridge from the open to the close (seeded), scaled so its
 * spread is of the order of the anchor's range, clamped to [low, high]; each sub-candle opens at the previous
 * close and gets seeded wicks; then the sub-candle whose high is highest is stretched to the anchor's high, and the
 * one whose low is lowest to its low. Volume is split with log-normal weights that grow with the sub-candle's
 * range (more is traded when price moves), every sub-candle getting at least one step when there are enough.
 */
export interface AnchorCandle {
  /** Ticks. */
  open: number;
  high: number;
  low: number;
  close: number;
  /** Lot steps. */
  volume: number;
}

/** `n` bridged sub-candles, oldest first: prices in ticks, volume in lot steps. */
export interface BridgedCandles {
  open: Float64Array;
  high: Float64Array;
  low: Float64Array;
  close: Float64Array;
  volume: Float64Array;
}

/** A standard normal variate from uniform [0, 1) draws (Box–Muller). */
export const gaussian = (rng: () => number): number => {
  const u = 1 - rng();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
};

/** Bridges `anchor` into `n` sub-candles (`n` ≥ 1) with the seeded generator `rng` (uniform [0, 1)). */
export const bridgeCandle = (anchor: AnchorCandle, n: number, rng: () => number): BridgedCandles => {
  const { open: o, high: h, low: l, close: c } = anchor;
  const out: BridgedCandles = {
    open: new Float64Array(n),
    high: new Float64Array(n),
    low: new Float64Array(n),
    close: new Float64Array(n),
    volume: new Float64Array(n),
  };
  const clamp = (x: number) => Math.max(l, Math.min(h, x));
  if (n === 1) {
    out.open[0] = o;
    out.high[0] = h;
    out.low[0] = l;
    out.close[0] = c;
    out.volume[0] = anchor.volume;
    return out;
  }
  // Brownian bridge of the closes: a random walk pinned to 0 at both ends, added to the straight line o → c.
  const walk = new Float64Array(n + 1);
  for (let k = 1; k <= n; k++) walk[k] = walk[k - 1]! + gaussian(rng);
  const range = h - l;
  // A bridge of n unit steps spreads about 1.25·√n; aim for about 70 % of the anchor's range before clamping.
  const sigma = range > 0 ? (0.7 * range) / (1.25 * Math.sqrt(n)) : 0;
  for (let k = 0; k < n; k++) {
    const pinned = walk[k + 1]! - ((k + 1) / n) * walk[n]!;
    const line = o + ((c - o) * (k + 1)) / n;
    out.close[k] = k === n - 1 ? c : clamp(Math.round(line + sigma * pinned));
  }
  let top = 0;
  let bottom = 0;
  for (let k = 0; k < n; k++) {
    const open = k === 0 ? o : out.close[k - 1]!;
    const close = out.close[k]!;
    out.open[k] = open;
    const wick = sigma * 0.6;
    out.high[k] = clamp(Math.max(open, close) + Math.round(Math.abs(gaussian(rng)) * wick));
    out.low[k] = clamp(Math.min(open, close) - Math.round(Math.abs(gaussian(rng)) * wick));
    if (out.high[k]! > out.high[top]!) top = k;
    if (out.low[k]! < out.low[bottom]!) bottom = k;
  }
  out.high[top] = h;
  out.low[bottom] = l;

  // Volume: weights exp(0.6·N) × (1 + relative range), split exactly in steps.
  const total = anchor.volume;
  const weights = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) {
    const moved = range > 0 ? (out.high[k]! - out.low[k]!) / range : 0;
    weights[k] = Math.exp(0.6 * gaussian(rng)) * (1 + 3 * moved);
    sum += weights[k]!;
  }
  const floor = total >= n ? 1 : 0;
  const spread = total - floor * n;
  let given = 0;
  for (let k = 0; k < n; k++) {
    const v = floor + Math.floor((spread * weights[k]!) / sum);
    out.volume[k] = v;
    given += v;
  }
  // The steps lost to rounding down go one each to the sub-candles in a seeded order.
  let k = Math.floor(rng() * n);
  while (given < total) {
    out.volume[k] = out.volume[k]! + 1;
    given++;
    k = (k + 1) % n;
  }
  return out;
};
