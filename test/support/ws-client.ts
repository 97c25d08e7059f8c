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

/**
 * Opens `${base}/ws/v1${query}` (`base` a `ws://host:port` address, `query` e.g. `?api_key=…`) and waits for
 * the server's `welcome`. Every message lands in an inbox that `next` reads from, so none is missed between
 * two waits.
 */
export const connectWs = async (base: string, query = ''): Promise<WsClient> => {
  const ws = new WebSocket(`${base}/ws/v1${query}`);
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
        reject(new Error(`no message in ${timeoutMs} ms: ${JSON.stringify(inbox)}`));
      }, timeoutMs);
      waiters.push(waiter);
    });
  };
  await next((m) => m.type === 'welcome');
  return {
    ws,
    next,
    send: (m: unknown) => ws.send(JSON.stringify(m)),
    unread: (channel: string) => inbox.filter((m) => m.channel === channel && m.type !== 'subscribed'),
  };
};
