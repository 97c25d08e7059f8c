import { toUnits } from '../../domain/market/decimal';
import { type OrderSide, type OrderType, triggerDirection } from '../../domain/trading/orders';

/** A pending order as the matching engine indexes it. */
export interface IndexedOrder {
  orderId: string;
  ownerId: string;
  symbol: string;
  side: OrderSide;
  type: Exclude<OrderType, 'market'>;
  /** Limit or trigger price as a decimal string (8 places). */
  level: string;
  /** The same in 1e-8 units (exact integer comparisons on the hot path); see {@link levelUnitsOf}. */
  levelUnits: number;
  direction: 'at_or_below' | 'at_or_above';
  /** Set by the {@link OrderIndex} that holds it: its place among equal levels (placement order). */
  seq?: number;
}

const MAX_SAFE_UNITS = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * A level in 1e-8 units as a number, for the hot path. Ticks carry safe-integer units (at most ~90 million
 * USDT), so a level beyond that range is above every price a tick can bring: `+Infinity` orders it exactly (a
 * buy limit or buy take-profit there fires on any tick, a sell limit, sell take-profit or buy stop never). An
 * order's price is not bounded by the ticks' range, and one far-away level must never stop the index (it
 * used to throw, which stopped the engine following the log and the server from starting).
 */
export const levelUnitsOf = (level: string): number => {
  const units = toUnits(level);
  return units > MAX_SAFE_UNITS ? Number.POSITIVE_INFINITY : Number(units);
};

/** Builds an index entry from an order's terms. */
export const indexedOrder = (
  o: Pick<IndexedOrder, 'orderId' | 'ownerId' | 'symbol' | 'side' | 'type' | 'level'>,
): IndexedOrder => ({
  ...o,
  levelUnits: levelUnitsOf(o.level),
  direction: triggerDirection(o.side, o.type),
});

/**
 * A binary min-heap of orders keyed by a number (the level, negated for "highest first") and, among equal levels,
 * by the order they were added in (placement order: the index adds orders as the log places them), with the keys in
 * parallel arrays so the hot path compares plain numbers and allocates nothing. Equal levels must come out in a
 * fixed order: orders of one wallet reached by one print share its participation share in the order they are
 * taken, and a backtest takes them in the same order (`domain/backtest/advance.ts`: same tape, same fills).
 */
class Heap {
  private readonly keys: number[] = [];
  private readonly seqs: number[] = [];
  private readonly items: IndexedOrder[] = [];
  /** @param sign 1: lowest level first; -1: highest level first. */
  constructor(private readonly sign: 1 | -1) {}

  get size(): number {
    return this.items.length;
  }

  peek(): IndexedOrder | undefined {
    return this.items[0];
  }

  /** Sets slot `i` to an entry (its level key, its add sequence and the order). */
  private put(i: number, key: number, seq: number, item: IndexedOrder): void {
    this.keys[i] = key;
    this.seqs[i] = seq;
    this.items[i] = item;
  }

  /** Moves the entry in slot `from` to slot `to` (sifting). */
  private move(to: number, from: number): void {
    this.put(to, this.keys[from]!, this.seqs[from]!, this.items[from]!);
  }

  /** Adds `item`; `seq` (increasing with every add) orders equal levels. */
  push(item: IndexedOrder, seq: number): void {
    const keys = this.keys;
    const seqs = this.seqs;
    const items = this.items;
    const key = this.sign * item.levelUnits;
    let i = items.length;
    keys.push(key);
    seqs.push(seq);
    items.push(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pk = keys[parent]!;
      if (pk < key || (pk === key && seqs[parent]! < seq)) break;
      this.move(i, parent);
      i = parent;
    }
    this.put(i, key, seq, item);
  }

  pop(): IndexedOrder | undefined {
    const keys = this.keys;
    const seqs = this.seqs;
    const items = this.items;
    const top = items[0];
    const lastKey = keys.pop();
    const lastSeq = seqs.pop();
    const last = items.pop();
    const n = items.length;
    if (n > 0 && last !== undefined && lastKey !== undefined && lastSeq !== undefined) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && (keys[r]! < keys[l]! || (keys[r] === keys[l] && seqs[r]! < seqs[l]!)) ? r : l;
        const ck = keys[c]!;
        if (ck > lastKey || (ck === lastKey && seqs[c]! > lastSeq)) break;
        this.move(i, c);
        i = c;
      }
      this.put(i, lastKey, lastSeq, last);
    }
    return top;
  }
}

