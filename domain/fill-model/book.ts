import { toUnitsNumber } from '../market/decimal';
import { type Dec, dec } from '../trading/decimal';
import { unitsOfChecked } from '../trading/units';

/**
 * The synthetic order book of the fill model (docs/trading-rules.md, "The order book"): what
 * `GET /market/orderbook` shows and what taker fills walk, so the book a client sees and the fills it gets agree.
 * The spec only says the book is "generated deterministically around the current mid-price and do[es] not reflect
 * real liquidity"; its depth here is a function of the pair's 24h quote volume V, shaped so that walking it
 * reproduces the spec's slippage table ("Slippage": ≈ 0.01 % below 0.01 % of daily volume, 0.05–0.1 % up to
 * 0.1 %, 0.1–0.5 % above) at the sizes the table names:
 *
 * - each side holds {@link BOOK_DEPTH_PCT} % of V in {@link BOOK_LEVELS} levels; level k (1-based) ends at the
 *   cumulative participation `P_k = BOOK_DEPTH_PCT × (k / BOOK_LEVELS)²` % of V, so levels near the top are thin
 *   and deep ones wide (the visible 20 levels hold a quarter of the side);
 * - level k sits at the offset `max(h, m(p̄_k))` % from the mid, p̄_k the middle of its participation range and m
 *   the marginal-price curve, piecewise linear through (0 %, 0 %), (0.01 %, 0.02 %), (0.1 %, 0.2 %),
 *   (1 %, 8/9 %): the average price of the first p % is then the table's value at p = 0.01, 0.1 and 1
 *   (∫₀ᵖ m = p × s(p) with s = 0.01, 0.1, 0.5), and between them it rises smoothly (a book's average price
 *   cannot jump, so the table's step from 0.01 to 0.05 % at 0.01 % becomes a ramp from 0.01 to 0.1 %);
 * - h is the half-spread, `clamp(5 / sqrt(V / 10⁶), 0.25, 25)` basis points: about 0.25 bp for pairs trading
 *   billions a day, 5 bp at 1 M USDT, 25 bp for the thinnest (the spread the book showed before it had depth);
 * - asks are rounded up and bids down to the pair's tick size, every level at least one tick beyond the previous
 *   one and beyond the mid; a level holds `floor(((P_k − P_{k−1}) % × V + c) / price / step)` steps of the pair's
 *   step size, at least one step, where c (USDT) is what the levels before it left over by rounding down (negative
 *   when one was raised to a single step), so the book's cumulative depth stays within one step of `P_k % × V` and
 *   a coarse step size cannot thin it. A bid that would be ≤ 0 ends its side.
 *
 * Level prices and sizes are computed in IEEE-754 doubles from the inputs' decimal strings (only +, −, ×, ÷, √
 * and floor/ceil, which every JavaScript engine rounds the same way), then kept as exact decimals: the same
 * inputs give the same book everywhere, live, in backtests and in battles.
 */

/** Levels per side. */
export const BOOK_LEVELS = 40;
/** Depth of each side, % of the 24h quote volume. */
export const BOOK_DEPTH_PCT = 1;

/** Knots of the marginal-price curve m: [cumulative participation %, offset % from the mid]. */
const MARGINAL_KNOTS: readonly (readonly [number, number])[] = [
  [0, 0],
  [0.01, 0.02],
  [0.1, 0.2],
  [1, 8 / 9],
];

/** What a book is built from. Prices and sizes as decimal strings (8 places at most). */
export interface BookInput {
  /** The mid-price: the last trade price (USDT). */
  mid: string;
  /** The pair's price tick and quantity step; `0.00000001` when unknown. */
  tickSize?: string | undefined;
  stepSize?: string | undefined;
  /** The pair's 24h quote volume V (USDT); undefined or 0 when unknown (the book is then empty). */
  quoteVolume24h: Dec | string | undefined;
}

/** One level: an exact price (USDT) and quantity (base asset, a multiple of the step size). */
export interface BookLevel {
  price: Dec;
  quantity: Dec;
}

/** A book side: `asks` are what a buy takes (lowest first), `bids` what a sell takes (highest first). */
export type BookSide = 'asks' | 'bids';

/** The side a taker of `side` consumes. */
export const sideTakenBy = (side: 'buy' | 'sell'): BookSide => (side === 'buy' ? 'asks' : 'bids');

const MIN_UNIT = '0.00000001';

/** m(p): the marginal offset (%) at cumulative participation p (%), linear between the knots. */
export const marginalOffsetPct = (p: number): number => {
  for (let i = 1; i < MARGINAL_KNOTS.length; i++) {
    const [p1, m1] = MARGINAL_KNOTS[i]!;
    if (p <= p1 || i === MARGINAL_KNOTS.length - 1) {
      const [p0, m0] = MARGINAL_KNOTS[i - 1]!;
      return m0 + ((m1 - m0) * (p - p0)) / (p1 - p0);
    }
  }
  return MARGINAL_KNOTS[MARGINAL_KNOTS.length - 1]![1];
};

/** The half-spread in basis points for a 24h quote volume (USDT). */
export const halfSpreadBps = (quoteVolume24h: number): number =>
  Math.min(25, Math.max(0.25, 5 / Math.sqrt(Math.max(quoteVolume24h, 1) / 1e6)));

/** Cumulative participation (%) at the far end of level k (1-based). */
const levelEnd = (k: number): number => BOOK_DEPTH_PCT * (k / BOOK_LEVELS) ** 2;

