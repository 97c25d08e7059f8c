import WebSocket from 'ws';
import { backoffDelayMs } from '../../../domain/shared/backoff';

/**
 * A WebSocket client that reconnects with exponential back-off and jitter (issue item 3): waits
 * `min × 2^attempt`, capped at `max`, times a random factor in [0.5, 1]; the attempt counter resets once a
 * connection has delivered a message. A connection that stays silent for `idleMs` is considered dead and
 * replaced (Binance sends data or pings continuously).
 */
export interface ReconnectingSocketOptions {
  url: () => string;
  minDelayMs: number;
  maxDelayMs: number;
  idleMs?: number;
  onMessage(text: string): void;
  /** Called on every successful (re)connection; `reconnect` is false the first time. */
  onOpen?(reconnect: boolean): void;
  onClose?(reason: string, retryInMs: number): void;
}

export interface ReconnectingSocket {
  start(): void;
  stop(): Promise<void>;
  readonly connected: boolean;
  readonly connections: number;
  readonly lastMessageAt: number;
}

/** Creates the client (not started). */
export const reconnectingSocket = (options: ReconnectingSocketOptions): ReconnectingSocket => {
  let socket: WebSocket | undefined;
  let attempt = 0;
  let retry: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let stopped = true;
  let connected = false;
  let connections = 0;
  let lastMessageAt = 0;
  const idleMs = options.idleMs ?? 60_000;

  const schedule = (reason: string) => {
    connected = false;
    if (idleTimer) clearInterval(idleTimer);
    idleTimer = undefined;
    if (stopped || retry) return;
    const delay = Math.round(
      backoffDelayMs(attempt, { baseMs: options.minDelayMs, maxMs: options.maxDelayMs, jitter: 'equal' }),
    );
    attempt++;
    options.onClose?.(reason, delay);
    retry = setTimeout(() => {
      retry = undefined;
      connect();
    }, delay);
    retry.unref();
  };

  const connect = () => {
    if (stopped) return;
    const ws = new WebSocket(options.url(), { handshakeTimeout: 10_000 });
    socket = ws;
    let delivered = false;
    ws.on('open', () => {
      connected = true;
      connections++;
      lastMessageAt = Date.now();
      options.onOpen?.(connections > 1);
      idleTimer = setInterval(
        () => {
          if (Date.now() - lastMessageAt > idleMs) ws.terminate();
        },
        Math.min(idleMs, 5_000),
      );
      idleTimer.unref();
    });
    ws.on('ping', () => {
      lastMessageAt = Date.now();
    });
    ws.on('message', (data, isBinary) => {
      lastMessageAt = Date.now();
      if (!delivered) {
        delivered = true;
        attempt = 0;
      }
      if (!isBinary) options.onMessage(data.toString());
    });
    ws.on('error', () => {
      // 'close' follows and schedules the reconnect.
    });
    ws.on('close', (code) => {
      if (socket === ws) socket = undefined;
      schedule(`closed (${code})`);
    });
  };

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      connect();
    },
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      retry = undefined;
      if (idleTimer) clearInterval(idleTimer);
      const ws = socket;
      socket = undefined;
      connected = false;
      if (ws && ws.readyState !== WebSocket.CLOSED) {
        await new Promise<void>((resolve) => {
          ws.once('close', () => resolve());
          ws.terminate();
        });
      }
    },
    get connected() {
      return connected;
    },
    get connections() {
      return connections;
    },
    get lastMessageAt() {
      return lastMessageAt;
    },
  };
};
