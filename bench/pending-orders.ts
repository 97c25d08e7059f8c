/**
 * What the matching benchmarks (`bench/trading.ts` (b), `bench/matching.ts`) build their pending orders from: the
 * six kinds of resting order, each with the side of the price it waits on, and a fixed pseudo-random sequence, so
 * every run places the same orders.
 */

/** `[side, type, sign]`: sign −1 waits below the price (reached falling), +1 above (reached rising). */
export const PENDING_KINDS = [
  ['buy', 'limit', -1],
  ['sell', 'limit', 1],
  ['sell', 'stop_loss', -1],
  ['buy', 'stop_loss', 1],
  ['sell', 'take_profit', 1],
  ['buy', 'take_profit', -1],
] as const;

/** A deterministic pseudo-random sequence in [0, 1) (a fixed linear congruential generator from `seed`). */
export const seededRandom = (seed = 42): (() => number) => {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
};
