import { describe, expect, it } from 'vitest';
import { createAgentCommands } from '../../commands/agents';
import { PORTFOLIO_MIN_INTERVAL_MS, PORTFOLIO_PRICE_REFRESH_MS } from '../../src/http/ws/portfolio-channel';
import { api, createAgent, keyHeader, registerAccount } from '../accounts/support';
import { connectWs, type WsMessage } from '../support/ws-client';
import { useListeningTradingApp } from './ws-app';

/**
 * The private `portfolio` channel of `/ws/v1` (ARCHITECTURE §13) on the real stack (a listening server, PGlite
 * or PostgreSQL with DATABASE_URL): the owner's `GET /account/portfolio` body at once, after every committed
 * wallet change and every 5 s while held positions' prices move, at most once per 250 ms, scoped to the
 * socket's credential. The synthetic source walks SOLUSDT only: BTCUSDT moves only when a test ticks it.
 */
const app = useListeningTradingApp();
const { t, tick, buy } = app;

const restPortfolio = async (apiKey: string) =>
  (await api(t.app, { method: 'GET', url: '/account/portfolio', headers: keyHeader(apiKey) })).json();

/** A snapshot without its `timestamp` (the time it was built, the only field two equal snapshots differ in). */
const timeless = (snapshot: Record<string, unknown>) => ({ ...snapshot, timestamp: undefined });

