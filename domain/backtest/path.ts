import type { OrderSide, OrderType } from '../trading/orders';
import { triggerDirection } from '../trading/orders';

/**
 * The documented intra-candle path (ARCHITECTURE §9): a candle whose close ≥ open is walked O → L → H → C, any
 * other O → H → L → C. Prices move continuously along each segment, so a pending order whose level lies inside a
 * segment is reached exactly at its level; an order already reached at the open (a gap) is reached at the open.
 * Prices here are integer 1e-8 units (safe-integer numbers), so the walk is exact and allocation-free.
 */

/** The four points of the path of candle (open, high, low, close), in order. */
export const pathPoints = (
  open: number,
  high: number,
  low: number,
  close: number,
): [number, number, number, number] => (close >= open ? [open, low, high, close] : [open, high, low, close]);

/** Where along a path an order is first reached. */
export interface Crossing {
  /** 0 at the open; j + f inside segment j (0 … 2) at fraction f of its length: orders are filled in this order. */
  position: number;
  /** The price it is reached at (units): the open after a gap, else the order's level. */
  price: number;
}

/** Direction of a pending order: 1 fires at or above its level, −1 at or below. */
export const directionOf = (side: OrderSide, type: Exclude<OrderType, 'market'>): 1 | -1 =>
  triggerDirection(side, type) === 'at_or_above' ? 1 : -1;

/**
 * The first point where the path reaches `level` in `direction` (−1: price ≤ level; 1: price ≥ level), or
 * undefined when the candle never reaches it.
 */
export const firstCrossing = (
  points: readonly [number, number, number, number],
  direction: 1 | -1,
  level: number,
): Crossing | undefined => {
  // Written without closures: this runs for every pending order on every candle passed.
  const open = points[0];
  if (direction < 0 ? open <= level : open >= level) return { position: 0, price: open };
  for (let j = 0; j < 3; j++) {
    const a = points[j]!;
    const b = points[j + 1]!;
    if (direction < 0 ? b <= level : b >= level) return { position: j + (a - level) / (a - b), price: level };
  }
  return undefined;
};
