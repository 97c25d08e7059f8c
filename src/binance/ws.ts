import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
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

/** One socket following market streams, raw or combined. */
class StreamSocket {
  private readonly following = new Map<string, () => void>();
  private closed = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly hub: MarketStreamHub,
    private combined: boolean,
  ) {}

  private readonly deliver = (name: string, json: string): void => {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return;
    if (this.socket.bufferedAmount > MAX_BUFFERED_BYTES) return;
    this.socket.send(this.combined ? `{"stream":${JSON.stringify(name)},"data":${json}}` : json);
  };

  private send(message: unknown): void {
    if (!this.closed && this.socket.readyState === this.socket.OPEN)
      this.socket.send(JSON.stringify(message));
  }

  /** Follows `names` (every name is checked before any is followed: a bad one changes nothing). */
  subscribe(names: readonly string[]): void {
    const parsed = names.map((raw) => {
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
    for (const { name, stream } of parsed) {
      if (!this.following.has(name)) this.following.set(name, this.hub.listen(name, stream, this.deliver));
    }
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
  s: StreamSocket,
  names: readonly string[],
): void => {
  socket.on('message', (data, isBinary) => {
    try {
      s.handle(isBinary ? '' : data.toString());
    } catch (e) {
      request.log.error({ err: e }, 'binance stream message failed');
    }
  });
  let alive = true;
  socket.on('pong', () => {
    alive = true;
  });
  const heartbeat = setInterval(() => {
    if (!alive) {
      socket.terminate();
      return;
    }
    alive = false;
    socket.ping();
  }, app.services.config.WS_HEARTBEAT_MS);
  heartbeat.unref();
  socket.on('close', () => {
    clearInterval(heartbeat);
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
  app.addHook('onClose', async () => hub.close());

  app.get('/binance/ws', { websocket: true, schema: { hide: true } }, (socket: WebSocket, request) =>
    serve(app, socket, request, new StreamSocket(socket, hub, false), []),
  );
  app.get('/binance/ws/*', { websocket: true, schema: { hide: true } }, (socket: WebSocket, request) => {
    const path = (request.params as { '*': string })['*'];
    // ccxt opens `…/ws/<n>` (its connection number) and subscribes by message: a number names no stream.
    const names = path.split('/').filter((p) => p !== '' && !/^\d+$/.test(p));
    serve(app, socket, request, new StreamSocket(socket, hub, false), names);
  });
  app.get('/binance/stream', { websocket: true, schema: { hide: true } }, (socket: WebSocket, request) => {
    const streams = (request.query as Record<string, unknown>)['streams'];
    const names = typeof streams === 'string' ? streams.split('/').filter((p) => p !== '') : [];
    serve(app, socket, request, new StreamSocket(socket, hub, true), names);
  });
};
