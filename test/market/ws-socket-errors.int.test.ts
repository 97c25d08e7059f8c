import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startApp, type TestApp } from '../accounts/support';

/**
 * A frame the `ws` library refuses on `/ws/v1` (here one over its 1 MiB `maxPayload`) is the client's mistake:
 * the socket closes with the protocol's code for it (1009), also when the client sends another frame at once,
 * and the server logs it below error level. Before, @fastify/websocket's default handler logged it as a server
 * error with a stack trace and terminated the socket at once, which could cut the close frame (the client then
 * saw 1006).
 */
let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await startApp({ env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' }, captureLogs: true });
  base = (await t.app.listen({ host: '127.0.0.1', port: 0 })).replace('http', 'ws');
});

afterAll(async () => {
  await t?.close();
});

/** Opens a socket, sends an oversized frame and a small one at once; resolves to the close code it sees. */
const oversizedThenMore = async (): Promise<number> => {
  const ws = new WebSocket(`${base}/ws/v1`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  ws.on('error', () => undefined);
  ws.send('x'.repeat((1 << 20) + 1));
  ws.send(JSON.stringify({ action: 'ping' }));
  return closed;
};

it('closes with 1009 every time and logs no server error', async () => {
  const codes: number[] = [];
  for (let i = 0; i < 8; i++) codes.push(await oversizedThenMore());
  expect(codes).toEqual(Array(8).fill(1009));
  const errors = t.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
  expect(errors).toEqual([]);
  const noted = t.logs.filter((line) => line.includes('WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'));
  expect(noted.length).toBe(8);
});
