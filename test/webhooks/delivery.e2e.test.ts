import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyDelivery } from '../../src/webhooks/signature';
import { dataDirectory } from '../backtest/http-support';
import { postgresTestDatabaseOrSkip } from '../support/databases';
import { type ServerProcess, startServer } from '../support/server-process';
import { type Received, type Receiver, startReceiver } from './receiver';

/**
 * Webhook deliveries against the real server process (issue 17, item 11, "Done when"): a local receiver gets
 * each event type exactly once with a valid signature, across a venue restart (SIGTERM) in the middle of a
 * burst of fills; a receiver that fails three times gets the retries on the configured schedule. The venue runs
 * on embedded PGlite in a temporary DATA_DIR with the real BTCUSDT/ETHUSDT hourly data, WEBHOOKS_ALLOW_PRIVATE
 * (the receiver is on 127.0.0.1) and short retry settings.
 */
const RETRY_BASE_MS = 400;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-webhooks-'));
const market = dataDirectory();
const env = {
  DATA_DIR: dataDir,
  DATABASE_URL: '',
  MARKET_DATA_DIR: market.dir,
  WEBHOOKS_ALLOW_PRIVATE: 'true',
  WEBHOOKS_RETRY_BASE_MS: String(RETRY_BASE_MS),
  WEBHOOKS_MAX_ATTEMPTS: '5',
  WEBHOOKS_POLL_MS: '100',
  // 1 % fees, so one round trip of the breaker agent loses more than its 1 % daily limit.
  FEE_RATE: '0.01',
};
let server: ServerProcess | undefined;
let receiver: Receiver;

