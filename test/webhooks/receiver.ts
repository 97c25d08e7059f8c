import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a {@link Receiver} got. */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** ms since the epoch when it arrived. */
  at: number;
  /** The status the receiver answered. */
  status: number;
}

/** A local webhook receiver on 127.0.0.1 (the tests' venue runs with WEBHOOKS_ALLOW_PRIVATE=true). */
export interface Receiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/**
 * Starts a receiver. `answer(path, attemptOfThisDelivery)` picks the status (default 200): the attempt counts the
 * requests with the same `X-PTV-Delivery` seen so far, this one included.
 */
export const startReceiver = async (
  answer: (path: string, attempt: number) => number = () => 200,
  port = 0,
): Promise<Receiver> => {
  const received: Received[] = [];
  const attempts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const id = String(req.headers['x-ptv-delivery'] ?? '');
      const attempt = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, attempt);
      const status = answer(req.url ?? '/', attempt);
      received.push({ path: req.url ?? '/', headers: req.headers, body, at: Date.now(), status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
