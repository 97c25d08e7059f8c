import { EMPTY } from 'rxjs';
import type { WalletCommands } from '../commands/wallet';
import { fromUnits } from '../domain/market/decimal';
import type { EventStore } from '../ports/event-store';
import { MatchingEngine } from '../src/matching/engine';
import { soleLeadership } from '../src/matching/leader';

/**
 * What the matching benchmarks (`bench/trading.ts` (b), `bench/matching.ts`) build their pending orders from: the
 * six kinds of resting order, each with the side of the price it waits on, and a fixed pseudo-random sequence, so
 * every run places the same orders; and how they drive the engine: one started alone on `store` with no feed, the
 * benchmark offering it the prints of a random walk, each `onTick` timed.
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

/** A matching engine on `store` and `wallets` with no price feed of its own (the benchmark offers the prints), sole leader. */
export const benchEngine = (store: EventStore, wallets: WalletCommands): MatchingEngine =>
  new MatchingEngine({
    store,
    wallets,
    ticks$: EMPTY,
    lastTick: () => undefined,
    leadership: soleLeadership(),
  });

/**
 * Print `i` of `ticks` of a random walk from `price` (units of 1e-8 USDT): ±0.02 % at random, drifting down by
 * 0.002 % a print over the first half and up by 0.004 % over the second, through the band of pending orders.
 */
export const walkedPrice = (price: number, i: number, ticks: number, rand: () => number): number =>
  Math.round(price * (1 + (rand() - 0.5) * 0.0004 + (i < ticks / 2 ? -0.00002 : 0.00004)));

/**
 * Offers `engine` a synthetic print of `symbol` at `units` (and of `quantity` base units, when given) and times
 * `onTick` alone: its ms go into `active` when it reached orders, else into `quiet`. Answers how many it reached.
 */
export const timedTick = (
  engine: MatchingEngine,
  symbol: string,
  units: number,
  times: { quiet: number[]; active: number[] },
  quantity?: string,
): number => {
  const tick = {
    symbol,
    price: fromUnits(units),
    priceUnits: units,
    time: Date.now(),
    source: 'synthetic' as const,
    ...(quantity !== undefined ? { quantity } : {}),
  };
  const t0 = performance.now();
  const reached = engine.onTick(tick);
  const ms = performance.now() - t0;
  (reached.length ? times.active : times.quiet).push(ms);
  return reached.length;
};
