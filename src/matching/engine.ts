import type { Logger } from 'pino';
import type { Observable, Subscription } from 'rxjs';
import type { WalletCommands } from '../../commands/wallet';
import { walletOwnerOf } from '../../domain/wallet/events';
import { walletEventOf } from '../../domain/wallet/recorded';
import {
  type AllSubscription,
  comparePositions,
  DELETIONS_STREAM,
  type EventStore,
  type LogPosition,
  type RecordedEvent,
  START,
  type StreamDeletedData,
} from '../../ports/event-store';
import type { FoldListener } from '../../projections/runner';
import type { PriceTick } from '../market/ticks';
import type { Leadership } from './leader';
import { type IndexedOrder, indexedOrder, OrderIndex } from './order-index';
import type { IndexSeed } from './seed';

/** Fills running at once; the rest wait in the queue (a big price move must not flood the database). */
export const MAX_FILLS_IN_FLIGHT = 64;
/** Events indexed ahead of their page that the engine remembers ({@link MatchingEngine.observeAppended}). */
const MAX_EARLY_EVENTS = 100_000;

/** The triggering price of a queued fill. */
interface QueuedTick {
  price: string;
  time: string;
  source: string;
  /** Base quantity the tick traded (a resting order's participation is a share of it); absent: none. */
  volume?: string;
}

/** Dependencies of {@link MatchingEngine}. */
export interface MatchingEngineDeps {
  store: EventStore;
  wallets: WalletCommands;
  /** The live tick stream (market data). */
  ticks$: Observable<PriceTick>;
  /** The latest price of a symbol (offered to a new pending order at once). */
  lastTick: (
    symbol: string,
  ) => { price: string; priceUnits: number; time: number; source: string } | undefined;
  leadership: Leadership;
  /**
   * This process's projection runner's committed pages (`ProjectionRunner.onFolded`), when it folds the log:
   * the engine then follows the log through the runner's reader instead of a `$all` reader of its own (one read
   * of each event per process, not two). Without it the engine subscribes to `$all` itself.
   */
  folded?: (listener: FoldListener) => () => void;
  /**
   * The index as a read model holds it at a log position (`readIndexSeed`): the engine starts from it and reads
   * only the log after that position. Absent, or resolving undefined (no usable read model), the engine reads the
   * whole log.
   */
  seed?: () => Promise<IndexSeed | undefined>;
  logger?: Logger;
}

/** What `/health` shows of the engine. */
export interface MatchingStatus {
  ok: boolean;
  leader: boolean;
  /** The index has caught up with the log seen at start. */
  ready: boolean;
  pending_orders: number;
  fills_in_flight: number;
  fills_queued: number;
  fills: number;
  ticks: number;
  last_error?: string;
}

/**
 * The matching engine (ARCHITECTURE §8, issue item 3). Pending orders are indexed in memory by symbol and
 * trigger price (`OrderIndex`), built at start from the `orders` read model at its checkpoint when one is usable
 * (`seed`), then by following the event log after it (from its start without a seed), so a restart rebuilds it
 * and orders placed by other processes are seen too. Every price tick takes out the orders it reaches and fills
 * them through the wallet command path (`FillOrder`: idempotent, so an order filled or cancelled meanwhile is
 * left alone; the unused lock is released by the fill). A new pending order is offered the current price at
 * once. Only the leader (PostgreSQL advisory lock) matches; followers keep their index warm.
 */
export class MatchingEngine {
  readonly index = new OrderIndex();
  private subscription: AllSubscription | undefined;
  /** Stops following the runner's pages (when the engine follows them). */
  private unfollow: (() => void) | undefined;
  private ticksSub: Subscription | undefined;
  private following: Promise<void> | undefined;
  private ready = false;
  private stopped = false;
  private inFlight = new Set<Promise<void>>();
  private queue: { order: IndexedOrder; tick: QueuedTick }[] = [];
  private queueHead = 0;
  /** Orders with a fill queued and not yet started (at most one each). */
  private readonly waiting = new Set<string>();
  private draining = false;
  private fills = 0;
  private ticks = 0;
  private lastError: string | undefined;
  /** Position of the last event of the runner's pages applied to the index. */
  private applied: LogPosition = START;
  /** Events indexed ahead of their page ({@link observeAppended}); their page skips them. */
  private readonly early = new Set<string>();

