import { toUnitsNumber } from '../../domain/market/decimal';
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
  /** The same in 1e-8 units (exact integer comparisons on the hot path). */
  levelUnits: number;
  direction: 'at_or_below' | 'at_or_above';
}

/** Builds an index entry from an order's terms. */
export const indexedOrder = (o: {
  orderId: string;
  ownerId: string;
  symbol: string;
  side: OrderSide;
  type: Exclude<OrderType, 'market'>;
  level: string;
}): IndexedOrder => ({
  ...o,
  levelUnits: toUnitsNumber(o.level),
  direction: triggerDirection(o.side, o.type),
});

/** A binary heap ordered by `before(a, b)` (a comes out first). */
class Heap<T> {
  private readonly items: T[] = [];
  constructor(private readonly before: (a: T, b: T) => boolean) {}
  get size(): number {
    return this.items.length;
  }
  peek(): T | undefined {
    return this.items[0];
  }
  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(a[i]!, a[parent]!)) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }
  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.before(a[l]!, a[m]!)) m = l;
        if (r < a.length && this.before(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

interface SymbolBook {
  /** Orders that fire when the price falls to their level: highest level first. */
  below: Heap<IndexedOrder>;
  /** Orders that fire when the price rises to their level: lowest level first. */
  above: Heap<IndexedOrder>;
}

/**
 * The matching engine's in-memory index of pending orders (ARCHITECTURE §8, issue item 3): per symbol, two
 * heaps keyed by trigger price, so a tick costs O(1) when it reaches nothing and O(k log n) for the k orders it
 * reaches. Removal (fill, cancel) is lazy: the entry leaves the live map at once and is skipped when it surfaces.
 */
export class OrderIndex {
  private readonly live = new Map<string, IndexedOrder>();
  private readonly books = new Map<string, SymbolBook>();
  private readonly byOwner = new Map<string, Set<string>>();

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
    let book = this.books.get(order.symbol);
    if (!book) {
      book = {
        below: new Heap((a, b) => a.levelUnits > b.levelUnits),
        above: new Heap((a, b) => a.levelUnits < b.levelUnits),
      };
      this.books.set(order.symbol, book);
    }
    (order.direction === 'at_or_below' ? book.below : book.above).push(order);
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
   * Takes out every order of `symbol` that a price of `priceUnits` reaches (buy limits and sell stops at or
   * above it, sell limits and buy stops at or below it, take-profits by side) and returns them.
   */
  reached(symbol: string, priceUnits: number): IndexedOrder[] {
    const book = this.books.get(symbol);
    if (!book) return [];
    const out: IndexedOrder[] = [];
    this.drain(book.below, (o) => o.levelUnits >= priceUnits, out);
    this.drain(book.above, (o) => o.levelUnits <= priceUnits, out);
    return out;
  }

  /** Every indexed order (tests, status). */
  orders(): IterableIterator<IndexedOrder> {
    return this.live.values();
  }

  private drain(
    heap: Heap<IndexedOrder>,
    reachedBy: (o: IndexedOrder) => boolean,
    out: IndexedOrder[],
  ): void {
    for (let top = heap.peek(); top; top = heap.peek()) {
      if (this.live.get(top.orderId) !== top) {
        heap.pop(); // removed or replaced: skip
        continue;
      }
      if (!reachedBy(top)) return;
      heap.pop();
      this.remove(top.orderId);
      out.push(top);
    }
  }
}