interface SymbolBook {
  /** Orders that fire when the price falls to their level: highest level first. */
  below: Heap;
  /** Orders that fire when the price rises to their level: lowest level first. */
  above: Heap;
}

/**
 * The matching engine's in-memory index of pending orders (ARCHITECTURE §8, issue item 3): per symbol, two
 * heaps keyed by trigger price, so a tick costs O(1) when it reaches nothing and O(k log n) for the k orders it
 * reaches. Removal (fill, cancel) is lazy: the entry leaves the live map at once and is skipped when it surfaces.
 *
 * A reached order leaves its heap but stays indexed ("parked": `has`, `size`) until it is removed (filled,
 * cancelled) or restored to its heap: under a fill model a print may fill an order in part, and while its fill
 * waits to run no later print may reach it again, so parking keeps a tick's cost to the orders it newly reaches
 * instead of every order the price has crossed (issue 21's benchmark: 100,000 pending orders, thousands crossed).
 */
export class OrderIndex {
  private readonly live = new Map<string, IndexedOrder>();
  private readonly books = new Map<string, SymbolBook>();
  private readonly byOwner = new Map<string, Set<string>>();
  /** Adds so far: orders equal levels in each heap. */
  private added = 0;

  /** Pending orders indexed. */
  get size(): number {
    return this.live.size;
  }

  has(orderId: string): boolean {
    return this.live.has(orderId);
  }

  /** Adds (or replaces) an order. */
  add(order: IndexedOrder): void {
    this.live.set(order.orderId, order);
    let owned = this.byOwner.get(order.ownerId);
    if (!owned) {
      owned = new Set();
      this.byOwner.set(order.ownerId, owned);
    }
    owned.add(order.orderId);
    order.seq = this.added++;
    this.push(order);
  }

  /**
   * Puts a parked order (one {@link reached} took out) back in its heap at its original place among equal levels;
   * nothing when it was removed or replaced meanwhile.
   */
  restore(order: IndexedOrder): void {
    if (this.live.get(order.orderId) === order) this.push(order);
  }

  private push(order: IndexedOrder): void {
    let book = this.books.get(order.symbol);
    if (!book) {
      book = { below: new Heap(-1), above: new Heap(1) };
      this.books.set(order.symbol, book);
    }
    (order.direction === 'at_or_below' ? book.below : book.above).push(order, order.seq!);
  }

  /** Removes an order (filled, cancelled); true when it was indexed. */
  remove(orderId: string): boolean {
    const order = this.live.get(orderId);
    if (!order) return false;
    this.live.delete(orderId);
    const owned = this.byOwner.get(order.ownerId);
    owned?.delete(orderId);
    if (owned?.size === 0) this.byOwner.delete(order.ownerId);
    return true;
  }

  /** Removes every order of a wallet (its stream was deleted). */
  removeOwner(ownerId: string): void {
    for (const id of [...(this.byOwner.get(ownerId) ?? [])]) this.remove(id);
  }

  /**
   * Takes out of their heaps (parks, see the class) every order of `symbol` that a price of `priceUnits` reaches
   * (buy limits and sell stops at or above it, sell limits and buy stops at or below it, take-profits by side)
   * and returns them: those reached falling first, then those reached rising, each the best level first and equal
   * levels in placement order (the order a backtest fills orders reached at one point of a candle's path in).
   * They stay indexed until {@link remove}d or {@link restore}d.
   */
  reached(symbol: string, priceUnits: number): IndexedOrder[] {
    const book = this.books.get(symbol);
    if (!book) return [];
    const out: IndexedOrder[] = [];
    this.drain(book.below, true, priceUnits, out);
    this.drain(book.above, false, priceUnits, out);
    return out;
  }

  /** Every indexed order (tests, status). */
  orders(): IterableIterator<IndexedOrder> {
    return this.live.values();
  }

  /** Pops the orders at the top of `heap` while `price` reaches them (`below`: level ≥ price; else ≤). */
  private drain(heap: Heap, below: boolean, price: number, out: IndexedOrder[]): void {
    for (let top = heap.peek(); top; top = heap.peek()) {
      if (this.live.get(top.orderId) !== top) {
        heap.pop(); // removed or replaced: skip
        continue;
      }
      if (below ? top.levelUnits < price : top.levelUnits > price) return;
      heap.pop();
      out.push(top);
    }
  }
}
