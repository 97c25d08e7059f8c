import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { type Call, newCall, newPublicCall } from '../application/call';
import { followUserData, onUserDataStreamEnd, userDataStreamOf } from '../application/user-data-streams';
import { keepAlive } from '../net/ws-heartbeat';
import type { Services } from '../services';
import { type WalletEvents, walletEventsOf } from '../trading/wallet-follow';
import { toBinanceError } from './errors';
import type { BinanceParams } from './params';
import { accountPosition, executionReport } from './present';
import { authenticateSigned } from './signed';
import { MarketStreamHub, StreamNameError } from './streams';

/**
 * Binance's WebSocket market streams (Spot "WebSocket Streams") over the venue's market feed:
 * - `/binance/ws/<stream>` a raw stream (the event itself), `/binance/ws` or `/binance/ws/<n>` a socket with no
 *   stream yet (ccxt opens `…/ws/0`, `…/ws/1` and subscribes by message);
 * - `/binance/stream?streams=<a>/<b>` combined streams (`{"stream": <name>, "data": <event>}`);
 * - live subscribing by message, as Binance: `{"method": "SUBSCRIBE" | "UNSUBSCRIBE", "params": [names], "id"}`,
 *   `LIST_SUBSCRIPTIONS`, `SET_PROPERTY ["combined", bool]`, `GET_PROPERTY ["combined"]`, answered
 *   `{"result": …, "id"}` or `{"error": {"code", "msg"}, "id"}` (code 0 unknown property, 1 bad value type,
 *   2 invalid request, 3 invalid JSON); the socket stays open after an error.
 * A listen key (`POST /binance/api/v3/userDataStream`) is a stream name too: `/binance/ws/<listenKey>` (or
 * among combined streams) delivers the owner's `executionReport` and `outboundAccountPosition` events, and
 * `listenKeyExpired` before the socket closes when the key expires or is deleted. `/binance/ws-api/v3` serves the
 * WebSocket API's user data subscription (`userDataStream.subscribe.signature`, what ccxt uses for spot).
 * The server pings every `WS_HEARTBEAT_MS` and closes a socket that did not answer the previous ping.
 */

/** Binance's limit of streams per socket. */
const MAX_STREAMS = 1024;
/** Largest client message read (bytes); Binance's requests are small. */
const MAX_MESSAGE_BYTES = 64 * 1024;
/** A socket with more unsent bytes than this skips market events until it catches up (they are not resent). */
const MAX_BUFFERED_BYTES = 1 << 20;

/** A request of Binance's live-subscribing protocol that is refused: `{error: {code, msg}, id}`. */
class WsRequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Binance's `id` of a request: an unsigned integer, a string, or null. */
const idOf = (m: Record<string, unknown>): unknown => {
  const id = m['id'];
  if (id === undefined || id === null) return null;
  if (typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0)) return id;
  throw new WsRequestError(2, 'Invalid request: request ID must be an unsigned integer');
};

/** What the sockets of the door share: the market stream hub and the venue's wallet event subscription. */
interface StreamContext {
  services: Services;
  hub: MarketStreamHub;
  events: WalletEvents | undefined;
}

/** How often a socket checks that its listen keys are still valid (ms). */
const LISTEN_KEY_CHECK_MS = 60_000;

const canTake = (socket: WebSocket): boolean =>
  socket.readyState === socket.OPEN && socket.bufferedAmount <= MAX_BUFFERED_BYTES;

/**
 * Follows the user data of `call`'s caller on `socket`: each wallet event as Binance's events (`executionReport`,
 * `outboundAccountPosition`), each passed to `send` serialized; an event the socket cannot take now is offered
 * again later, whole. Returns the function that stops.
 */
const followOnSocket = (
  events: WalletEvents,
  call: Call,
  socket: WebSocket,
  send: (json: string) => void,
): (() => void) =>
  followUserData(call, events, (updates) => {
    if (socket.readyState !== socket.OPEN) return true; // closing: the follower is being stopped
    if (!canTake(socket)) return false;
    const now = Date.now();
    for (const u of updates) {
      send(
        JSON.stringify(u.kind === 'order' ? executionReport(u, now) : accountPosition(u.lines, u.at, now)),
      );
    }
    return true;
  });

/** One socket following market streams and listen keys, raw or combined. */
class StreamSocket {
  private readonly following = new Map<string, () => void>();
  private closed = false;
  private keyCheck: NodeJS.Timeout | undefined;
  private readonly hub: MarketStreamHub;

  constructor(
    private readonly socket: WebSocket,
    private readonly context: StreamContext,
    private combined: boolean,
  ) {
    this.hub = context.hub;
  }

