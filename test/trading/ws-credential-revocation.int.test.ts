import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAccountCommands } from '../../commands/accounts';
import { changeAccountStatus } from '../../src/cli/accounts';
import { api, bearer, createAgent, keyHeader, registerAccount, type TestApp } from '../accounts/support';
import { useTestApp } from '../support/test-app';
import { connectWs, openInbox } from '../support/ws-client';
import { committedHead } from './log-head';
import { useListeningTradingApp } from './ws-app';

/**
 * A `/ws/v1` socket lives only as long as the credential it was opened with (spec "Authentication" rule 6: "A
 * regenerated key invalidates the previous one at once"). The audit of the REST and WebSocket interface found a
 * socket opened with an agent key still streaming the agent's wallet events and portfolio after the key was
 * regenerated, and after the agent was deleted: whoever held a leaked key kept reading. Now such a socket gets an
 * `error` with the code a request with that credential gets and is closed with 4401, as at the handshake; an
 * archived agent's key still reads, so its socket stays open.
 */
const app = useListeningTradingApp();
const { t, buy } = app;

/**
 * Resolves with the close code and reason of `ws` once it closes. No timer of its own: a close that never comes
 * fails the test at its timeout (60 s), so a loaded machine (CI, twice the suite) cannot make a slow close a failure.
 */
const closeOf = (ws: import('ws').WebSocket) =>
  new Promise<{ code: number; reason: string }>((resolve) => {
    ws.once('close', (code, reason) => resolve({ code, reason: String(reason) }));
  });

/**
 * Regenerates the key of `agentId` (with `account`'s JWT) and expects `socket`, opened with the old key, to get the
 * `error` INVALID_API_KEY and be closed with 4401; resolves to the regeneration's answer.
 */
const regenerateClosing = async (
  socket: Awaited<ReturnType<typeof connectWs>>,
  account: { token: string },
  agentId: string,
) => {
  const closed = closeOf(socket.ws);
  const regenerated = await api(t.app, {
    method: 'POST',
    url: `/agents/${agentId}/regenerate-key`,
    headers: bearer(account),
  });
  expect(regenerated.statusCode, regenerated.body).toBe(200);
  expect((await socket.next((m) => m.type === 'error')).data).toMatchObject({ code: 'INVALID_API_KEY' });
  expect(await closed).toEqual({ code: 4401, reason: 'INVALID_API_KEY' });
  return regenerated;
};

/** Opens a listen key with `apiKey` (`POST /binance/api/v3/userDataStream`) on `server`: the key. */
const openListenKey = async (server: TestApp['app'], apiKey: string): Promise<string> => {
  const opened = await server.inject({
    method: 'POST',
    url: '/binance/api/v3/userDataStream',
    headers: { 'x-mbx-apikey': apiKey },
  });
  expect(opened.statusCode, opened.body).toBe(200);
  return opened.json().listenKey as string;
};

