import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { DomainError, isDomainError } from '../../../domain/shared/errors';
import type { CredentialWatch } from '../../auth/credential-watch';
import type { Principal } from '../../auth/principal';
import { apiKeyHeader, apiKeyOfCredential } from '../../auth/service';
import { jsonType } from '../../contract/common';
import { keepAlive } from '../../net/ws-heartbeat';
import { withIssues } from '../errors';
import { battleChannels } from './battle-channel';
import { candlesChannels } from './candles-channel';
import { errorData } from './error-data';
import { ordersChannels } from './orders-channel';
import { portfolioChannels } from './portfolio-channel';
import { type WsChannel, type WsClientMessage, type WsConnection, wsChannels } from './registry';
import { tickerChannels } from './ticker-channels';

/**
 * `GET /ws/v1` (ARCHITECTURE §13, §14b). Protocol:
 * - Optional credential `?api_key=…` or `?token=<JWT>` (needed only by private channels), or on the handshake
 *   the HTTP headers of the spec's Authentication part (`X-API-Key`, `Authorization: Bearer`, with `X-Agent-Id`
 *   as over HTTP) for clients that can set headers; the query wins when both are given. `?agent_id=` scopes a
 *   JWT or account key to one of the account's agents like `X-Agent-Id` (and wins over it). A bad credential
 *   or agent id closes the socket with code 4401 after an error message; so does the credential ceasing to work
 *   later (a regenerated or deleted key, a deleted agent, a suspended account, an expired or revoked token:
 *   `CredentialWatcher`, checked on each such change of this process and, for all sockets of the process together,
 *   once per heartbeat interval).
 * - Client → server: `{action: 'subscribe' | 'unsubscribe', channel, ...params}` (also `channel: 'ticker:BTCUSDT'`
 *   or `'battle:<id>'`, the original SDK's form: that subscription is answered on that channel name),
 *   `{action: 'ping'}`.
 * - Server → client: `{channel, type, data}`. `system` messages: `welcome` on connect, `subscribed` /
 *   `unsubscribed` acknowledgements (on the subscribed channel), `pong`, `heartbeat` (every WS_HEARTBEAT_MS,
 *   with a protocol ping; a socket that missed the previous pong is closed), and `error` with `{code, message,
 *   details?}` for a bad message (the socket stays open; a `VALIDATION_ERROR` lists `details.issues[]` with
 *   `location: 'message'`, as over HTTP).
 * - At most {@link MAX_SUBSCRIPTIONS} subscriptions per socket.
 */
export const MAX_SUBSCRIPTIONS = 10;

/**
 * Largest client message answered (bytes, docs/market-data.md "Limits"); a longer one gets `VALIDATION_ERROR`
 * and the socket stays open. The `ws` library's own `maxPayload` (src/http/app.ts, {@link WS_FRAME_LIMIT_BYTES})
 * is larger, so that this answer can be given: past it the library closes the socket (1009) by itself.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024;

/** The frame size past which the `ws` library closes the socket (1009) without an answer. */
export const WS_FRAME_LIMIT_BYTES = 1 << 20;
/** A socket whose unsent data exceeds this drops further channel messages until it catches up. */
const MAX_BUFFERED_BYTES = 1 << 20;

const WS_CLOSE_UNAUTHORIZED = 4401;

for (const factory of [
  ...tickerChannels,
  ...candlesChannels,
  ...ordersChannels,
  ...portfolioChannels,
  ...battleChannels,
]) {
  if (!wsChannels.some((f) => f.name === factory.name)) wsChannels.push(factory);
}

const credentialOf = (request: FastifyRequest): { apiKey?: string; token?: string } | undefined => {
  const q = request.query as Record<string, unknown>;
  const apiKey = typeof q['api_key'] === 'string' && q['api_key'] ? q['api_key'] : undefined;
  const token = typeof q['token'] === 'string' && q['token'] ? q['token'] : undefined;
  return apiKey || token ? { ...(apiKey ? { apiKey } : {}), ...(token ? { token } : {}) } : undefined;
};