  /** Sends an event of stream `name`; a market event is skipped while the socket reads too slowly. */
  private readonly deliver = (name: string, json: string, lossless = false): void => {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return;
    if (!lossless && this.socket.bufferedAmount > MAX_BUFFERED_BYTES) return;
    this.socket.send(this.combined ? `{"stream":${JSON.stringify(name)},"data":${json}}` : json);
  };

  private send(message: unknown): void {
    if (!this.closed && this.socket.readyState === this.socket.OPEN)
      this.socket.send(JSON.stringify(message));
  }

  /** Follows `names` (every name is checked before any is followed: a bad one changes nothing). */
  subscribe(names: readonly string[]): void {
    const parsed = names.map((raw) => {
      if (!raw.includes('@')) {
        // A listen key: the user data of its owner (an unknown or expired one is refused like a bad name).
        const stream = userDataStreamOf(this.context.services, raw);
        if (!stream || !this.context.events)
          throw new WsRequestError(2, 'Invalid request: invalid listenKey');
        return { name: raw, user: stream.principal };
      }
      try {
        return this.hub.parse(raw);
      } catch (e) {
        if (e instanceof StreamNameError) throw new WsRequestError(2, `Invalid request: ${e.message}`);
        throw e;
      }
    });
    const fresh = new Set(parsed.filter((p) => !this.following.has(p.name)).map((p) => p.name));
    if (this.following.size + fresh.size > MAX_STREAMS) {
      throw new WsRequestError(2, `Invalid request: at most ${MAX_STREAMS} streams per connection`);
    }
    for (const p of parsed) {
      if (this.following.has(p.name)) continue;
      if ('user' in p) this.following.set(p.name, this.followKey(p.name, p.user));
      else this.following.set(p.name, this.hub.listen(p.name, p.stream, this.deliver));
    }
  }

  /** Follows the user data of a listen key until it is unsubscribed, closed or expires (`listenKeyExpired`). */
  private followKey(listenKey: string, principal: Parameters<typeof newCall>[1]): () => void {
    const { services, events } = this.context;
    const call = newCall(services, principal, `binance-user-data:${listenKey.slice(0, 8)}`);
    const stop = followOnSocket(events!, call, this.socket, (json) => this.deliver(listenKey, json, true));
    const unlisten = onUserDataStreamEnd(services, listenKey, () => {
      this.deliver(listenKey, JSON.stringify({ e: 'listenKeyExpired', E: Date.now(), listenKey }), true);
      this.socket.close(1000, 'listenKey expired');
    });
    this.keyCheck ??= setInterval(() => {
      for (const name of this.following.keys()) if (!name.includes('@')) userDataStreamOf(services, name);
    }, LISTEN_KEY_CHECK_MS);
    this.keyCheck.unref();
    return () => {
      stop();
      unlisten();
    };
  }

  private unsubscribe(names: readonly string[]): void {
    for (const raw of names) {
      let name = raw;
      try {
        name = this.hub.parse(raw).name;
      } catch {
        // A name that no longer parses (e.g. a pair made inactive) is still followed under the name it had.
      }
      this.following.get(name)?.();
      this.following.delete(name);
    }
  }

  /** Answers one client message (Binance's live-subscribing protocol). */
  handle(text: string): void {
    let id: unknown = null;
    try {
      if (Buffer.byteLength(text) > MAX_MESSAGE_BYTES) {
        throw new WsRequestError(2, `Invalid request: message over ${MAX_MESSAGE_BYTES} bytes`);
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw new WsRequestError(3, 'Invalid JSON: expected value at line 1 column 1');
      }
      if (!value || typeof value !== 'object' || Array.isArray(value)) {
        throw new WsRequestError(2, 'Invalid request: expected an object {method, params, id}');
      }
      const m = value as Record<string, unknown>;
      id = idOf(m);
      const params = m['params'] ?? [];
      if (!Array.isArray(params) || !params.every((p) => typeof p === 'string' || typeof p === 'boolean')) {
        throw new WsRequestError(2, 'Invalid request: params must be an array of strings');
      }
      const strings = params.filter((p): p is string => typeof p === 'string');
      switch (m['method']) {
        case 'SUBSCRIBE':
          this.subscribe(strings);
          this.send({ result: null, id });
          return;
        case 'UNSUBSCRIBE':
          this.unsubscribe(strings);
          this.send({ result: null, id });
          return;
        case 'LIST_SUBSCRIPTIONS':
          this.send({ result: [...this.following.keys()], id });
          return;
        case 'SET_PROPERTY': {
          if (params[0] !== 'combined') throw new WsRequestError(0, 'Unknown property');
          if (typeof params[1] !== 'boolean')
            throw new WsRequestError(1, 'Invalid value type: expected Boolean');
          this.combined = params[1];
          this.send({ result: null, id });
          return;
        }
        case 'GET_PROPERTY':
          if (params[0] !== 'combined') throw new WsRequestError(0, 'Unknown property');
          this.send({ result: this.combined, id });
          return;
        default:
          throw new WsRequestError(
            2,
            `Invalid request: unknown variant ${JSON.stringify(m['method'] ?? null)}, expected one of SUBSCRIBE, UNSUBSCRIBE, LIST_SUBSCRIPTIONS, SET_PROPERTY, GET_PROPERTY`,
          );
      }
    } catch (e) {
      if (!(e instanceof WsRequestError)) throw e;
      this.send({ error: { code: e.code, msg: e.message }, id });
    }
  }