describe('a WebSocket opened with a credential that stops working', () => {
  it('is closed (4401, INVALID_API_KEY) when its agent key is regenerated, and sees nothing the new key does', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account);
    const socket = await connectWs(app.base, `?api_key=${agent.apiKey}`);
    socket.send({ action: 'subscribe', channel: 'orders' });
    socket.send({ action: 'subscribe', channel: 'portfolio' });
    await socket.next((m) => m.channel === 'portfolio' && m.type === 'subscribed');
    const regenerated = await regenerateClosing(socket, account, agent.agentId);

    // The agent trades on with its new key; the old socket got none of it.
    expect((await buy(regenerated.json().api_key, '0.001')).statusCode).toBe(201);
    expect(socket.unread('orders').filter((m) => m.type === 'OrderFilled')).toEqual([]);
  });

  it('is closed when the agent it is scoped to (`?agent_id=` beside a JWT) is deleted', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account);
    const socket = await connectWs(app.base, `?token=${account.token}&agent_id=${agent.agentId}`);
    socket.send({ action: 'subscribe', channel: 'orders' });
    await socket.next((m) => m.type === 'subscribed');
    const closed = closeOf(socket.ws);
    const deleted = await api(t.app, {
      method: 'DELETE',
      url: `/agents/${agent.agentId}`,
      headers: bearer(account),
    });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect((await socket.next((m) => m.type === 'error')).data).toMatchObject({ code: 'PERMISSION_DENIED' });
    expect(await closed).toEqual({ code: 4401, reason: 'PERMISSION_DENIED' });
  });

  it('is closed (ACCOUNT_SUSPENDED) when its account is suspended', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const socket = await connectWs(app.base, `?api_key=${account.apiKey}`);
    socket.send({ action: 'subscribe', channel: 'orders' });
    await socket.next((m) => m.type === 'subscribed');
    const closed = closeOf(socket.ws);
    await changeAccountStatus(t.runtime.services.accounts!, 'suspend', account.accountId, 'audit');
    expect((await socket.next((m) => m.type === 'error')).data).toMatchObject({ code: 'ACCOUNT_SUSPENDED' });
    expect(await closed).toEqual({ code: 4401, reason: 'ACCOUNT_SUSPENDED' });
  });

  it('stays open when its agent is archived (an archived agent’s key still reads) or another agent changes', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account);
    const other = await createAgent(t.app, account);
    const socket = await connectWs(app.base, `?api_key=${agent.apiKey}`);
    socket.send({ action: 'subscribe', channel: 'portfolio' });
    await socket.next((m) => m.type === 'subscribed');
    let closed: { code: number; reason: string } | undefined;
    void closeOf(socket.ws).then((c) => (closed = c));
    for (const [method, url] of [
      ['POST', `/agents/${other.agentId}/regenerate-key`],
      ['POST', `/agents/${agent.agentId}/archive`],
    ] as const) {
      const res = await api(t.app, { method, url, headers: bearer(account) });
      expect(res.statusCode, res.body).toBe(200);
    }
    // Every check these changes start has run once the read models hold them (the changes are announced again
    // after the fold) and a ping sent after that is answered: a wrong close would have come before the pong.
    const head = await committedHead(t.database.all);
    expect(await t.runtime.services.projections.waitFor(head, 15_000)).toBe(true);
    socket.send({ action: 'ping' });
    await socket.next((m) => m.type === 'pong');
    expect(closed).toBeUndefined();
    expect(socket.ws.readyState).toBe(socket.ws.OPEN);
    const balance = await api(t.app, {
      method: 'GET',
      url: '/account/balance',
      headers: keyHeader(agent.apiKey),
    });
    expect(balance.statusCode).toBe(200);
    socket.ws.close();
  });
});

describe('a WebSocket opened with an API key and a token together (as a REST request with both)', () => {
  it("acts for the agent key's agent and ends when that key is regenerated; a bad key beside a valid token is refused", async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account);
    const socket = await connectWs(app.base, `?api_key=${agent.apiKey}&token=${account.token}`);
    socket.send({ action: 'subscribe', channel: 'orders' });
    await socket.next((m) => m.type === 'subscribed');
    expect((await buy(agent.apiKey, '0.001')).statusCode).toBe(201);
    await socket.next((m) => m.channel === 'orders' && m.type === 'OrderFilled');
    await regenerateClosing(socket, account, agent.agentId);

    const byQuery = await openInbox(`${app.base}/ws/v1?api_key=garbage&token=${account.token}`);
    expect(await closeOf(byQuery.ws)).toEqual({ code: 4401, reason: 'INVALID_API_KEY' });
    const { WebSocket } = await import('ws');
    const byHeaders = new WebSocket(`${app.base}/ws/v1`, {
      headers: { ...bearer(account), ...keyHeader(`ak_live_${'Z'.repeat(43)}`) },
    });
    expect(await closeOf(byHeaders)).toEqual({ code: 4401, reason: 'INVALID_API_KEY' });
  });
});