/** The volume as a positive finite double, or undefined. */
const volumeOf = (v: Dec | string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  const n = typeof v === 'string' ? Number(v) : v.toNumber();
  return Number.isFinite(n) && n > 0 ? n : undefined;
};

/**
 * The levels of one side, best first, in 1e-8 price units and quantity steps (doubles holding integers). Empty when
 * the volume is unknown.
 */
const rawLevels = (input: BookInput, side: BookSide, count: number): { units: number; steps: number }[] => {
  const volume = volumeOf(input.quoteVolume24h);
  if (volume === undefined) return [];
  const mid = toUnitsNumber(input.mid);
  if (mid <= 0) return [];
  const tick = Math.max(1, toUnitsNumber(input.tickSize ?? MIN_UNIT));
  const stepBase = toUnitsNumber(input.stepSize ?? MIN_UNIT) / 1e8 || 1e-8;
  const halfSpreadPct = halfSpreadBps(volume) / 100;
  const out: { units: number; steps: number }[] = [];
  let last = mid; // every level lies strictly beyond the mid and beyond the level before it
  let carry = 0; // USDT
  for (let k = 1; k <= Math.min(count, BOOK_LEVELS); k++) {
    const from = levelEnd(k - 1);
    const to = levelEnd(k);
    const offset = Math.max(halfSpreadPct, marginalOffsetPct((from + to) / 2)) / 100;
    let units: number;
    if (side === 'asks') {
      units = Math.ceil((mid * (1 + offset)) / tick) * tick;
      if (units <= last) units = (Math.floor(last / tick) + 1) * tick;
    } else {
      units = Math.floor((mid * (1 - offset)) / tick) * tick;
      if (units >= last) units = (Math.ceil(last / tick) - 1) * tick;
      if (units <= 0) break;
    }
    last = units;
    // What earlier levels' rounding left out (or, when a level was raised to one step, took extra) moves to this
    // one, so the cumulative depth stays within one step of P_k x V: a coarse step cannot thin the whole book.
    const usdt = ((to - from) / 100) * volume + carry;
    const price = units / 1e8;
    const steps = Math.max(1, Math.floor(usdt / price / stepBase));
    carry = usdt - steps * stepBase * price;
    out.push({ units, steps });
  }
  return out;
};

/**
 * A side of the book as {@link bookLevels} gives it, with each level's price and quantity also in 1e-8 units (read
 * from the decimals, so both forms are the same values): what the book walk adds up (`walk.ts`).
 */
export interface BookUnits {
  levels: readonly BookLevel[];
  prices: readonly bigint[];
  quantities: readonly bigint[];
}

/** Books built lately, by their inputs (see {@link bookLevels}); emptied when full. */
const built = new Map<string, BookUnits>();
const BUILT_MAX = 1024;

/**
 * {@link bookLevels} with the levels in 1e-8 units too (the same cache: a book is built once for both forms).
 */
export const bookUnits = (input: BookInput, side: BookSide, count = BOOK_LEVELS): BookUnits => {
  const volume = input.quoteVolume24h;
  const key = `${side}|${count}|${input.mid}|${input.tickSize ?? ''}|${input.stepSize ?? ''}|${typeof volume === 'string' ? volume : (volume?.toString() ?? '')}`;
  const known = built.get(key);
  if (known) return known;
  const step = dec(input.stepSize ?? MIN_UNIT);
  const levels = Object.freeze(
    rawLevels(input, side, count).map((l) =>
      Object.freeze({ price: dec(l.units).shiftedBy(-8), quantity: step.times(l.steps) }),
    ),
  );
  const book = Object.freeze({
    levels,
    prices: Object.freeze(levels.map((l) => unitsOfChecked(l.price, 'a book price'))),
    quantities: Object.freeze(levels.map((l) => unitsOfChecked(l.quantity, 'a book quantity'))),
  });
  if (built.size >= BUILT_MAX) built.clear();
  built.set(key, book);
  return book;
};

/**
 * The first `count` levels of `side` (at most {@link BOOK_LEVELS}), best first, as exact decimals: what a taker
 * walks. Empty when the 24h volume is unknown or zero. The result is frozen and shared: a book is a function of
 * its inputs, and every market order between two ticks of a pair walks the same one, so the last 1,024 books are
 * kept rather than rebuilt (building one made ~120 decimals: 5 % of the server's CPU per market order, issue 23).
 */
export const bookLevels = (input: BookInput, side: BookSide, count = BOOK_LEVELS): readonly BookLevel[] =>
  bookUnits(input, side, count).levels;

/** The book as `/market/orderbook` shows it: `[price, quantity]` strings with 8 places, and the spread in bp. */
export interface BookSnapshot {
  bids: [string, string][];
  asks: [string, string][];
  /** (best ask − best bid) / mid in basis points (doubles; for display). */
  spreadBps: number;
}

/** The top `depth` levels of both sides (spec "Order book entry": `[price, quantity]` strings). */
export const bookSnapshot = (input: BookInput, depth: number): BookSnapshot => {
  const show = (side: BookSide): [string, string][] =>
    bookLevels(input, side, depth).map((l) => [l.price.toFixed(8), l.quantity.toFixed(8)]);
  const bids = show('bids');
  const asks = show('asks');
  const mid = Number(input.mid);
  const spreadBps =
    bids.length && asks.length && mid > 0
      ? ((Number(asks[0]![0]) - Number(bids[0]![0])) / mid) * 10_000
      : halfSpreadBps(volumeOf(input.quoteVolume24h) ?? 0) * 2;
  return { bids, asks, spreadBps };
};
