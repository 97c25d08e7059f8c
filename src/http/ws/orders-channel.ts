import { DomainError } from '../../../domain/shared/errors';
import { walletStreamId } from '../../../domain/wallet/events';
import { ownerIdOf } from '../../auth/principal';
import type { Services } from '../../services';
import { walletEventView } from '../../trading/wallet-event-view';
import type { WsChannel, WsChannelFactory, WsClientMessage, WsConnection } from './registry';
import { serialPump } from './serial-pump';

/** Events read from the wallet stream per read while a subscriber catches up. */
const PAGE = 500;
/** Re-read period when this process folds no read models (nothing tells it of new events), ms. */
const POLL_MS = 1_000;
/** Wait before resending after the socket's buffer was full (the client reads too slowly), ms. */
const CONGESTED_RETRY_MS = 100;

/** Parses `since` of a subscribe message: a stream revision ≥ −1, or absent (only what comes next). */
const parseSince = (message: WsClientMessage): number | undefined => {
  const since = message['since'];
  if (since === undefined || since === null) return undefined;
  // A safe integer: a larger one passed the check and failed every read of the stream (out of range for
  // `bigint`), so the subscription silently delivered nothing.
  if (typeof since !== 'number' || !Number.isSafeInteger(since) || since < -1) {
    throw new DomainError('VALIDATION_ERROR', '"since" must be an integer stream revision ≥ -1', {
      field: 'since',
    });
  }
  return since;
};

/**
 * Delivers one wallet's events to one socket, in stream order, each exactly once: every delivery is a read of
 * the stream after the last revision sent, so nothing is skipped whatever order the wake-ups come in, and a
 * message the socket could not take (its buffer full) is read and sent again later instead of being lost.
 */
class WalletFollower {
  private running = true;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly services: Services,
    private readonly connection: WsConnection,
    private readonly stream: string,
    /** The last revision sent; `undefined` until the start revision is known. */
    private last: number | undefined,
  ) {}

  /** Reads and sends everything after the last revision sent (one read loop at a time). */
  readonly pump = serialPump(
    () => this.drain(),
    (error) => this.services.logger.warn({ err: error, stream: this.stream }, 'orders channel read failed'),
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
        if (!this.connection.send('orders', e.type, walletEventView(e))) {
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
 * The private `orders` channel of `/ws/v1` (ARCHITECTURE §13, §17 "lossless resumable order stream"): the
 * authenticated owner's wallet events (orders placed, filled, cancelled, rejected; sessions and resets), each as
 * `{channel: 'orders', type: <event type>, data}` where `data` has the shape of an item of
 * `GET /account/events` (`revision`, `event_id`, `type`, `data`, `occurred_at`, `recorded_at`, `actor`,
 * `correlation_id`, `prev_hash`, `hash`). Subscribe with `{action: 'subscribe', channel: 'orders'}` for what
 * comes next, or with `since: <revision>` to first receive every event after that revision (`-1`: the whole
 * history), e.g. after a reconnect with the last revision seen: nothing is lost or repeated. The owner is the
 * socket's credential: an agent key follows that agent's wallet, an account key or a JWT the account's. Events
 * appended by this process (its orders, cancels and matching-engine fills) are sent as soon as they are durable;
 * events of other processes once this process's read models have folded them (or its poll finds them). A read
 * right after an event seen here waits for the read models to include it (`OwnerWatermarks`).
 */
class OrdersChannel implements WsChannel {
  readonly name = 'orders';
  readonly requiresAuth = true;
  private readonly followers = new Map<WalletFollower, string>();
  private readonly unfollow: (() => void) | undefined;
  private readonly unlisten: (() => void) | undefined;
  private readonly poll: NodeJS.Timeout | undefined;

  constructor(private readonly services: Services) {
    // This process's own appends are pushed as soon as they are durable; other processes' when folded (or
    // polled). A follower reads the stream after the last revision it sent, so two wake-ups send nothing twice.
    this.unlisten = services.trading?.onAppended((events) => {
      const stream = events[0]?.streamId;
      for (const [f, s] of this.followers) if (s === stream) f.pump();
    });
    if (services.projections.folding) {
      this.unfollow = services.projections.onFolded((change) => {
        if (change === 'swapped') return;
        const streams = new Set(change.map((e) => e.streamId));
        for (const [f, stream] of this.followers) if (streams.has(stream)) f.pump();
      });
    } else {
      this.poll = setInterval(() => {
        for (const f of this.followers.keys()) f.pump();
      }, POLL_MS);
      this.poll.unref();
    }
  }

  subscription(message: WsClientMessage, connection: WsConnection) {
    const principal = connection.principal!;
    const ownerId = ownerIdOf(principal);
    const stream = walletStreamId(ownerId);
    const since = message.action === 'subscribe' ? parseSince(message) : undefined;
    return {
      key: `orders:${ownerId}`,
      ack: { owner_id: ownerId, stream_id: stream, ...(since !== undefined ? { since } : {}) },
      start: () => {
        const follower = new WalletFollower(this.services, connection, stream, since);
        this.followers.set(follower, stream);
        follower.pump();
        return () => {
          follower.stop();
          this.followers.delete(follower);
        };
      },
    };
  }

  close(): void {
    this.unfollow?.();
    this.unlisten?.();
    if (this.poll) clearInterval(this.poll);
    for (const f of this.followers.keys()) f.stop();
    this.followers.clear();
  }
}

/** Registers the `orders` channel (needs the trading capability). */
export const ordersChannels: WsChannelFactory[] = [
  { name: 'orders', create: (services) => (services.trading ? new OrdersChannel(services) : undefined) },
];
