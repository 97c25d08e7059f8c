import { DomainError } from '../../../domain/shared/errors';
import { walletStreamId } from '../../../domain/wallet/events';
import { ownerIdOf } from '../../auth/principal';
import type { Services } from '../../services';
import { walletEventView } from '../../trading/wallet-event-view';
import { type WalletEvents, walletEventsOf } from '../../trading/wallet-follow';
import type { WsChannel, WsChannelFactory, WsClientMessage, WsConnection } from './registry';

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
  private readonly events: WalletEvents;
  private readonly release: () => void;

  constructor(services: Services) {
    ({ events: this.events, release: this.release } = walletEventsOf(services));
  }

  subscription(message: WsClientMessage, connection: WsConnection) {
    const principal = connection.principal!;
    const ownerId = ownerIdOf(principal);
    const stream = walletStreamId(ownerId);
    const since = message.action === 'subscribe' ? parseSince(message) : undefined;
    return {
      key: `orders:${ownerId}`,
      ack: { owner_id: ownerId, stream_id: stream, ...(since !== undefined ? { since } : {}) },
      // A message the socket could not take (its buffer full) is read and sent again later, not lost.
      start: () =>
        this.events.follow(stream, since, (e) => connection.send('orders', e.type, walletEventView(e))),
    };
  }

  close(): void {
    this.release();
  }
}

/** Registers the `orders` channel (needs the trading capability). */
export const ordersChannels: WsChannelFactory[] = [
  { name: 'orders', create: (services) => (services.trading ? new OrdersChannel(services) : undefined) },
];
