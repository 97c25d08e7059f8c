import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/principal';
import type { Services } from '../../services';

/**
 * The channel registry of the `/ws/v1` WebSocket (ARCHITECTURE §13). A capability adds a channel by pushing a
 * factory onto {@link wsChannels} (like `apiRoutes` for HTTP): market data registers `ticker` and `ticker_all`;
 * battles, orders and portfolio add theirs the same way. The socket plugin owns the protocol (parsing,
 * acknowledgements, errors, the 10-subscription limit, heartbeat); a channel only validates a subscription and
 * delivers messages.
 */

/** A client's message, as received (`{action, channel, ...params}`). */
export type WsClientMessage = Record<string, unknown> & { action: string; channel: string };

/** One connected socket, as channels see it. */
export interface WsConnection {
  readonly id: string;
  readonly request: FastifyRequest;
  /** The caller when the socket was opened with `?api_key=` or `?token=`, else null. */
  readonly principal: Principal | null;
  /**
   * Sends `{channel, type, data}` to this socket. Returns false when the message was dropped: the socket is
   * closed, or the client reads too slowly (more than 1 MiB unsent); a lossless channel sends it again later.
   */
  send(channel: string, type: string, data: unknown): boolean;
  /** Sends an already serialized message (fan-out: serialize once, send to many); false when dropped. */
  sendRaw(message: string): boolean;
}

/** A validated subscription, not yet started. */
export interface WsSubscription {
  /** Unique per socket and subscription target, e.g. `ticker:BTCUSDT`; a second subscribe is a no-op. */
  key: string;
  /** `data` of the `subscribed` / `unsubscribed` acknowledgement, e.g. `{symbol: 'BTCUSDT'}`. */
  ack: Record<string, unknown>;
  /**
   * Starts delivering to the connection; returns the function that stops it. A subscription that fails after
   * its acknowledgement (e.g. an unknown battle, found asynchronously, or a portfolio whose first snapshot fails:
   * `failSubscription` of src/http/ws/subscription-failure.ts), or whose target goes away or can send nothing more
   * (a deleted, completed or cancelled battle), calls `ended` so the socket frees its slot.
   */
  start(ended: () => void): () => void;
}

/** A channel of the socket. */
export interface WsChannel {
  readonly name: string;
  /** True when only authenticated sockets may subscribe (orders, portfolio). */
  readonly requiresAuth?: boolean;
  /**
   * Validates a subscribe or unsubscribe message and names its target. Throws a `DomainError` (its code is
   * sent back in the error message), e.g. `INVALID_SYMBOL`.
   */
  subscription(message: WsClientMessage, connection: WsConnection): WsSubscription;
  /** Releases the channel's resources when the server closes. */
  close?(): void;
}

/** Builds a channel for one application instance. */
export interface WsChannelFactory {
  name: string;
  create(services: Services): WsChannel | undefined;
}

/** The channels `/ws/v1` offers; capabilities append theirs. */
export const wsChannels: WsChannelFactory[] = [];