/**
 * The API key a socket's principal was resolved from, alone or beside a token (`?api_key=`, else `X-API-Key`; a key
 * and a token together are both checked, as on a REST request), undefined for a JWT alone: what the shared heartbeat
 * check reads again (`CredentialWatcher`).
 */
const apiKeyOf = (
  request: FastifyRequest,
  credential: { apiKey?: string; token?: string } | undefined,
): string | undefined => (credential ? apiKeyOfCredential(credential) : apiKeyHeader(request));

/** The `?agent_id=` of the handshake: the agent a JWT or account key acts for (as `X-Agent-Id`). */
const agentIdOf = (request: FastifyRequest): string | undefined => {
  const value = (request.query as Record<string, unknown>)['agent_id'];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/** True when the handshake carries a credential header (`X-API-Key` or `Authorization`). */
const hasCredentialHeader = (request: FastifyRequest): boolean =>
  Boolean(request.headers['x-api-key']) || Boolean(request.headers.authorization);

/**
 * The connection a subscription delivers to: `connection` itself, or for a subscription made as
 * `channel: "name:target"` (the original SDK's form, docs/compatibility.md) one that sends the channel's messages
 * under that name, so a client keying its handlers by it sees them. Raw (pre-serialized, fan-out) messages start
 * with `{"channel":"<name>",` (they are built as `JSON.stringify({channel, type, data})`): only that prefix is
 * rewritten, so the data is still serialized once for all subscribers.
 */
const answeringOn = (connection: WsConnection, name: string, answerOn: string | undefined): WsConnection => {
  if (answerOn === undefined || answerOn === name) return connection;
  const prefix = `{"channel":${JSON.stringify(name)},`;
  const renamed = `{"channel":${JSON.stringify(answerOn)},`;
  return {
    id: connection.id,
    request: connection.request,
    get principal() {
      return connection.principal;
    },
    send: (channel, type, data) => connection.send(channel === name ? answerOn : channel, type, data),
    sendRaw: (message) =>
      connection.sendRaw(message.startsWith(prefix) ? renamed + message.slice(prefix.length) : message),
  };
};

/**
 * Parses a client message; `channel: "name:target"` becomes `channel: name` plus `symbol` (or `target`), and is
 * answered on `name:target`.
 */
const parseMessage = (raw: string): { message: WsClientMessage; answerOn?: string } => {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new DomainError('VALIDATION_ERROR', 'message is not valid JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new DomainError('VALIDATION_ERROR', 'message must be a JSON object {action, channel, ...}');
  }
  const m = value as Record<string, unknown>;
  if (typeof m['action'] !== 'string') {
    // Absent is "missing"; present with another type says so (it used to read "missing" too).
    throw new DomainError(
      'VALIDATION_ERROR',
      m['action'] === undefined
        ? 'missing "action"'
        : `"action" must be a string: subscribe, unsubscribe or ping (got ${jsonType(m['action'])})`,
      { field: 'action' },
    );
  }
  if (m['action'] === 'ping') return { message: { ...m, action: 'ping', channel: 'system' } };
  if (m['action'] !== 'subscribe' && m['action'] !== 'unsubscribe') {
    throw new DomainError(
      'VALIDATION_ERROR',
      `unknown action ${JSON.stringify(m['action'])}: use subscribe, unsubscribe or ping`,
      { field: 'action' },
    );
  }
  if (typeof m['channel'] !== 'string' || m['channel'] === '') {
    throw new DomainError(
      'VALIDATION_ERROR',
      m['channel'] === undefined || m['channel'] === ''
        ? 'missing "channel"'
        : `"channel" must be a string naming a channel (got ${jsonType(m['channel'])})`,
      { field: 'channel' },
    );
  }
  // Split at the first colon only: `ticker:BTCUSDT:X` names the symbol `BTCUSDT:X` (unknown), not `BTCUSDT`.
  const colon = m['channel'].indexOf(':');
  const name = colon < 0 ? m['channel'] : m['channel'].slice(0, colon);
  const target = colon < 0 ? undefined : m['channel'].slice(colon + 1);
  if (target !== undefined) {
    return {
      message: { ...m, action: m['action'], channel: name, symbol: m['symbol'] ?? target, target },
      answerOn: m['channel'],
    };
  }
  return { message: { ...m, action: m['action'], channel: name } };
};

/** The `/ws/v1` plugin (registered at the root). */
export const websocketRoutes: FastifyPluginAsync = async (app) => {
  const channels = new Map<string, WsChannel>();
  for (const factory of wsChannels) {
    const channel = factory.create(app.services);
    if (channel) channels.set(channel.name, channel);
  }
  app.addHook('onClose', async () => {
    for (const c of channels.values()) c.close?.();
  });
  const heartbeatMs = app.services.config.WS_HEARTBEAT_MS;

  app.get('/ws/v1', { websocket: true, schema: { hide: true } }, (socket: WebSocket, request) => {
    // Each subscription's stop function and the acknowledgement it was started with: a second subscribe to the
    // same target is a no-op and is acknowledged with what is in effect (not with the new message's parameters,
    // e.g. an `orders` `since` that is not replayed).
    const subscriptions = new Map<string, { stop: () => void; ack: Record<string, unknown> }>();
    let principal: Principal | null = null;
    let closed = false;
    const send = (message: string): boolean => {
      if (closed || socket.readyState !== socket.OPEN) return false;
      if (socket.bufferedAmount > MAX_BUFFERED_BYTES) return false;
      socket.send(message);
      return true;
    };
    const connection: WsConnection = {
      id: randomUUID(),
      request,
      get principal() {
        return principal;
      },
      send: (channel, type, data) => send(JSON.stringify({ channel, type, data })),
      sendRaw: send,
    };
    const error = (e: unknown, context: Record<string, unknown> = {}) => {
      // A VALIDATION_ERROR lists details.issues[] like over HTTP; its fields are those of the client message.
      const d = isDomainError(e)
        ? withIssues(e, () => 'message', { field: 'message', location: 'message' })
        : new DomainError('INTERNAL_ERROR', 'internal error');
      if (!isDomainError(e)) request.log.error({ err: e }, 'websocket message failed');
      connection.send('system', 'error', { ...errorData(d), ...context });
    };

    const handle = (raw: string) => {
      let message: WsClientMessage;
      let answerOn: string | undefined;
      try {
        ({ message, answerOn } = parseMessage(raw));
      } catch (e) {
        error(e);
        return;
      }
      const context = { action: message.action, channel: message.channel };
      try {
        if (message.action === 'ping') {
          connection.send('system', 'pong', { timestamp: new Date().toISOString() });
          return;
        }
        const channel = channels.get(message.channel);
        if (!channel) {
          throw new DomainError('VALIDATION_ERROR', `unknown channel ${message.channel}`, {
            field: 'channel',
            channels: [...channels.keys()],
          });
        }
        if (channel.requiresAuth && !principal) {
          throw new DomainError(
            'INVALID_API_KEY',
            `channel ${channel.name} needs a credential on connect: ?api_key=, ?token=, or the X-API-Key or Authorization header`,
          );
        }
        const target = answeringOn(connection, channel.name, answerOn);
        const sub = channel.subscription(message, target);
        if (message.action === 'subscribe') {
          const existing = subscriptions.get(sub.key);
          if (!existing) {
            if (subscriptions.size >= MAX_SUBSCRIPTIONS) {
              throw new DomainError(
                'VALIDATION_ERROR',
                `at most ${MAX_SUBSCRIPTIONS} subscriptions per socket`,
                {
                  limit: MAX_SUBSCRIPTIONS,
                },
              );
            }
            target.send(channel.name, 'subscribed', sub.ack);
            const entry = { stop: () => {}, ack: sub.ack };
            subscriptions.set(sub.key, entry);
            entry.stop = sub.start(() => {
              if (subscriptions.get(sub.key) === entry) subscriptions.delete(sub.key);
            });
          } else {
            target.send(channel.name, 'subscribed', existing.ack);
          }
        } else {
          const existing = subscriptions.get(sub.key);
          if (!existing) {
            throw new DomainError('VALIDATION_ERROR', `not subscribed to ${sub.key}`, { field: 'channel' });
          }
          existing.stop();
          subscriptions.delete(sub.key);
          target.send(channel.name, 'unsubscribed', sub.ack);
        }
      } catch (e) {
        error(e, context);
      }
    };

    // Listeners are attached synchronously (messages sent before authentication finishes are queued).
    const queue: string[] = [];
    let ready = false;
    socket.on('message', (data, isBinary) => {
      const text = isBinary ? '' : data.toString();
      if (isBinary) {
        error(new DomainError('VALIDATION_ERROR', 'binary messages are not supported; send JSON text'));
        return;
      }
      const bytes = Buffer.byteLength(text);
      if (bytes > MAX_MESSAGE_BYTES) {
        error(
          new DomainError(
            'VALIDATION_ERROR',
            `message is ${bytes} bytes; at most ${MAX_MESSAGE_BYTES} are read`,
            {
              limit_bytes: MAX_MESSAGE_BYTES,
            },
          ),
        );
        return;
      }
      if (ready) handle(text);
      else queue.push(text);
    });
    // Set once the socket is authenticated: re-resolves its credential on changes and on each heartbeat.
    let watch: CredentialWatch | undefined;
    keepAlive(socket, heartbeatMs, () => {
      connection.send('system', 'heartbeat', { timestamp: new Date().toISOString() });
    });
    socket.on('close', () => {
      closed = true;
      watch?.stop();
      for (const { stop } of subscriptions.values()) stop();
      subscriptions.clear();
    });

    const open = () => {
      connection.send('system', 'welcome', {
        connection_id: connection.id,
        authenticated: principal !== null,
        channels: [...channels.values()].map((c) => ({
          name: c.name,
          requires_auth: c.requiresAuth ?? false,
        })),
        max_subscriptions: MAX_SUBSCRIPTIONS,
        heartbeat_ms: heartbeatMs,
      });
      ready = true;
      for (const text of queue.splice(0)) handle(text);
    };

    const credential = credentialOf(request);
    if (!credential && !hasCredentialHeader(request)) {
      setImmediate(open); // after the client has seen the upgrade complete
      return;
    }
    const { auth, credentialWatcher } = app.services;
    if (!auth || !credentialWatcher) {
      error(new DomainError('SERVICE_UNAVAILABLE', 'authentication is not available'));
      socket.close(WS_CLOSE_UNAUTHORIZED, 'authentication unavailable');
      return;
    }
    // A client following the spec's Authentication part sends its key as a header: without this it would get
    // an anonymous socket (`authenticated: false`) and its private subscriptions refused. `?agent_id=` scopes
    // the socket to an agent like `X-Agent-Id` (a browser cannot set handshake headers) and wins over it.
    const agentId = agentIdOf(request);
    // A fresh carrier each time: `authenticate` remembers its answer per request object, and a later check must
    // resolve the credential again.
    const resolve = () =>
      (credential
        ? auth.resolveCredential(credential)
        : auth.authenticate({ headers: request.headers }, 'key-or-jwt')
      ).then((p) => (agentId !== undefined ? auth.scopeToAgent(p, agentId, 'agent_id') : p));
    resolve().then(
      (p) => {
        principal = p;
        // The socket lives as long as its credential (spec "Authentication" rule 6): a regenerated or deleted
        // key, a deleted agent, a suspended account or an expired token ends it as a bad one does here.
        if (!closed) {
          watch = credentialWatcher.watch(
            { apiKey: apiKeyOf(request, credential), principal: p },
            resolve,
            (e) => {
              error(e);
              socket.close(WS_CLOSE_UNAUTHORIZED, e.code);
            },
          );
        }
        open();
      },
      (e: unknown) => {
        error(e);
        socket.close(WS_CLOSE_UNAUTHORIZED, isDomainError(e) ? e.code : 'unauthorized');
      },
    );
  });
};
