import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { auditWalletNow } from '../../src/audit/wallet-audit';
import { api, bearer, createAgent, keyHeader, registerAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';
import { connectWs } from '../support/ws-client';
import { marketBuy } from '../trading/key-calls';

/**
 * What the API gained for the dashboard (issue 22, docs/dashboard.md "What the API gained"), each usable by any
 * client: `fee_rate` in `GET /account/info`, `GET /account/audit` (hash chain and read models of the wallet),
 * and `?agent_id=` on the `/ws/v1` handshake (a browser cannot send `X-Agent-Id`). The real stack on PGlite
 * (or PostgreSQL with DATABASE_URL); BTCUSDT moves only when a test ticks it.
 */
const t = useTestApp({ env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT', FEE_RATE: '0.00075' } });
let base: string;
const { tick } = t;

beforeAll(async () => {
  base = (await t.app.listen({ host: '127.0.0.1', port: 0 })).replace('http', 'ws');
  tick('BTCUSDT', '40000', '10000');
});
const buy = (headers: Record<string, string>, quantity: string) => marketBuy(t.app, headers, quantity);

describe('GET /account/info fee_rate', () => {
  it('is the configured fee rate, for the account and for an agent, and the fee of a fill follows it', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account);
    for (const headers of [keyHeader(account.apiKey), keyHeader(agent.apiKey), bearer(account)]) {
      const info = await api(t.app, { method: 'GET', url: '/account/info', headers });
      expect(info.json().fee_rate).toBe('0.00075000');
    }
    const fill = (await buy(keyHeader(account.apiKey), '0.01')).json();
    const notional = Number(fill.executed_price) * 0.01;
    expect(Number(fill.fee)).toBeCloseTo(notional * 0.00075, 7);
  });
});

describe('GET /account/audit', () => {
  it('reports an intact chain and agreeing read models, for the scoped wallet, and a tampered event', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account);
    const empty = await api(t.app, {
      method: 'GET',
      url: '/account/audit',
      headers: keyHeader(agent.apiKey),
    });
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toMatchObject({
      stream_id: `wallet-${agent.agentId}`,
      events: 0,
      head_revision: -1,
      last_hash: null,
      chain: { intact: true, break: null },
      read_models: { agree: true, mismatches: [] },
    });

    expect((await buy(keyHeader(agent.apiKey), '0.01')).statusCode).toBe(201);
    expect((await buy(keyHeader(agent.apiKey), '0.02')).statusCode).toBe(201);
    // The JWT with X-Agent-Id sees the agent's wallet, like the agent's key.
    const scoped = { ...bearer(account), 'x-agent-id': agent.agentId };
    const audit = (await api(t.app, { method: 'GET', url: '/account/audit', headers: scoped })).json();
    const log = (
      await api(t.app, { method: 'GET', url: '/account/events?limit=1000', headers: scoped })
    ).json();
    expect(audit).toMatchObject({
      stream_id: `wallet-${agent.agentId}`,
      events: log.events.length,
      head_revision: log.events.at(-1).revision,
      last_hash: log.events.at(-1).hash,
      chain: { intact: true, break: null },
      read_models: { agree: true, mismatches: [] },
    });
    expect(audit.read_models.revision).toBeLessThanOrEqual(audit.head_revision);
    expect(Date.parse(audit.verified_at)).toBeGreaterThan(Date.now() - 60_000);
    // The account's own wallet is another stream, untouched by the agent's trades.
    const own = (await api(t.app, { method: 'GET', url: '/account/audit', headers: bearer(account) })).json();
    expect(own).toMatchObject({ stream_id: `wallet-${account.accountId}`, events: 0 });

    // An event changed behind the store's back breaks the chain at its revision.
    const filled = log.events.find((e: { type: string }) => e.type === 'OrderFilled');
    await sql`update events set data = jsonb_set(data, '{fee}', '"0.00000001"')
              where stream_id = ${audit.stream_id} and revision = ${filled.revision}`.execute(t.database.db);
    const broken = (await api(t.app, { method: 'GET', url: '/account/audit', headers: scoped })).json();
    expect(broken.chain).toEqual({
      intact: false,
      break: expect.objectContaining({ revision: filled.revision, reason: 'hash_mismatch' }),
    });
    expect(broken.read_models.agree).toBe(false);
    expect(broken.read_models.mismatches.join('\n')).toMatch(/fees paid/);

    // Read a page at a time (the memory of one page whatever the history), any page size gives the same report.
    const { eventStore } = t.runtime.services;
    const whole = await auditWalletNow(eventStore, t.database.db, agent.agentId);
    expect(whole).toMatchObject({
      events: log.events.length,
      chainBreak: { revision: filled.revision, reason: 'hash_mismatch' },
    });
    for (const pageSize of [1, 2, 3, log.events.length, log.events.length + 1])
      expect(await auditWalletNow(eventStore, t.database.db, agent.agentId, { pageSize })).toEqual(whole);
  });

  it('needs a credential', async () => {
    const r = await api(t.app, { method: 'GET', url: '/account/audit' });
    expect([r.statusCode, r.json().error.code]).toEqual([401, 'INVALID_API_KEY']);
  });
});

