import WebSocket from 'ws';

/** A `/ws/v1` message as received: `{channel, type, data}` (tests check it field by field). */
export type WsMessage = any;

/** A connected test socket (see {@link connectWs}). */
export interface WsClient {
  ws: WebSocket;
  /** Resolves with the first message (already received and unread, or to come) that passes `test`. */
  next(test: (m: WsMessage) => boolean, timeoutMs?: number): Promise<WsMessage>;
  /** Sends a client message as JSON. */
  send(message: unknown): void;
  /** The messages of `channel` received so far and not yet read by `next` (acknowledgements left out). */
  unread(channel: string): WsMessage[];
}

/** A WebSocket with an inbox (see {@link openInbox}). */
export interface InboxSocket {
  ws: WebSocket;
  /** Resolves with the first message (already received and unread, or to come) that passes `test`. */
  next(test: (m: WsMessage) => boolean, timeoutMs?: number): Promise<WsMessage>;
  /** Sends a message as JSON. */
  send(message: unknown): void;
  /** Every message received so far and not yet read by `next`. */
  inbox: WsMessage[];
}

/**
 * Opens `url` (any WebSocket of the venue, JSON messages) and resolves once it is open. Every message lands in an
 * inbox that `next` reads from, so none is missed between two waits.
 */
export const openInbox = async (url: string): Promise<InboxSocket> => {
  const ws = new WebSocket(url);
  const inbox: WsMessage[] = [];
  const waiters: { test: (m: WsMessage) => boolean; resolve: (m: WsMessage) => void }[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    const w = waiters.find((x) => x.test(m));
    if (w) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(m);
    } else inbox.push(m);
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const next = (test: (m: WsMessage) => boolean, timeoutMs = 10_000) => {
    const found = inbox.find(test);
    if (found) {
      inbox.splice(inbox.indexOf(found), 1);
      return Promise.resolve(found);
    }
    return new Promise<WsMessage>((resolve, reject) => {
      const waiter = {
        test,
        resolve: (m: WsMessage) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error(`no message in ${timeoutMs} ms: ${JSON.stringify(inbox).slice(0, 2_000)}`));
      }, timeoutMs);
      waiters.push(waiter);
    });
  };
  return { ws, next, send: (m: unknown) => ws.send(JSON.stringify(m)), inbox };
};

/**
 * Opens `${base}/ws/v1${query}` (`base` a `ws://host:port` address, `query` e.g. `?api_key=…`) and waits for
 * the server's `welcome` ({@link openInbox}).
 */
export const connectWs = async (base: string, query = ''): Promise<WsClient> => {
  const { ws, next, send, inbox } = await openInbox(`${base}/ws/v1${query}`);
  await next((m) => m.type === 'welcome');
  return {
    ws,
    next,
    send,
    unread: (channel: string) => inbox.filter((m) => m.channel === channel && m.type !== 'subscribed'),
  };
};