  close(): void {
    this.closed = true;
    if (this.keyCheck) clearInterval(this.keyCheck);
    for (const stop of this.following.values()) stop();
    this.following.clear();
  }
}

/**
 * Wires a socket: messages, the server's pings, clean-up on close, then follows the streams named in its URL (a
 * name we do not serve: an error message and close 1008).
 */
const serve = (
  app: FastifyInstance,
  socket: WebSocket,
  request: FastifyRequest,
  s: {
    handle(text: string): void | Promise<void>;
    subscribe(names: readonly string[]): void;
    close(): void;
  },
  names: readonly string[],
): void => {
  socket.on('message', (data, isBinary) => {
    Promise.resolve()
      .then(() => s.handle(isBinary ? '' : data.toString()))
      .catch((e: unknown) => request.log.error({ err: e }, 'binance stream message failed'));
  });
  // The credentials of the user data it streams are checked by the process's shared watcher (`CredentialWatcher`).
  keepAlive(socket, app.services.config.WS_HEARTBEAT_MS);
  socket.on('close', () => {
    s.close();
  });
  try {
    s.subscribe(names);
  } catch (e) {
    const msg = e instanceof Error ? e.message : 'Invalid request';
    socket.send(JSON.stringify({ error: { code: 2, msg }, id: null }));
    socket.close(1008, 'invalid stream');
  }
};

/** Registers `/binance/ws`, `/binance/ws/*` and `/binance/stream` (needs the market capability). */
export const streamRoutes = async (app: FastifyInstance): Promise<void> => {
  const market = app.services.market;
  if (!market) return;
  const hub = new MarketStreamHub(market);
  const wallet = app.services.trading ? walletEventsOf(app.services) : undefined;
  app.addHook('onClose', async () => {
    hub.close();
    wallet?.release();
  });
  const context: StreamContext = { services: app.services, hub, events: wallet?.events };

  app.get('/binance/ws', { websocket: true, schema: { hide: true } }, (socket: WebSocket, request) =>
    serve(app, socket, request, new StreamSocket(socket, context, false), []),
  );
  app.get('/binance/ws/*', { websocket: true, schema: { hide: true } }, (socket: WebSocket, request) => {
    const path = (request.params as { '*': string })['*'];
    // ccxt opens `…/ws/<n>` (its connection number) and subscribes by message: a number names no stream.
    const names = path.split('/').filter((p) => p !== '' && !/^\d+$/.test(p));
    // An unknown listen key in the URL: Binance's answer to the handshake, then close (as an unserved stream).
    serve(app, socket, request, new StreamSocket(socket, context, false), names);
  });
  app.get('/binance/stream', { websocket: true, schema: { hide: true } }, (socket: WebSocket, request) => {
    const streams = (request.query as Record<string, unknown>)['streams'];
    const names = typeof streams === 'string' ? streams.split('/').filter((p) => p !== '') : [];
    serve(app, socket, request, new StreamSocket(socket, context, true), names);
  });
  app.get('/binance/ws-api/v3', { websocket: true, schema: { hide: true } }, (socket: WebSocket, request) =>
    serve(app, socket, request, new ApiSocket(socket, context), []),
  );
};

/**
 * Binance's WebSocket API (`/ws-api/v3`), the part a spot client needs for its user data: requests
 * `{id, method, params}` answered `{id, status: 200, result, rateLimits: []}` or `{id, status, error: {code, msg}}`.
 * Methods: `ping`, `time`, `userDataStream.subscribe.signature` (params `apiKey`, `timestamp`, `signature`
 * [, `recvWindow`]: the HMAC-SHA256 of the other params sorted by name, `k=v` joined by `&`, under the key's signing
 * secret; answers `{subscriptionId}`, then every event of the owner's user data as `{subscriptionId, event}`),
 * `userDataStream.unsubscribe` (`subscriptionId`, or every subscription).
 */