describe('a change the socket’s process did not make', () => {
  // Its own app: heartbeats every 1 s, so the check that catches such a change comes quickly. Not shorter: a socket
  // that misses one pong is terminated, and the client shares the server's event loop, so a stall of one period
  // on a loaded machine would end the socket before the test sees the close it waits for.
  const other = useTestApp({
    env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT', WS_HEARTBEAT_MS: '1000' },
  });
  let listening: Promise<string> | undefined;
  /** `other` listening on a free port (once): its `http://127.0.0.1:<port>`. */
  const addressOf = () => (listening ??= other.app.listen({ host: '127.0.0.1', port: 0 }));

  it('closes the socket at a heartbeat once the credential is refused (another process suspended the account)', async () => {
    const address = await addressOf();
    const account = await registerAccount(other.app, {}, { plain: true });
    const socket = await connectWs(address.replace('http', 'ws'), `?token=${account.token}`);
    socket.send({ action: 'subscribe', channel: 'orders' });
    await socket.next((m) => m.type === 'subscribed');
    const closed = closeOf(socket.ws);
    // Commands of their own, as another process (the operator CLI) has: no change reaches this process's auth.
    const { eventStore, keyring } = other.runtime.services;
    const elsewhere = createAccountCommands({ store: eventStore, ...(keyring ? { keyring } : {}) });
    await changeAccountStatus(elsewhere, 'suspend', account.accountId, 'audit');
    expect((await socket.next((m) => m.type === 'error', 30_000)).data).toMatchObject({
      code: 'ACCOUNT_SUSPENDED',
    });
    expect(await closed).toEqual({ code: 4401, reason: 'ACCOUNT_SUSPENDED' });
  });

  /** Suspends `accountId` through commands of their own, as another process would (no `AuthService.onChange` here). */
  const suspendElsewhere = async (accountId: string) => {
    const { eventStore, keyring } = other.runtime.services;
    const elsewhere = createAccountCommands({ store: eventStore, ...(keyring ? { keyring } : {}) });
    await changeAccountStatus(elsewhere, 'suspend', accountId, 'audit');
  };

  it('ends a Binance listen key at a heartbeat (listenKeyExpired, socket closed)', async () => {
    const address = await addressOf();
    const account = await registerAccount(other.app, {}, { plain: true });
    const listenKey = await openListenKey(other.app, account.apiKey);
    const { ws, next } = await openInbox(`${address.replace('http', 'ws')}/binance/ws/${listenKey}`);
    const closed = closeOf(ws);
    await suspendElsewhere(account.accountId);
    expect(await next((m) => m.e === 'listenKeyExpired', 30_000)).toMatchObject({ listenKey });
    expect((await closed)?.code).toBe(1000);
  });

  it('ends a Binance WebSocket API user data subscription at a heartbeat (eventStreamTerminated)', async () => {
    const address = await addressOf();
    const account = await registerAccount(other.app, {}, { plain: true });
    const created = await api(other.app, {
      method: 'POST',
      url: '/agents',
      headers: bearer(account),
      payload: { display_name: 'ws-api' },
    });
    const { api_key: apiKey, api_secret: secret } = created.json();
    const { ws, next, send } = await openInbox(`${address.replace('http', 'ws')}/binance/ws-api/v3`);
    const timestamp = Date.now();
    const signature = createHmac('sha256', secret)
      .update(`apiKey=${apiKey}&timestamp=${timestamp}`)
      .digest('hex');
    send({ id: 1, method: 'userDataStream.subscribe.signature', params: { apiKey, timestamp, signature } });
    const subscribed = await next((m) => m.id === 1);
    expect(subscribed, JSON.stringify(subscribed)).toMatchObject({ status: 200 });
    await suspendElsewhere(account.accountId);
    expect(await next((m) => m.event?.e === 'eventStreamTerminated', 30_000)).toMatchObject({
      subscriptionId: subscribed.result.subscriptionId,
    });
    ws.close();
  });
});