const api = async (
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: any }> => {
  const res = await fetch(`${server!.url}/api/v1${url}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};
const must = async (
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
  status = 200,
) => {
  const r = await api(method, url, headers, body);
  expect(r.status, `${method} ${url}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
};

const waitFor = async (what: string, check: () => boolean | Promise<boolean>, ms = 30_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

const parsed = (r: Received) =>
  JSON.parse(r.body) as { id: string; type: string; event: any; agent_id: string | null };

beforeAll(async () => {
  receiver = await startReceiver((p, attempt) =>
    p.startsWith('/flaky') && attempt <= 3 ? 500 : p.startsWith('/down') ? 503 : 200,
  );
  server = await startServer(env);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  market.remove();
});

/**
 * The exactly-once scenario on the server now running (`server`, started with `runEnv`): an account's webhook for
 * every event type at `hookPath`, each event type caused, a SIGTERM restart in the middle of a burst of fills, and
 * the deliveries checked against the wallets' event logs.
 */
const exactlyOnceAcrossRestart = async (runEnv: Record<string, string>, hookPath: string): Promise<void> => {
  const reg = await must('POST', '/auth/register', {}, { display_name: 'Hooked' }, 201);
  const key = { 'x-api-key': reg.api_key as string };
  const { token } = await must(
    'POST',
    '/auth/login',
    {},
    { api_key: reg.api_key, api_secret: reg.api_secret },
  );
  const jwt = { authorization: `Bearer ${token}` };
  const hook = await must(
    'POST',
    '/webhooks',
    key,
    {
      url: `${receiver.url}${hookPath}`,
      event_types: [
        'order.filled',
        'order.cancelled',
        'backtest.completed',
        'battle.completed',
        'risk.daily_loss_breaker_tripped',
      ],
    },
    201,
  );
  const secret = hook.secret as string;
  const risky = { max_position_size_pct: 100, max_order_size_pct: 100, daily_loss_limit_pct: 1 };
  const a1 = await must(
    'POST',
    '/agents',
    jwt,
    { display_name: 'a1', starting_balance: '1000', risk_profile: risky },
    201,
  );
  const a2 = await must('POST', '/agents', jwt, { display_name: 'a2' }, 201);
  const price = Number((await must('GET', '/market/price/BTCUSDT', key)).price);

  // order.cancelled: a limit buy far below the price, cancelled.
  const limit = await must(
    'POST',
    '/trade/order',
    key,
    { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.001', price: (price / 2).toFixed(2) },
    201,
  );
  await must('DELETE', `/trade/order/${limit.order_id}`, key);

  // risk.daily_loss_breaker_tripped: a1 loses 2 % of its balance in fees, then two orders are refused.
  const agentKey = { 'x-api-key': a1.api_key as string };
  const qty = (900 / price).toFixed(5);
  for (const side of ['buy', 'sell']) {
    await must(
      'POST',
      '/trade/order',
      agentKey,
      { symbol: 'BTCUSDT', side, type: 'market', quantity: qty },
      201,
    );
  }
  for (let i = 0; i < 2; i++) {
    const refused = await api('POST', '/trade/order', agentKey, {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'market',
      quantity: '0.0001',
    });
    expect(refused.body.error.code).toBe('DAILY_LOSS_LIMIT');
  }

  // backtest.completed: a short backtest run to its end.
  const bt = await must('POST', '/backtest/create', jwt, {
    start_time: '2022-01-01T00:00:00Z',
    end_time: '2022-01-02T00:00:00Z',
    starting_balance: '10000',
    candle_interval: '1h',
    agent_id: a2.agent_id,
    pairs: ['BTCUSDT'],
  });
  await must('POST', `/backtest/${bt.session_id}/start`, jwt);
  await must('POST', `/backtest/${bt.session_id}/step/batch`, jwt, { steps: 24 });

  // battle.completed: a live battle of the two agents, started and stopped.
  const battle = await must('POST', '/battles', jwt, { name: 'Hook duel' }, 201);
  for (const a of [a1, a2])
    await must('POST', `/battles/${battle.battle_id}/participants`, jwt, { agent_id: a.agent_id }, 201);
  await must('POST', `/battles/${battle.battle_id}/start`, jwt);
  await must('POST', `/battles/${battle.battle_id}/stop`, jwt);

  // A burst of market buys on the account's wallet, with a SIGTERM restart of the venue in its middle.
  // Under the account's order limit (100 a minute): 25 + 10 + 25 orders of about 20 USDT each.
  const acked: string[] = [];
  const refusals: unknown[] = [];
  const small = (20 / price).toFixed(5);
  const burst = async (n: number) => {
    const sent = Array.from({ length: n }, () =>
      api('POST', '/trade/order', key, { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: small })
        .then((r) => {
          if (r.status === 201) acked.push(r.body.order_id);
          else refusals.push(r.body);
        })
        .catch(() => {}),
    );
    return Promise.all(sent);
  };
  const first = burst(25);
  await waitFor(
    'the first fills to be delivered',
    () =>
      receiver.received.filter((r) => r.path === hookPath && parsed(r).type === 'order.filled').length >= 8,
  ).catch((error) => {
    throw new Error(
      `${error.message}: ${JSON.stringify({ acked: acked.length, refusals, received: receiver.received.map((r) => r.body) }).slice(0, 3000)}`,
    );
  });
  const stopAt = Date.now();
  const stopping = server!.stop();
  await burst(10); // these meet the closing server: refused, or answered before it stops
  await first;
  expect(await stopping).toBe(0);
  // Graceful, yet not held open by the burst's keep-alive connections (fastify's 72 s keepAliveTimeout):
  // within an orchestrator's usual 30 s grace period (src/http/close-connections.ts).
  expect(Date.now() - stopAt).toBeLessThan(30_000);
  const beforeRestart = acked.length;
  expect(beforeRestart).toBeGreaterThanOrEqual(8);
  server = await startServer(runEnv);
  await burst(25);
  expect(acked.length - beforeRestart, JSON.stringify(refusals)).toBe(25);

  // The truth is the log: every fill and cancel of the account's and a1's wallets.
  const walletEvents = async (headers: Record<string, string>) =>
    (await must('GET', '/account/events?limit=1000', headers)).events as {
      event_id: string;
      type: string;
      data: any;
    }[];
  const logged = [...(await walletEvents(key)), ...(await walletEvents(agentKey))];
  const loggedFills = logged.filter((e) => e.type === 'OrderFilled').map((e) => e.event_id);
  const loggedCancels = logged.filter((e) => e.type === 'OrderCancelled').map((e) => e.event_id);
  const ofType = (type: string) =>
    receiver.received.filter((r) => r.path === hookPath && parsed(r).type === type);
  await waitFor(
    'every fill to be delivered',
    () => new Set(ofType('order.filled').map((r) => parsed(r).event.event_id)).size >= loggedFills.length,
    60_000,
  );
  await waitFor(
    'the backtest and the battle',
    () => ofType('backtest.completed').length + ofType('battle.completed').length >= 2,
  );
  await new Promise((r) => setTimeout(r, 1_000)); // any duplicate would arrive meanwhile

  const all = receiver.received.filter((r) => r.path === hookPath);
  for (const r of all) {
    expect(verifyDelivery(secret, r.body, String(r.headers['x-ptv-signature'])), r.body).toBe(true);
    expect(r.headers['x-ptv-event']).toBe(parsed(r).type);
    expect(r.headers['x-ptv-delivery']).toBe(parsed(r).id);
  }
  expect(verifyDelivery('whsec_wrong', all[0]!.body, String(all[0]!.headers['x-ptv-signature']))).toBe(false);
  // Exactly once: no delivery id and no source event twice.
  expect(new Set(all.map((r) => r.headers['x-ptv-delivery'])).size).toBe(all.length);
  expect(new Set(all.map((r) => parsed(r).event.event_id)).size).toBe(all.length);
  const fillIds = ofType('order.filled').map((r) => parsed(r).event.event_id);
  expect(fillIds).toEqual(expect.arrayContaining(loggedFills));
  const filledOrders = new Set(ofType('order.filled').map((r) => parsed(r).event.data.order_id));
  for (const id of acked) expect(filledOrders.has(id), id).toBe(true);
  expect(ofType('order.cancelled').map((r) => parsed(r).event.event_id)).toEqual(
    expect.arrayContaining(loggedCancels),
  );
  expect(ofType('order.cancelled').some((r) => parsed(r).event.data.order_id === limit.order_id)).toBe(true);
  const breaker = ofType('risk.daily_loss_breaker_tripped');
  expect(breaker).toHaveLength(1);
  expect(parsed(breaker[0]!)).toMatchObject({ agent_id: a1.agent_id, event: { type: 'OrderRejected' } });
  expect(ofType('backtest.completed').map((r) => parsed(r).event.data.session_id)).toEqual([bt.session_id]);
  expect(ofType('battle.completed').map((r) => parsed(r).event.data.battle_id)).toEqual([battle.battle_id]);

  const listed = await must('GET', `/webhooks/${hook.webhook_id}/deliveries?limit=500`, key);
  expect(listed.total).toBe(all.length);
  expect(listed.deliveries.every((d: any) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
};

describe('webhook deliveries from the real server', () => {
  it('delivers every event type exactly once, signed, across a restart in the middle of a burst of fills', async () => {
    await exactlyOnceAcrossRestart(env, '/all-pglite');
  }, 300_000);

  it('retries a receiver that fails three times on the back-off schedule, and gives up on one that never answers 2xx', async () => {
    const reg = await must('POST', '/auth/register', {}, { display_name: 'Flaky' }, 201);
    const key = { 'x-api-key': reg.api_key as string };
    /** A webhook of `order.filled` to the receiver's `path`. */
    const hookTo = (path: string) =>
      must('POST', '/webhooks', key, { url: `${receiver.url}${path}`, event_types: ['order.filled'] }, 201);
    const flaky = await hookTo('/flaky');
    const down = await hookTo('/down');
    const test = await must('POST', `/webhooks/${flaky.webhook_id}/test`, key, undefined, 202);
    const gone = await must('POST', `/webhooks/${down.webhook_id}/test`, key, undefined, 202);
    const attemptsOf = (id: string) => receiver.received.filter((r) => r.headers['x-ptv-delivery'] === id);
    await waitFor('four attempts', () => attemptsOf(test.delivery_id).length >= 4, 20_000);
    const tries = attemptsOf(test.delivery_id);
    expect(tries.map((r) => r.status)).toEqual([500, 500, 500, 200]);
    expect(tries.map((r) => r.headers['x-ptv-attempt'])).toEqual(['1', '2', '3', '4']);
    for (const r of tries)
      expect(verifyDelivery(flaky.secret, r.body, String(r.headers['x-ptv-signature']))).toBe(true);
    const gaps = tries.slice(1).map((r, i) => r.at - tries[i]!.at);
    // 400, 800, 1,600 ms after each failure; the worker may wake a little late, never early.
    gaps.forEach((gap, i) => {
      const planned = RETRY_BASE_MS * 2 ** i;
      expect(gap, `gap ${i + 1}: ${gaps.join(', ')}`).toBeGreaterThanOrEqual(planned - 20);
      expect(gap, `gap ${i + 1}: ${gaps.join(', ')}`).toBeLessThan(planned + 700);
    });
    await waitFor('the delivery to be recorded', async () => {
      const page = await must('GET', `/webhooks/${flaky.webhook_id}/deliveries`, key);
      return page.deliveries[0]?.status === 'delivered';
    });
    const [delivered] = (await must('GET', `/webhooks/${flaky.webhook_id}/deliveries`, key)).deliveries;
    expect(delivered).toMatchObject({
      delivery_id: test.delivery_id,
      event_type: 'webhook.test',
      status: 'delivered',
      attempts: 4,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
    });

    await waitFor(
      'five attempts of the dead receiver',
      () => attemptsOf(gone.delivery_id).length >= 5,
      20_000,
    );
    await waitFor('the failure to be recorded', async () => {
      const page = await must('GET', `/webhooks/${down.webhook_id}/deliveries?status=failed`, key);
      return page.total === 1;
    });
    const [failed] = (await must('GET', `/webhooks/${down.webhook_id}/deliveries`, key)).deliveries;
    expect(failed).toMatchObject({
      status: 'failed',
      attempts: 5,
      last_status_code: 503,
      last_error: 'HTTP 503',
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(attemptsOf(gone.delivery_id)).toHaveLength(5);
  }, 120_000);
  it("does not hold other webhooks' deliveries behind a receiver that never answers", async () => {
    // A receiver that accepts the connection and never answers: each attempt lasts the whole timeout (10 s).
    const hanging = http.createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', () => resolve()));
    const hangUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hang`;
    try {
      const reg = await must('POST', '/auth/register', {}, { display_name: 'Slow neighbour' }, 201);
      const key = { 'x-api-key': reg.api_key as string };
      const events = { event_types: ['order.filled'] };
      const slow = await must('POST', '/webhooks', key, { url: hangUrl, ...events }, 201);
      await must('POST', '/webhooks', key, { url: `${receiver.url}/beside-slow`, ...events }, 201);
      // Six fills: twelve deliveries due together, the hanging receiver's and the good one's interleaved.
      for (let i = 0; i < 6; i++)
        await must(
          'POST',
          '/trade/order',
          key,
          { symbol: 'BTCUSDT', side: i % 2 === 0 ? 'buy' : 'sell', type: 'market', quantity: '0.001' },
          201,
        );
      const filledAt = Date.now();
      const good = () => receiver.received.filter((r) => r.path === '/beside-slow');
      await waitFor('the good receiver to get its six fills', () => good().length >= 6, 30_000);
      // Within the hanging receiver's timeout (10 s): its attempts held no one else's delivery (held, the sixth
      // would come at 10 s). 8 s, not less: on a loaded machine (a CI run beside other tests) the six deliveries
      // can take seconds to go out without anything being held.
      expect(Math.max(...good().map((r) => r.at)) - filledAt).toBeLessThan(8_000);
      // The hanging receiver's attempts end at the timeout, recorded in words.
      const timedOut = async () =>
        (await must('GET', `/webhooks/${slow.webhook_id}/deliveries`, key)).deliveries.find(
          (d: { attempts: number }) => d.attempts > 0,
        );
      await waitFor(
        'an attempt of the hanging receiver to time out',
        async () => !!(await timedOut()),
        30_000,
      );
      expect(await timedOut()).toMatchObject({
        status: 'pending',
        last_status_code: null,
        last_error: 'timeout: no answer within 10000 ms',
      });
      await must('DELETE', `/webhooks/${slow.webhook_id}`, key, undefined, 204);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  }, 60_000);

  it('does the same on a PostgreSQL server (the delivery role under its advisory lock)', async (ctx) => {
    const database = await postgresTestDatabaseOrSkip(ctx, 'webhooks');
    if (!database) return;
    const pgDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-webhooks-pg-'));
    const pgEnv = { ...env, DATA_DIR: pgDataDir, DATABASE_URL: database.url! };
    // The PGlite venue of the tests above is done: one venue at a time on this machine.
    await server?.stop();
    server = undefined;
    try {
      server = await startServer(pgEnv);
      await exactlyOnceAcrossRestart(pgEnv, '/all-postgres');
    } finally {
      await server?.stop();
      server = undefined;
      await database.close();
      fs.rmSync(pgDataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