class ApiSocket {
  private readonly subscriptions = new Map<number, () => void>();
  private nextId = 0;
  /** Set by {@link close}: a subscription whose authentication answers after it is not registered (it would leak). */
  private closed = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly context: StreamContext,
  ) {}

  subscribe(): void {}

  private send(message: unknown): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(message));
  }

  async handle(text: string): Promise<void> {
    let id: unknown = null;
    try {
      let m: Record<string, unknown>;
      try {
        const value: unknown = JSON.parse(text);
        if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
        m = value as Record<string, unknown>;
      } catch {
        throw new WsApiError(
          400,
          -1100,
          'Illegal characters found in a parameter. The message is not a JSON object.',
        );
      }
      id = m['id'] ?? null;
      const params = (m['params'] ?? {}) as Record<string, unknown>;
      if (typeof params !== 'object' || Array.isArray(params)) {
        throw new WsApiError(400, -1100, "Illegal characters found in parameter 'params'.");
      }
      this.send({ id, status: 200, result: await this.call(String(m['method']), params), rateLimits: [] });
    } catch (e) {
      const { status, code, msg } =
        e instanceof WsApiError
          ? e
          : (() => {
              const b = toBinanceError(e);
              return { status: b.status, code: b.code, msg: b.message };
            })();
      this.send({ id, status, error: { code, msg } });
    }
  }

  private async call(method: string, params: Record<string, unknown>): Promise<unknown> {
    switch (method) {
      case 'ping':
        return {};
      case 'time':
        return { serverTime: Date.now() };
      case 'userDataStream.subscribe.signature': {
        const { services, events } = this.context;
        if (!events) throw new WsApiError(503, -1000, 'Trading is not running.');
        const values = new Map<string, string>();
        for (const [k, v] of Object.entries(params)) values.set(k, String(v));
        const signed: BinanceParams = {
          values,
          rawQuery: [...values]
            .filter(([k]) => k !== 'signature')
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([k, v]) => `${k}=${v}`)
            .join('&'),
          rawBody: '',
        };
        const principal = await authenticateSigned(
          newPublicCall(services, 'binance-ws-api'),
          values.get('apiKey'),
          signed,
        );
        // The socket closed while the key was checked: nothing would ever stop this subscription or its watch.
        if (this.closed) return {};
        const subscriptionId = this.nextId++;
        const call = newCall(services, principal, `binance-ws-api:${subscriptionId}`);
        const follow = followOnSocket(events, call, this.socket, (json) =>
          this.socket.send(`{"subscriptionId":${subscriptionId},"event":${json}}`),
        );
        // The subscription lasts as long as the API key it was signed with: when that stops working (regenerated
        // or deleted, its agent deleted, its account suspended) it ends with Binance's `eventStreamTerminated`.
        const { auth, credentialWatcher } = services;
        const apiKey = values.get('apiKey')?.trim();
        const watch =
          auth && credentialWatcher
            ? credentialWatcher.watch(
                { apiKey, principal },
                () => auth.resolveCredential({ apiKey }),
                () => {
                  const stop = this.subscriptions.get(subscriptionId);
                  if (!stop) return;
                  stop();
                  this.subscriptions.delete(subscriptionId);
                  this.send({ subscriptionId, event: { e: 'eventStreamTerminated', E: Date.now() } });
                },
              )
            : undefined;
        this.subscriptions.set(subscriptionId, () => {
          follow();
          watch?.stop();
        });
        return { subscriptionId };
      }
      case 'userDataStream.unsubscribe': {
        const wanted = params['subscriptionId'];
        for (const [sid, stop] of this.subscriptions) {
          if (wanted === undefined || Number(wanted) === sid) {
            stop();
            this.subscriptions.delete(sid);
          }
        }
        return {};
      }
      default:
        throw new WsApiError(
          400,
          -1100,
          `Unknown method ${JSON.stringify(method)}: this venue serves ping, time, userDataStream.subscribe.signature, userDataStream.unsubscribe.`,
        );
    }
  }

  close(): void {
    this.closed = true;
    for (const stop of this.subscriptions.values()) stop();
    this.subscriptions.clear();
  }
}

/** A refused WebSocket API request: its HTTP-like status and Binance's `{code, msg}`. */
class WsApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    readonly msg: string,
  ) {
    super(msg);
  }
}