  constructor(private readonly deps: MatchingEngineDeps) {}

  /** Starts following the log and the ticks; resolves once the index has caught up with the log's head. */
  async start(): Promise<void> {
    await this.deps.leadership.start();
    if (this.deps.folded) await this.followRunner(this.deps.folded);
    else await this.followLog();
    this.ticksSub = this.deps.ticks$.subscribe((tick) => this.onTick(tick));
  }

  /**
   * Indexes the seed's orders (when a seed is configured and usable) and returns the position the log is to be
   * read after: the seed's, else the log's start. A seed that cannot be read is logged and the log read whole.
   */
  private async seedIndex(): Promise<LogPosition> {
    if (!this.deps.seed) return START;
    try {
      const seed = await this.deps.seed();
      if (!seed) return START;
      for (const order of seed.orders) this.index.add(order);
      this.deps.logger?.info(
        { pending_orders: seed.orders.length },
        'matching engine: index seeded from the orders read model',
      );
      return seed.position;
    } catch (error) {
      this.deps.logger?.warn(
        { err: error },
        'matching engine: no seed from the read model; reading the whole log',
      );
      for (const order of [...this.index.orders()]) this.index.remove(order.orderId);
      return START;
    }
  }

  /** Follows `$all` with a subscription of its own; resolves once it has read up to the head seen at start. */
  private async followLog(): Promise<void> {
    const from = await this.seedIndex();
    const head = await this.deps.store.headPosition();
    let caughtUp!: () => void;
    const ready = new Promise<void>((resolve) => {
      caughtUp = resolve;
    });
    if (comparePositions(head, from) <= 0) {
      this.ready = true;
      caughtUp();
    }
    this.subscription = this.deps.store.subscribeToAll({ after: from, maxBatch: 5_000 });
    this.following = (async () => {
      try {
        for await (const batch of this.subscription!) {
          for (const e of batch) this.apply(e);
          const last = batch[batch.length - 1];
          if (!this.ready && last && comparePositions(last.position, head) >= 0) {
            this.ready = true;
            caughtUp();
          }
        }
      } catch (error) {
        if (!this.stopped) {
          this.lastError = (error as Error).message;
          this.deps.logger?.error({ err: error }, 'matching engine: log subscription failed');
        }
      }
    })();
    await Promise.race([ready, this.following]);
  }

  /**
   * Builds the index by reading the log up to its visible end, then follows the runner's committed pages.
   * The listener is registered before the read, so no page is missed between the two: a page told before it
   * was visible to the read, and events the read already applied (a page told again after a runner restart,
   * or while the read ran) are skipped by position. (A page told before the listener existed is visible to the
   * read: the xid horizon only moves forward.)
   */
  private async followRunner(folded: (listener: FoldListener) => () => void): Promise<void> {
    const buffered: (readonly RecordedEvent[])[] = [];
    const applyPage = (events: readonly RecordedEvent[]) => {
      for (const e of events) {
        if (comparePositions(e.position, this.applied) <= 0) continue;
        if (!this.early.delete(e.eventId)) this.apply(e);
        this.applied = e.position;
      }
    };
    this.unfollow = folded((change) => {
      if (change === 'swapped' || this.stopped) return;
      if (this.ready) applyPage(change);
      else buffered.push(change);
    });
    // Seeded, the read starts at the seed's position (pages told meanwhile at or before it are skipped).
    this.applied = await this.seedIndex();
    for (let after = this.applied; ; ) {
      const page = await this.deps.store.readAll({ after, maxCount: 5_000 });
      applyPage(page.events);
      if (page.events.length < 5_000) break;
      after = page.next;
    }
    for (const page of buffered.splice(0)) applyPage(page);
    this.ready = true;
  }