/** Opens a socket and collects its messages until it closes or `ms` pass. */
const closedSession = (query: string, ms = 5_000) =>
  new Promise<{ messages: any[]; code: number | null }>((resolve, reject) => {
    const ws = new WebSocket(`${base}/ws/v1${query}`);
    const messages: any[] = [];
    const timer = setTimeout(() => {
      ws.close();
      resolve({ messages, code: null });
    }, ms);
    ws.on('message', (d) => messages.push(JSON.parse(String(d))));
    ws.on('close', (code) => {
      clearTimeout(timer);
      resolve({ messages, code });
    });
    ws.on('error', reject);
  });

describe('/ws/v1 ?agent_id=', () => {
  it("scopes a JWT socket to one of the account's agents: portfolio and orders follow the agent's wallet", async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account);
    const socket = await connectWs(base, `?token=${account.token}&agent_id=${agent.agentId.toUpperCase()}`);
    socket.send({ action: 'subscribe', channel: 'portfolio' });
    socket.send({ action: 'subscribe', channel: 'orders' });
    expect((await socket.next((m) => m.channel === 'portfolio' && m.type === 'subscribed')).data).toEqual({
      owner_id: agent.agentId,
    });
    expect((await socket.next((m) => m.channel === 'orders' && m.type === 'subscribed')).data.owner_id).toBe(
      agent.agentId,
    );
    await socket.next((m) => m.channel === 'portfolio' && m.type === 'portfolio');
    expect((await buy(keyHeader(agent.apiKey), '0.01')).statusCode).toBe(201);
    const filled = await socket.next((m) => m.channel === 'orders' && m.type === 'OrderFilled');
    expect(filled.data.data.symbol).toBe('BTCUSDT');
    const after = await socket.next((m) => m.channel === 'portfolio' && m.data.positions?.length === 1);
    expect(after.data.positions[0].quantity).toBe('0.01000000');
    socket.ws.close();
  });

  it('refuses an agent of another account (PERMISSION_DENIED) and a malformed id (VALIDATION_ERROR) with 4401', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const other = await registerAccount(t.app, {}, { plain: true });
    const theirs = await createAgent(t.app, other);
    const foreign = await closedSession(`?token=${account.token}&agent_id=${theirs.agentId}`);
    expect(foreign.code).toBe(4401);
    expect(foreign.messages[0]).toMatchObject({
      channel: 'system',
      type: 'error',
      data: { code: 'PERMISSION_DENIED' },
    });
    const malformed = await closedSession(`?token=${account.token}&agent_id=nope`);
    expect(malformed.code).toBe(4401);
    expect(malformed.messages[0].data).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'agent_id must be an agent id (UUID)',
    });
    // An agent key may name only its own agent.
    const mine = await createAgent(t.app, account);
    const agentKey = await closedSession(`?api_key=${theirs.apiKey}&agent_id=${mine.agentId}`);
    expect(agentKey.code).toBe(4401);
    expect(agentKey.messages[0].data.code).toBe('PERMISSION_DENIED');
  });
});
