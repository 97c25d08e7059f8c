import { describe, expect, it } from 'vitest';
import { api, createAgent, keyHeader, registerAccount } from '../accounts/support';
import { connectWs } from '../support/ws-client';
import { limitBuy } from './key-calls';
import { useListeningTradingApp } from './ws-app';

/**
 * The private `orders` channel of `/ws/v1` on the real stack (a listening server, PGlite or PostgreSQL with
 * DATABASE_URL): the owner's wallet events in stream order, resumable with `since` without loss or repeats,
 * scoped to the socket's credential.
 */
const app = useListeningTradingApp();
const { t, buy, tick } = app;

/** A socket on the test server with `orders()`: its unread `orders` messages (`test/support/ws-client.ts`). */
const connect = async (query = '') => {
  const client = await connectWs(app.base, query);
  return { ...client, orders: () => client.unread('orders') };
};

describe('the orders channel', () => {
  it('pushes this process’s fills as soon as they are durable, and a read right after one includes it', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const headers = keyHeader(account.apiKey);
    const socket = await connect(`?api_key=${account.apiKey}`);
    socket.send({ action: 'subscribe', channel: 'orders' });
    await socket.next((m) => m.type === 'subscribed');
    const mismatches: string[] = [];
    /** On the channel's OrderFilled of `orderId`, reads the order and the position at once. */
    const readOnFill = async (orderId: string, expected: string) => {
      await socket.next((m) => m.type === 'OrderFilled' && m.data.data.order_id === orderId);
      const order = await api(t.app, { method: 'GET', url: `/trade/order/${orderId}`, headers });
      const positions = await api(t.app, { method: 'GET', url: '/account/positions', headers });
      const btc = positions.json().positions.find((p: { symbol: string }) => p.symbol === 'BTCUSDT');
      if (order.json().status !== 'filled') mismatches.push(`order ${orderId} ${order.json().status}`);
      if (btc?.quantity !== expected) mismatches.push(`position ${btc?.quantity} after ${orderId}`);
    };
    let held = 0;
    for (let i = 0; i < 5; i++) {
      // A market order (filled by its own command) …
      const market = await buy(account.apiKey, '0.001');
      expect(market.statusCode, market.body).toBe(201);
      held += 1;
      await readOnFill(market.json().order_id, (held / 1000).toFixed(8));
      // … and a limit order filled by the matching engine on a tick through it.
      tick('BTCUSDT', '40000');
      const limit = await limitBuy(t.app, headers, '0.001', '39000');
      expect(limit.statusCode, limit.body).toBe(201);
      // A read first, so only the engine's fill is left for the read models to fold.
      const pending = await api(t.app, {
        method: 'GET',
        url: `/trade/order/${limit.json().order_id}`,
        headers,
      });
      expect(pending.json().status).toBe('pending');
      const filled = readOnFill(limit.json().order_id, ((held + 1) / 1000).toFixed(8));
      tick('BTCUSDT', '38900');
      await filled;
      held += 1;
    }
    tick('BTCUSDT', '40000');
    socket.ws.close();
    expect(mismatches).toEqual([]);
  });

  it('sends the wallet history after `since`, then every new event once, in revision order; resumes without loss', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    expect((await buy(account.apiKey, '0.01')).statusCode).toBe(201);

    const first = await connect(`?api_key=${account.apiKey}`);
    first.send({ action: 'subscribe', channel: 'orders', since: -1 });
    const ack = await first.next((m) => m.type === 'subscribed');
    expect(ack).toMatchObject({ channel: 'orders', data: { owner_id: account.accountId, since: -1 } });
    const filled = await first.next((m) => m.type === 'OrderFilled');
    expect(filled.data).toMatchObject({
      type: 'OrderFilled',
      revision: expect.any(Number),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      data: { symbol: 'BTCUSDT', side: 'buy' },
    });

    // A new order arrives live, after everything already sent.
    const placed = await buy(account.apiKey, '0.02');
    expect(placed.statusCode).toBe(201);
    const live = await first.next(
      (m) => m.type === 'OrderFilled' && m.data.data.order_id === placed.json().order_id,
    );
    const seen = [...first.orders(), filled, live].map((m) => m.data.revision).sort((a, b) => a - b);
    expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => i));
    first.ws.close();

    // Offline: another order. Reconnecting with the last revision seen gives exactly what was missed.
    const missed = await buy(account.apiKey, '0.03');
    expect(missed.statusCode).toBe(201);
    const second = await connect(`?api_key=${account.apiKey}`);
    const last = live.data.revision as number;
    second.send({ action: 'subscribe', channel: 'orders', since: last });
    const resumed = await second.next((m) => m.type === 'OrderFilled');
    expect(resumed.data.data.order_id).toBe(missed.json().order_id);
    const events = (
      await api(t.app, {
        method: 'GET',
        url: `/account/events?after=${last}`,
        headers: keyHeader(account.apiKey),
      })
    ).json().events as { revision: number }[];
    await new Promise((r) => setTimeout(r, 200));
    const got = [...second.orders(), resumed].map((m) => m.data.revision).sort((a, b) => a - b);
    expect(got).toEqual(events.map((e) => e.revision));
    // One view of an event for both (walletEventView): the socket's data is the REST item, field for field.
    expect(events.find((e) => e.revision === resumed.data.revision)).toEqual(resumed.data);
    second.ws.close();
  });

  it('follows the credential’s own wallet: an agent key sees the agent’s orders, not the account’s', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account);
    const socket = await connect(`?api_key=${agent.apiKey}`);
    socket.send({ action: 'subscribe', channel: 'orders' });
    expect((await socket.next((m) => m.type === 'subscribed')).data.owner_id).toBe(agent.agentId);
    expect((await buy(account.apiKey, '0.01')).statusCode).toBe(201);
    const mine = await buy(agent.apiKey, '0.01');
    expect(mine.statusCode).toBe(201);
    const filled = await socket.next((m) => m.type === 'OrderFilled');
    expect(filled.data.data.order_id).toBe(mine.json().order_id);
    expect(socket.orders().filter((m) => m.type === 'OrderFilled')).toEqual([]);
    socket.ws.close();
  });

  it('needs a credential and a valid `since`', async () => {
    await app.expectRefusedWithoutCredential('orders');
    const account = await registerAccount(t.app, {}, { plain: true });
    const socket = await connect(`?api_key=${account.apiKey}`);
    socket.send({ action: 'subscribe', channel: 'orders', since: 'yesterday' });
    expect((await socket.next((m) => m.type === 'error')).data).toMatchObject({
      code: 'VALIDATION_ERROR',
      channel: 'orders',
    });
    socket.ws.close();
  });
});