  /**
   * Indexes events this process has just appended to a wallet (an order placed, filled or cancelled) without
   * waiting for the runner's page that folds them, so a pending order is matched from the first tick after its
   * placement is answered — also when the answer does not wait for the read models (`READ_YOUR_WRITES=on-read`).
   * The page skips them when it comes; events it already brought are left alone. Only while following the
   * runner's pages, once caught up (at start the read of the log indexes everything).
   */
  observeAppended(events: readonly RecordedEvent[]): void {
    if (!this.ready || !this.deps.folded || this.stopped) return;
    for (const e of events) {
      if (comparePositions(e.position, this.applied) <= 0) continue;
      // Bounded in case pages stop coming (the runner stopped): the pages then index them when they resume.
      if (this.early.size >= MAX_EARLY_EVENTS) return;
      this.early.add(e.eventId);
      this.apply(e);
    }
  }

  /** Stops matching, waits for the fills in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.ticksSub?.unsubscribe();
    this.unfollow?.();
    await this.subscription?.close();
    await this.following;
    this.queue = [];
    this.queueHead = 0;
    this.waiting.clear();
    await Promise.allSettled([...this.inFlight]);
    await this.deps.leadership.stop();
  }

  status(): MatchingStatus {
    return {
      ok: this.lastError === undefined,
      leader: this.deps.leadership.isLeader(),
      ready: this.ready,
      pending_orders: this.index.size,
      fills_in_flight: this.inFlight.size,
      fills_queued: this.queue.length - this.queueHead,
      fills: this.fills,
      ticks: this.ticks,
      ...(this.lastError ? { last_error: this.lastError } : {}),
    };
  }

  /** Waits until every queued fill has finished (tests). */
  async idle(): Promise<void> {
    for (;;) {
      if (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
      else if (this.queueHead < this.queue.length || this.draining) await new Promise((r) => setImmediate(r));
      else return;
    }
  }

  /**
   * Matches a price against the index (the tick handler; also used by benchmarks). Synchronous and cheap: the
   * reached orders are queued, and their fills run after the tick handler returned (the market feed calls every
   * subscriber synchronously), at most {@link MAX_FILLS_IN_FLIGHT} at a time.
   */
  onTick(
    tick: Pick<PriceTick, 'symbol' | 'price' | 'priceUnits' | 'time' | 'source'> &
      Partial<Pick<PriceTick, 'quantity' | 'trade'>>,
  ): IndexedOrder[] {
    this.ticks++;
    if (this.stopped || !this.ready || !this.deps.leadership.isLeader()) return [];
    const reached = this.index.reached(tick.symbol, tick.priceUnits);
    if (reached.length === 0) return reached;
    const at: QueuedTick = {
      price: tick.price,
      time: new Date(tick.time).toISOString(),
      source: tick.source,
    };
    if (tick.trade !== false && tick.quantity !== undefined) at.volume = tick.quantity;
    for (const order of reached) {
      // A reached order stays indexed until its last fill or its cancel: under a fill model a print may fill it in
      // part or not at all, and the prints that come while its fill runs must reach it too. At most one fill per
      // order waits behind the one running (a print arriving then is skipped: never more than asked), so a queued
      // order stays parked out of its heap until its fill starts (drain), and later prints do not touch it.
      if (this.waiting.has(order.orderId)) {
        this.index.restore(order);
        continue;
      }
      this.waiting.add(order.orderId);
      this.queue.push({ order, tick: at });
    }
    this.schedule();
    return reached;
  }

  private schedule(): void {
    if (this.draining) return;
    this.draining = true;
    setImmediate(() => {
      this.draining = false;
      this.drain();
    });
  }

  /** Starts queued fills while fewer than the maximum are in flight. */
  private drain(): void {
    while (this.inFlight.size < MAX_FILLS_IN_FLIGHT && this.queueHead < this.queue.length) {
      const next = this.queue[this.queueHead++]!;
      this.waiting.delete(next.order.orderId);
      // Back in its heap (at its place in placement order) while its fill runs: a print meanwhile may queue one more.
      this.index.restore(next.order);
      this.fill(next.order, next.tick);
    }
    if (this.queueHead === this.queue.length) {
      this.queue = [];
      this.queueHead = 0;
    }
  }

  /**
   * Folds one event of the log into the index. Never throws: the engine applies events inside the projection
   * runner's page listener and while it starts, so an event it cannot index must neither skip the rest of
   * the page nor stop the server from starting. It is logged and reported in `/health` (`last_error`).
   */
  private apply(e: RecordedEvent): void {
    try {
      this.applyEvent(e);
    } catch (error) {
      this.lastError = `cannot index event ${e.eventId} of ${e.streamId}: ${(error as Error).message}`;
      this.deps.logger?.error(
        { err: error, stream: e.streamId, event_id: e.eventId, type: e.type },
        'matching engine: event not indexed',
      );
    }
  }

  private applyEvent(e: RecordedEvent): void {
    if (e.streamId === DELETIONS_STREAM) {
      const owner = walletOwnerOf((e.data as StreamDeletedData).stream_id);
      if (owner) this.index.removeOwner(owner);
      return;
    }
    const wallet = walletEventOf(e);
    if (!wallet) return;
    const { owner: ownerId, event } = wallet;
    switch (event.type) {
      case 'OrderPlaced': {
        const d = event.data;
        // A market order, and an IOC or FOK limit, is decided in the append that placed it: never indexed.
        if (d.type === 'market' || (d.type === 'limit' && d.time_in_force !== undefined)) return;
        const order = indexedOrder({
          orderId: d.order_id,
          ownerId,
          symbol: d.symbol,
          side: d.side,
          type: d.type,
          level: (d.type === 'limit' ? d.price : d.trigger_price)!,
        });
        this.index.add(order);
        // Offer the current price at once: an order placed at or through the market fills without waiting.
        if (this.ready) {
          const last = this.deps.lastTick(d.symbol);
          if (last) this.onTick({ symbol: d.symbol, ...last, source: last.source as PriceTick['source'] });
        }
        return;
      }
      case 'OrderFilled': {
        // A partial fill (fill models) leaves the order open: it stays indexed (the leader re-adds the order it
        // took out to fill, see fill()).
        const rest = event.data.remaining_quantity;
        if (rest === undefined || Number(rest) <= 0) this.index.remove(event.data.order_id);
        return;
      }
      case 'OrderCancelled':
        this.index.remove(event.data.order_id);
        return;
      default:
        return;
    }
  }

  private fill(order: IndexedOrder, tick: QueuedTick): void {
    const job = (async () => {
      try {
        const outcome = await this.deps.wallets.fill(order.ownerId, order.orderId, tick, {
          actor: 'matching-engine',
        });
        if (outcome.events.some((e) => e.type === 'OrderFilled')) this.fills++;
        // Filled or cancelled: out of the index now (its event's page removes it too, idempotently).
        if (!outcome.state.openOrders[order.orderId]) this.index.remove(order.orderId);
      } catch (error) {
        // Transient (storage): it is still indexed (restored when its fill started), so the next tick retries.
        // FillOrder is idempotent.
        this.lastError = (error as Error).message;
        this.deps.logger?.warn({ err: error, order_id: order.orderId }, 'matching engine: fill failed');
      }
    })();
    this.inFlight.add(job);
    void job.finally(() => {
      this.inFlight.delete(job);
      this.drain();
    });
  }
}