describe('a Binance listen key opened with an API key that stops working', () => {
  it('ends (listenKeyExpired, the socket closes) when the agent key is regenerated; the key is then unknown', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account);
    const listenKey = await openListenKey(t.app, agent.apiKey);
    const { ws, next } = await openInbox(`${app.base}/binance/ws/${listenKey}`);
    const closed = closeOf(ws);
    const regenerated = await api(t.app, {
      method: 'POST',
      url: `/agents/${agent.agentId}/regenerate-key`,
      headers: bearer(account),
    });
    expect(regenerated.statusCode, regenerated.body).toBe(200);
    expect(await next((m) => m.e === 'listenKeyExpired')).toMatchObject({ listenKey });
    expect((await closed)?.code).toBe(1000);
    const kept = await t.app.inject({
      method: 'PUT',
      url: `/binance/api/v3/userDataStream?listenKey=${listenKey}`,
      headers: { 'x-mbx-apikey': regenerated.json().api_key },
    });
    expect(kept.json()).toMatchObject({ code: -1125 });
  });
});

describe('a Binance WebSocket API user data subscription signed with an API key that stops working', () => {
  it('ends with eventStreamTerminated when the agent key is regenerated', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const {
      agentId,
      apiKey,
      apiSecret: secret,
    } = await createAgent(t.app, account, { display_name: 'ws-api' });
    const { ws, next, send } = await openInbox(`${app.base}/binance/ws-api/v3`);
    const query = `apiKey=${apiKey}&timestamp=${Date.now()}`;
    const signature = createHmac('sha256', secret).update(query).digest('hex');
    send({
      id: 1,
      method: 'userDataStream.subscribe.signature',
      params: { apiKey, timestamp: Number(query.split('timestamp=')[1]), signature },
    });
    const subscribed = await next((m) => m.id === 1);
    expect(subscribed, JSON.stringify(subscribed)).toMatchObject({ status: 200 });
    const { subscriptionId } = subscribed.result;
    const regenerated = await api(t.app, {
      method: 'POST',
      url: `/agents/${agentId}/regenerate-key`,
      headers: bearer(account),
    });
    expect(regenerated.statusCode, regenerated.body).toBe(200);
    expect(await next((m) => m.event?.e === 'eventStreamTerminated')).toMatchObject({ subscriptionId });
    ws.close();
  });
});

describe('a Binance WebSocket API subscription whose socket closes while its key is checked', () => {
  it('is not registered: no watch (nor follower) outlives the socket', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const { apiKey, apiSecret: secret } = await createAgent(t.app, account, {
      display_name: 'ws-api-closing',
    });
    const services = t.app.services;
    const watcher = services.credentialWatcher!;
    const before = watcher.size;
    // Hold the authentication (its signing-secret lookup) until the socket has closed.
    const secrets = services.signingSecrets!;
    const of = secrets.of;
    let entered!: () => void;
    const reached = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    secrets.of = async (principal) => {
      entered();
      await gate;
      return of.call(secrets, principal);
    };
    try {
      const { ws, send } = await openInbox(`${app.base}/binance/ws-api/v3`);
      const timestamp = Date.now();
      const signature = createHmac('sha256', secret)
        .update(`apiKey=${apiKey}&timestamp=${timestamp}`)
        .digest('hex');
      send({ id: 1, method: 'userDataStream.subscribe.signature', params: { apiKey, timestamp, signature } });
      await reached;
      const closed = closeOf(ws);
      ws.close();
      await closed;
      // The server's side of the close runs before the authentication is let go.
      await new Promise((resolve) => setTimeout(resolve, 200));
      release();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(watcher.size).toBe(before);
    } finally {
      secrets.of = of;
      release();
    }
  });
});
