import Fastify from 'fastify';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { closeConnectionsWhenClosing } from '../../src/http/close-connections';

/**
 * A graceful stop does not wait for keep-alive connections: a request in flight when the server starts closing
 * is answered, then its connection is closed, so `close()` returns at once instead of after fastify's 72 s
 * `keepAliveTimeout` (the venue took 70 s to exit when stopped in a burst of orders). Real sockets, a keep-alive
 * undici client.
 */
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.destroy();
});

const slowServer = async (withFix: boolean) => {
  const app = Fastify();
  if (withFix) closeConnectionsWhenClosing(app);
  let arrived!: () => void;
  const inFlight = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  app.get('/slow', async () => {
    arrived();
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { ok: true };
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const agent = new Agent({ keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000 });
  agents.push(agent);
  return { app, address, agent, inFlight };
};

/** Starts `/slow`, closes the server while it runs; the answer and how long `close()` took (ms, at most `cap`). */
const closeDuringRequest = async (withFix: boolean, cap: number) => {
  const { app, address, agent, inFlight } = await slowServer(withFix);
  const answer = request(`${address}/slow`, { dispatcher: agent }).then(async (r) => ({
    status: r.statusCode,
    connection: r.headers.connection,
    body: await r.body.json(),
  }));
  await inFlight;
  const started = Date.now();
  const closed = app.close().then(() => Date.now() - started);
  const tookMs = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(cap), cap))]);
  if (tookMs >= cap) await agent.destroy(); // lets the unfixed server finish closing
  await closed;
  return { tookMs, answer: await answer };
};

describe('closing the HTTP server with a request in flight', () => {
  it('answers the request, with Connection: close, and closes without waiting for the keep-alive timeout', async () => {
    const { tookMs, answer } = await closeDuringRequest(true, 5_000);
    expect(answer).toEqual({ status: 200, connection: 'close', body: { ok: true } });
    expect(tookMs).toBeLessThan(2_000);
  });

  it('(the same server without it waits for the client to hang up: the fault this guards against)', async () => {
    const { tookMs, answer } = await closeDuringRequest(false, 2_000);
    expect(answer.status).toBe(200);
    expect(answer.connection).not.toBe('close');
    expect(tookMs).toBe(2_000);
  });
});
