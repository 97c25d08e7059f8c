/**
 * Natural batching of independent requests (docs/benchmarks.md "Event store"): a request goes out at once while
 * fewer than `maxInFlight` batches are in flight; otherwise it waits in a queue, and everything that queued up
 * while the earlier batches were running goes out together as soon as one of them completes. No timer: under
 * low load every request is sent alone within the same event-loop turn, under high load batches grow by
 * themselves (bounded by `maxItems` and `maxWeight`).
 *
 * The PostgreSQL event store uses it to send appends to many streams in one round trip and one transaction
 * (`append_events_batch`), but the class knows nothing about appends: `send` maps a batch of items to one
 * result per item, in the same order.
 */

/** Tuning of an {@link AppendBatcher}. */
export interface BatcherOptions {
  /** Batches in flight at once (each holds one database connection); default 2. */
  maxInFlight?: number;
  /** Most items in one batch; default 128. */
  maxItems?: number;
  /**
   * Most total weight in one batch (see {@link BatcherTarget.weight}); default unbounded. An item heavier than
   * this still goes out, alone.
   */
  maxWeight?: number;
}

/** What the batcher needs from its user. */
export interface BatcherTarget<Item, Result> {
  /**
   * Sends one batch; resolves to one result per item, in order. A rejection fails the whole batch (see
   * `isolatable`).
   */
  send(items: Item[]): Promise<Result[]>;
  /** The item's weight against `maxWeight` (e.g. its size in bytes). */
  weight(item: Item): number;
  /**
   * The item's ordering key (the stream id). Items with the same key are sent in submission order: several may
   * share a batch, but an item never goes out while a batch holding an earlier item of its key is in flight.
   */
  key(item: Item): string;
  /**
   * True when a batch that failed with `error` certainly wrote nothing, so each of its items may be sent again
   * on its own: then only the item that caused the failure (bad data, say) fails, not its neighbours. False
   * (e.g. a connection lost during the commit, outcome unknown) fails every item of the batch with `error`.
   */
  isolatable(error: unknown): boolean;
}

interface Pending<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/** Sizes of the batches sent so far (for benchmarks and tests). */
export interface BatcherStats {
  /** Batches sent (not counting one-by-one resends after an isolatable failure). */
  batches: number;
  /** Items sent in those batches. */
  items: number;
  /** Largest batch, in items. */
  largest: number;
  /** Batches that failed as a whole and were resent item by item. */
  isolated: number;
}

/**
 * Queues items and sends them in batches; see the module comment. Items with the same key (appends to one
 * stream) are applied in submission order, inside a batch and across batches; items with different keys in two
 * batches in flight at the same time are independent.
 */
export class AppendBatcher<Item, Result> {
  private queue: Pending<Item, Result>[] = [];
  private inFlight = 0;
  private scheduled = false;
  /** Keys of the items in flight, with their number. */
  private readonly busy = new Map<string, number>();
  private readonly maxInFlight: number;
  private readonly maxItems: number;
  private readonly maxWeight: number;
  readonly stats: BatcherStats = { batches: 0, items: 0, largest: 0, isolated: 0 };

  /** Throws `RangeError` when an option is not a positive integer. */
  constructor(
    private readonly target: BatcherTarget<Item, Result>,
    options: BatcherOptions = {},
  ) {
    this.maxInFlight = positive('maxInFlight', options.maxInFlight ?? 2);
    this.maxItems = positive('maxItems', options.maxItems ?? 128);
    this.maxWeight = positive('maxWeight', options.maxWeight ?? Number.MAX_SAFE_INTEGER);
  }

  /**
   * Queues `item`; resolves to its result once its batch has been sent, or rejects with the error of its batch
   * (or, after an isolatable failure, of its own resend).
   */
  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Flushes at the end of the current event-loop turn (`setImmediate`, not a timer): everything submitted in
   * this turn, including by promise continuations, joins the same batch.
   */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.take();
      // Everything queued waits for a key in flight: the batch holding it will flush again when done.
      if (batch.length === 0) return;
      const keys = batch.map((p) => this.target.key(p.item));
      for (const k of keys) this.busy.set(k, (this.busy.get(k) ?? 0) + 1);
      this.inFlight++;
      this.stats.batches++;
      this.stats.items += batch.length;
      if (batch.length > this.stats.largest) this.stats.largest = batch.length;
      void this.run(batch).finally(() => {
        for (const k of keys) {
          const n = this.busy.get(k)! - 1;
          if (n === 0) this.busy.delete(k);
          else this.busy.set(k, n);
        }
        this.inFlight--;
        this.schedule();
      });
    }
  }

  /** Takes the next batch off the queue: in order, skipping items whose key is in flight, within the bounds. */
  private take(): Pending<Item, Result>[] {
    const batch: Pending<Item, Result>[] = [];
    const rest: Pending<Item, Result>[] = [];
    let weight = 0;
    let i = 0;
    for (; i < this.queue.length && batch.length < this.maxItems; i++) {
      const p = this.queue[i]!;
      if (this.busy.size > 0 && this.busy.has(this.target.key(p.item))) {
        rest.push(p);
        continue;
      }
      const w = this.target.weight(p.item);
      if (batch.length > 0 && weight + w > this.maxWeight) break;
      weight += w;
      batch.push(p);
    }
    if (rest.length === 0) this.queue.splice(0, i);
    else this.queue = rest.concat(this.queue.slice(i));
    return batch;
  }

  private async run(batch: Pending<Item, Result>[]): Promise<void> {
    let results: Result[];
    try {
      results = await this.target.send(batch.map((p) => p.item));
      if (results.length !== batch.length) {
        throw new Error(`batch of ${batch.length} returned ${results.length} results`);
      }
    } catch (error) {
      if (batch.length > 1 && this.target.isolatable(error)) {
        this.stats.isolated++;
        // One by one, in order (appends to the same stream keep their order): only the culprit fails.
        for (const p of batch) await this.runAlone(p);
        return;
      }
      for (const p of batch) p.reject(error);
      return;
    }
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]!);
  }

  private async runAlone(p: Pending<Item, Result>): Promise<void> {
    try {
      const [result] = await this.target.send([p.item]);
      if (result === undefined) throw new Error('batch of 1 returned no result');
      p.resolve(result);
    } catch (error) {
      p.reject(error);
    }
  }
}

const positive = (name: string, value: number): number => {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
};
