import { beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../domain/trading/decimal';
import { getOrder } from '../../queries/trading';
import { api, bearer, createAgent, keyHeader, registerAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';
import { limitBuy, marketBuy } from './key-calls';

/**
 * Read your writes on the read side (`READ_YOUR_WRITES=on-read`, the default; docs/architecture.md): an order is
 * answered once its events are durable, without waiting for the read models, and the owner's next request waits
 * for them instead. So every read right after an order still includes it, a just-filled order is not
 * cancellable (409, not 404), and a pending order is matched from the first tick after it is answered. The real
 * stack (PGlite, or PostgreSQL with DATABASE_URL), requests through fastify's `inject`.
 */
// The point is when writes are visible, not how much fills: wallets open `instant` (fill in full) explicitly. The
// reads wait at most the production bound (2 s), not the tests' 15 s (TEST_CONFIG_DEFAULTS): "0 stale reads" is
// judged against what a client of the venue gets.
const ENV = {
  MARKET_SOURCE: 'synthetic',
  MARKET_SYMBOLS: 'SOLUSDT',
  FILL_MODEL: 'instant',
  READ_MODEL_WAIT_MS: '2000',
};
const t = useTestApp({ env: ENV });
const { tick } = t;

beforeAll(async () => {
  tick('BTCUSDT', '40000', '10000');
});

const buy = (headers: Record<string, string>, quantity: string) => marketBuy(t.app, headers, quantity);

describe('read your writes on the read side (READ_YOUR_WRITES=on-read)', () => {
  it('answers an order without waiting for the read models, and every read right after it includes it', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agents = await Promise.all(
      Array.from({ length: 8 }, (_, i) => createAgent(t.app, account, { display_name: `ryw-${i}` })),
    );
    const misses: string[] = [];
    await Promise.all(
      agents.map(async (agent, a) => {
        const headers = keyHeader(agent.apiKey);
        for (let round = 1; round <= 8; round++) {
          const placed = await buy(headers, '0.001');
          expect(placed.statusCode, placed.body).toBe(201);
          expect(placed.headers['x-log-position']).toMatch(/^\d+\/\d+$/);
          expect(String(placed.headers['server-timing'])).not.toMatch(/read-models/);
          const orderId = placed.json().order_id as string;
          // The agent's own reads, at once, and the account's view of the agent (JWT with X-Agent-Id).
          const one = await api(t.app, { method: 'GET', url: `/trade/order/${orderId}`, headers });
          if (one.statusCode !== 200 || one.json().status !== 'filled')
            misses.push(`agent ${a} round ${round}: order ${one.statusCode} ${one.body}`);
          const positions = await api(t.app, {
            method: 'GET',
            url: '/account/positions',
            headers: { ...bearer(account), 'x-agent-id': agent.agentId },
          });
          const btc = (positions.json().positions as { symbol: string; quantity: string }[]).find(
            (p) => p.symbol === 'BTCUSDT',
          );
          if (!btc || !dec(btc.quantity).eq(dec('0.001').times(round)))
            misses.push(`agent ${a} round ${round}: position ${btc?.quantity ?? 'none'}`);
          const history = await api(t.app, { method: 'GET', url: '/trade/history?limit=500', headers });
          if (history.json().trades.length !== round)
            misses.push(`agent ${a} round ${round}: ${history.json().trades.length} trades`);
          if (one.headers['x-read-model-stale'] || positions.headers['x-read-model-stale'])
            misses.push(`agent ${a} round ${round}: a read answered stale`);
        }
      }),
    );
    expect(misses).toEqual([]);
  }, 60_000);

  it('answers a cancel of an order filled a moment ago with ORDER_NOT_CANCELLABLE, not ORDER_NOT_FOUND', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const headers = keyHeader(account.apiKey);
    for (let i = 0; i < 10; i++) {
      const placed = await buy(headers, '0.001');
      expect(placed.statusCode, placed.body).toBe(201);
      const cancel = await api(t.app, {
        method: 'DELETE',
        url: `/trade/order/${placed.json().order_id}`,
        headers,
      });
      expect(cancel.statusCode, cancel.body).toBe(409);
      expect(cancel.json().error.code).toBe('ORDER_NOT_CANCELLABLE');
    }
  }, 30_000);

  it('matches a pending order from the first tick after its placement is answered', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const headers = keyHeader(account.apiKey);
    for (let i = 0; i < 5; i++) {
      tick('BTCUSDT', '40000');
      const placed = await limitBuy(t.app, headers, '0.001', '39000');
      expect(placed.statusCode, placed.body).toBe(201);
      expect(placed.json().status).toBe('pending');
      // One tick through the limit, at once, and then none: the order must fill at that tick.
      tick('BTCUSDT', '38900');
      tick('BTCUSDT', '40000');
      let status = '';
      for (let wait = 0; wait < 100 && status !== 'filled'; wait++) {
        const got = await api(t.app, {
          method: 'GET',
          url: `/trade/order/${placed.json().order_id}`,
          headers,
        });
        status = got.json().status;
        if (status !== 'filled') await new Promise((r) => setTimeout(r, 20));
      }
      expect(status).toBe('filled');
    }
  }, 30_000);
});

describe('READ_YOUR_WRITES=on-response', () => {
  const strict = useTestApp({ env: { ...ENV, READ_YOUR_WRITES: 'on-response' } });
  beforeAll(() => strict.tick('BTCUSDT', '40000', '10000'));

  it('answers an order after the read models include it', async () => {
    const account = await registerAccount(strict.app, {}, { plain: true });
    for (let i = 0; i < 5; i++) {
      const placed = await marketBuy(strict.app, keyHeader(account.apiKey), '0.001');
      expect(placed.statusCode, placed.body).toBe(201);
      expect(String(placed.headers['server-timing'])).toMatch(/read-models;dur=/);
      // The read model itself, not through a request (which would wait for it): the order is there.
      const row = await getOrder(strict.database.db, account.accountId, placed.json().order_id);
      expect(row?.status).toBe('filled');
    }
  });
});
