import type { RecordedEvent } from '../../ports/event-store';
import { keepRunning, stopAll } from '../core/running-set';
import { serialPump } from '../http/ws/serial-pump';
import type { Services } from '../services';

/** Events read from the wallet stream per read while a follower catches up. */
const PAGE = 500;
/** Re-read period when this process folds no read models (nothing tells it of new events), ms. */
const POLL_MS = 1_000;
/** Wait before delivering again after a delivery was refused (the client reads too slowly), ms. */
const CONGESTED_RETRY_MS = 100;

/**
 * Delivers one event to a follower: true once delivered, false when it could not be taken now (the socket's
 * buffer is full): the same event is read and offered again later, so nothing is lost.
 */
export type WalletEventDelivery = (event: RecordedEvent) => boolean | Promise<boolean>;

/**
 * Follows one wallet stream for one consumer, in stream order, each event exactly once: every delivery is a read of
 * the stream after the last revision delivered, so nothing is skipped whatever order the wake-ups come in.
 */
class WalletFollower {
  private running = true;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly services: Services,
    readonly stream: string,
    /** The last revision delivered; `undefined` until the start revision is known. */
    private last: number | undefined,
    private readonly deliver: WalletEventDelivery,
  ) {}

  /** Reads and delivers everything after the last revision delivered (one read loop at a time). */
  readonly pump = serialPump(
    () => this.drain(),
    (error) => this.services.logger.warn({ err: error, stream: this.stream }, 'wallet follower read failed'),
    () => this.running,
  );

  private async drain(): Promise<void> {
    this.last ??= await this.services.eventStore.streamRevision(this.stream);
    for (;;) {
      const events = await this.services.eventStore.readStream(this.stream, {
        fromRevision: this.last + 1,
        maxCount: PAGE,
      });
      for (const e of events) {
        if (!this.running) return;
        if (!(await this.deliver(e))) {
          this.retryLater(CONGESTED_RETRY_MS);
          return;
        }
        this.last = e.revision;
      }
      if (events.length < PAGE) return;
    }
  }

  private retryLater(ms: number): void {
    if (this.timer || !this.running) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, ms);
    this.timer.unref();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
  }
}

/**
 * The venue's one subscription to wallet events for its live doors (`/ws/v1`'s `orders` channel, the Binance
 * door's user data stream; ARCHITECTURE §17 "lossless resumable order stream"): events appended by this process
 * (its orders, cancels and matching-engine fills) wake their followers as soon as they are durable; events of other
 * processes once this process's read models have folded them, or its poll finds them when it folds none. Each
 * follower re-reads its wallet stream after the last revision it delivered, so two wake-ups deliver nothing twice.
 */
class WalletEvents {
  private readonly followers = new Set<WalletFollower>();
  private readonly unfollow: (() => void) | undefined;
  private readonly unlisten: (() => void) | undefined;
  private readonly poll: NodeJS.Timeout | undefined;

  constructor(private readonly services: Services) {
    this.unlisten = services.trading?.onAppended((events) => {
      const stream = events[0]?.streamId;
      for (const f of this.followers) if (f.stream === stream) f.pump();
    });
    if (services.projections.folding) {
      this.unfollow = services.projections.onFolded((change) => {
        if (change === 'swapped') return;
        const streams = new Set(change.map((e) => e.streamId));
        for (const f of this.followers) if (streams.has(f.stream)) f.pump();
      });
    } else {
      this.poll = setInterval(() => {
        for (const f of this.followers) f.pump();
      }, POLL_MS);
      this.poll.unref();
    }
  }

  /**
   * Delivers the events of wallet stream `stream` after revision `since` (−1: the whole history; undefined: only
   * what comes next) to `deliver`, in order, each once. Returns the function that stops.
   */
  follow(stream: string, since: number | undefined, deliver: WalletEventDelivery): () => void {
    const follower = new WalletFollower(this.services, stream, since, deliver);
    const stop = keepRunning(this.followers, follower);
    follower.pump();
    return stop;
  }

  close(): void {
    this.unfollow?.();
    this.unlisten?.();
    if (this.poll) clearInterval(this.poll);
    stopAll(this.followers);
  }
}

const shared = new WeakMap<Services, { events: WalletEvents; users: number }>();

/**
 * The application's one {@link WalletEvents} (one subscription to appends and folds for every live door): each user
 * takes it here and calls `release` when done; the last release closes it.
 */
export const walletEventsOf = (services: Services): { events: WalletEvents; release: () => void } => {
  let entry = shared.get(services);
  if (!entry) {
    entry = { events: new WalletEvents(services), users: 0 };
    shared.set(services, entry);
  }
  entry.users++;
  let released = false;
  return {
    events: entry.events,
    release: () => {
      const e = shared.get(services);
      if (released || !e) return;
      released = true;
      if (--e.users === 0) {
        e.events.close();
        shared.delete(services);
      }
    },
  };
};

export type { WalletEvents };