const isPortfolio = (m: WsMessage) => m.channel === 'portfolio' && m.type === 'portfolio';
const isError = (m: WsMessage) => m.channel === 'system' && m.type === 'error';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the portfolio channel', () => {
  it('sends the GET /account/portfolio body at once, then after every committed wallet change', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const socket = await connectWs(app.base, `?api_key=${account.apiKey}`);
    socket.send({ action: 'subscribe', channel: 'portfolio' });
    expect(await socket.next((m) => m.type === 'subscribed')).toEqual({
      channel: 'portfolio',
      type: 'subscribed',
      data: { owner_id: account.accountId },
    });
    const first = await socket.next(isPortfolio);
    expect(Object.keys(first).sort()).toEqual(['channel', 'data', 'type']);
    // Before the first trade: the owner's current session, the starting balance, no events.
    const info = (
      await api(t.app, { method: 'GET', url: '/account/info', headers: keyHeader(account.apiKey) })
    ).json();
    expect(first.data).toMatchObject({
      session_id: info.current_session.session_id,
      total_equity: '10000.00000000',
      positions: [],
      revision: -1,
    });
    expect(timeless(first.data)).toEqual(timeless(await restPortfolio(account.apiKey)));

    tick('BTCUSDT', '40000');
    const placed = await buy(account.apiKey, '0.05');
    expect(placed.statusCode).toBe(201);
    const after = await socket.next((m) => isPortfolio(m) && m.data.positions.length === 1);
    expect(after.data.positions[0]).toMatchObject({
      symbol: 'BTCUSDT',
      quantity: '0.05000000',
      current_price: '40000.00000000',
    });
    // The same body as the REST endpoint, the fill included (the wallet change was committed and folded).
    expect(timeless(after.data)).toEqual(timeless(await restPortfolio(account.apiKey)));
    expect(after.data.revision).toBeGreaterThan(first.data.revision);
    socket.ws.close();
  });

  it('sends again every 5 s while a held position’s price moves, not while prices stand still', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    tick('BTCUSDT', '40000');
    expect((await buy(account.apiKey, '0.01')).statusCode).toBe(201);
    const socket = await connectWs(app.base, `?api_key=${account.apiKey}`);
    socket.send({ action: 'subscribe', channel: 'portfolio' });
    const first = await socket.next((m) => isPortfolio(m) && m.data.positions.length === 1);
    expect(first.data.positions[0].current_price).toBe('40000.00000000');

    tick('BTCUSDT', '41000');
    const moved = await socket.next(
      (m) => isPortfolio(m) && m.data.positions[0]?.current_price === '41000.00000000',
      PORTFOLIO_PRICE_REFRESH_MS + 3_000,
    );
    expect(moved.data.positions[0].market_value).toBe('410.00000000');
    expect(moved.data.revision).toBe(first.data.revision); // no wallet change, only the price
    expect(timeless(moved.data)).toEqual(timeless(await restPortfolio(account.apiKey)));

    // Prices stand still: no further snapshot over a whole refresh period.
    await sleep(PORTFOLIO_PRICE_REFRESH_MS + 500);
    expect(socket.unread('portfolio')).toEqual([]);
    tick('BTCUSDT', '40000');
    socket.ws.close();
  });

  it('sends at most one snapshot per 250 ms and ends on the latest state', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    tick('BTCUSDT', '40000');
    const socket = await connectWs(app.base, `?api_key=${account.apiKey}`);
    const times: number[] = [];
    socket.ws.on('message', (data) => {
      if (isPortfolio(JSON.parse(String(data)))) times.push(Date.now());
    });
    socket.send({ action: 'subscribe', channel: 'portfolio' });
    await socket.next(isPortfolio);
    const orders = await Promise.all(
      ['0.001', '0.002', '0.003', '0.004', '0.005'].map((q) => buy(account.apiKey, q)),
    );
    expect(orders.map((o) => o.statusCode)).toEqual([201, 201, 201, 201, 201]);
    const rest = await restPortfolio(account.apiKey);
    // The channel ends on the latest state. (`revision` is the wallet revision the read models include, so a
    // message carrying the latest revision shows every order's effect.)
    const last = await socket.next(
      (m) =>
        isPortfolio(m) && m.data.revision === rest.revision && m.data.positions[0]?.quantity === '0.01500000',
    );
    expect(timeless(last.data)).toEqual(timeless(rest));
    await sleep(PORTFOLIO_MIN_INTERVAL_MS * 2);
    expect(times.length).toBeGreaterThanOrEqual(2); // the first snapshot and at least one after the orders
    expect(times.length).toBeLessThanOrEqual(1 + orders.length);
    for (let i = 1; i < times.length; i++) {
      // Timer granularity: allow a few ms less than the interval.
      expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(PORTFOLIO_MIN_INTERVAL_MS - 15);
    }
    socket.ws.close();
  });

  it('follows the credential’s own wallet: an agent key gets the agent’s portfolio; a JWT the account’s', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account, { starting_balance: '500' });
    const agentSocket = await connectWs(app.base, `?api_key=${agent.apiKey}`);
    const jwtSocket = await connectWs(app.base, `?token=${account.token}`);
    for (const s of [agentSocket, jwtSocket]) s.send({ action: 'subscribe', channel: 'portfolio' });
    expect((await agentSocket.next(isPortfolio)).data).toMatchObject({ starting_balance: '500.00000000' });
    expect((await jwtSocket.next(isPortfolio)).data).toMatchObject({ starting_balance: '10000.00000000' });

    tick('BTCUSDT', '40000');
    expect((await buy(account.apiKey, '0.01')).statusCode).toBe(201);
    const accountSnapshot = await jwtSocket.next((m) => isPortfolio(m) && m.data.positions.length === 1);
    expect(accountSnapshot.data.positions[0].quantity).toBe('0.01000000');
    await sleep(PORTFOLIO_MIN_INTERVAL_MS * 2);
    expect(agentSocket.unread('portfolio')).toEqual([]); // the account's trade is not the agent's
    expect((await buy(agent.apiKey, '0.002')).statusCode).toBe(201);
    const agentSnapshot = await agentSocket.next((m) => isPortfolio(m) && m.data.positions.length === 1);
    expect(timeless(agentSnapshot.data)).toEqual(timeless(await restPortfolio(agent.apiKey)));
    agentSocket.ws.close();
    jwtSocket.ws.close();
  });

  it('needs a credential; unsubscribing stops the snapshots', async () => {
    await app.expectRefusedWithoutCredential('portfolio');

    const account = await registerAccount(t.app, {}, { plain: true });
    const socket = await connectWs(app.base, `?api_key=${account.apiKey}`);
    socket.send({ action: 'subscribe', channel: 'portfolio' });
    await socket.next(isPortfolio);
    socket.send({ action: 'unsubscribe', channel: 'portfolio' });
    await socket.next((m) => m.type === 'unsubscribed' && m.channel === 'portfolio');
    tick('BTCUSDT', '40000');
    expect((await buy(account.apiKey, '0.001')).statusCode).toBe(201);
    await sleep(PORTFOLIO_MIN_INTERVAL_MS * 2);
    expect(socket.unread('portfolio')).toEqual([]);
    socket.ws.close();
  });

  /**
   * Agent commands of their own, as another process (the operator CLI) has: no change made with them reaches this
   * process's auth or its command caches, so a socket on such an agent's key stays open after the agent is deleted
   * (until a heartbeat, 30 s, checks it) and its snapshots fail (ACCOUNT_NOT_FOUND) once the read models folded it.
   */
  const elsewhere = () => {
    const { eventStore, database, keyring, projections } = t.runtime.services;
    const agents = createAgentCommands({
      store: eventStore,
      db: database.db,
      keyring: keyring!,
      waitForReadModels: (position) => projections.waitFor(position, 10_000),
    });
    return {
      create: async (accountId: string) => {
        const made = await agents.create(accountId, { displayName: 'elsewhere' }, { actor: accountId });
        await projections.waitFor(made.position, 10_000);
        return { agentId: made.agent.agentId, apiKey: made.apiKey };
      },
      remove: async (accountId: string, agentId: string) => {
        const { position } = await agents.remove(accountId, agentId, { actor: accountId });
        await projections.waitFor(position, 10_000);
      },
    };
  };

  it('a failed first snapshot answers the subscribe (action and channel) and ends it; a later failure names the channel and keeps it', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    // The first snapshot after the subscribe fails: the error answers that subscribe, like the socket's others.
    const gone = await elsewhere().create(account.accountId);
    const early = await connectWs(app.base, `?api_key=${gone.apiKey}`);
    await elsewhere().remove(account.accountId, gone.agentId);
    const subscribe = { action: 'subscribe', channel: 'portfolio' };
    const failed = {
      code: 'ACCOUNT_NOT_FOUND',
      message: expect.any(String),
      action: 'subscribe',
      channel: 'portfolio',
    };
    early.send(subscribe);
    await early.next((m) => m.type === 'subscribed');
    expect((await early.next(isError)).data).toEqual(failed);
    // ... and ends the subscription, as the battle channel's does (its slot freed): a retry is a fresh subscribe,
    // answered with the error again, and there is nothing left to unsubscribe.
    early.send(subscribe);
    await early.next((m) => m.type === 'subscribed');
    expect((await early.next(isError, 3_000)).data).toEqual(failed);
    early.send({ action: 'unsubscribe', channel: 'portfolio' });
    expect(await early.next((m) => isError(m) || m.type === 'unsubscribed')).toMatchObject({
      channel: 'system',
      type: 'error',
      data: { code: 'VALIDATION_ERROR', action: 'unsubscribe', channel: 'portfolio' },
    });
    early.ws.close();

    // A snapshot pushed later (here on a price move) answers no message of the client's: the channel alone.
    const agent = await elsewhere().create(account.accountId);
    const socket = await connectWs(app.base, `?api_key=${agent.apiKey}`);
    socket.send({ action: 'subscribe', channel: 'portfolio' });
    await socket.next(isPortfolio);
    tick('BTCUSDT', '40000');
    expect((await buy(agent.apiKey, '0.01')).statusCode).toBe(201);
    await socket.next((m) => isPortfolio(m) && m.data.positions.length === 1);
    await elsewhere().remove(account.accountId, agent.agentId);
    tick('BTCUSDT', '41000');
    expect((await socket.next(isError, PORTFOLIO_PRICE_REFRESH_MS * 3)).data).toEqual({
      code: 'ACCOUNT_NOT_FOUND',
      message: expect.any(String),
      channel: 'portfolio',
    });
    // That subscription stays (a later snapshot may succeed again): unsubscribing it is answered as usual.
    socket.send({ action: 'unsubscribe', channel: 'portfolio' });
    expect(await socket.next((m) => isError(m) || m.type === 'unsubscribed')).toMatchObject({
      channel: 'portfolio',
      type: 'unsubscribed',
    });
    socket.ws.close();
  }, 60_000);
});
