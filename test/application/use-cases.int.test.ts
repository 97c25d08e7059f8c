import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetBalances, balances, portfolio } from '../../src/application/account';
import { createAgent } from '../../src/application/agents';
import { register } from '../../src/application/auth';
import { placeSandboxOrder } from '../../src/application/backtest/sandbox';
import { createBacktest, startBacktest, stepBacktest } from '../../src/application/backtest/sessions';
import { type Call, newCall, newPublicCall } from '../../src/application/call';
import { cancelOrder, getOrder, listOpenOrders, placeOrder } from '../../src/application/trading';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createRuntime, type Runtime } from '../../src/runtime';
import { dataDirectory } from '../backtest/http-support';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import { statementCounter } from '../support/statement-counter';

/**
 * The application layer without any door (issue 15): a runtime, no fastify instance, and the use-case functions
 * every door calls. What a REST route, an MCP tool or a Binance endpoint adds is only parsing and presenting.
 */
describe('use cases called directly, with no HTTP', () => {
  let runtime: Runtime;
  let database: TestDatabase;
  let dataDir: string;
  let market: { dir: string; remove: () => void };
  let account: Call;
  let seq = 0;
  const callAs = (caller: Call['caller']) => newCall(runtime.services, caller, `use-case-test-${++seq}`);

  beforeAll(async () => {
    market = dataDirectory();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-use-cases-'));
    database = await createTestDatabase();
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', MARKET_DATA_DIR: market.dir });
    runtime = await createRuntime(config, createLogger('silent', { pretty: false }), { database });
    await runtime.services.market!.persisted();
    const registration = await register(newPublicCall(runtime.services, 'register'), {
      displayName: 'direct',
    });
    account = callAs({ accountId: registration.accountId, via: 'account_key' });
  });

  afterAll(async () => {
    await runtime?.close();
    await database?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    market?.remove();
  });

  it('places an order with an idempotency key, replays it, refuses another body under it, and cancels it', async () => {
    const price = runtime.services.market!.feed.prices.get('BTCUSDT');
    expect(price, 'the replayed live feed prices BTCUSDT').toBeDefined();
    const limit = (Number(price!.price) * 0.5).toFixed(2);
    const order = {
      symbol: 'btcusdt',
      side: 'buy' as const,
      type: 'limit' as const,
      quantity: '0.01',
      price: limit,
      triggerPrice: null,
    };
    const first = await placeOrder(account, order, { idempotencyKey: 'direct-1' });
    expect(first.replayed).toBe(false);
    expect(first.outcome.kind).toBe('pending');
    const orderId = first.outcome.orderId;

    // The same request spelt differently (symbol case, decimal form) is the same request: the first answer.
    const retry = callAs(account.caller);
    const again = await placeOrder(
      retry,
      { ...order, symbol: 'BTCUSDT', quantity: '0.010' },
      {
        idempotencyKey: 'direct-1',
      },
    );
    expect(again.replayed).toBe(true);
    expect(again.outcome.orderId).toBe(orderId);
    expect(again.outcome.kind).toBe('pending');
    expect(retry.receipt.replayed).toBe(true);

    await expect(
      placeOrder(callAs(account.caller), { ...order, quantity: '0.02' }, { idempotencyKey: 'direct-1' }),
    ).rejects.toMatchObject({ code: 'CONFLICT', status: 409, details: { reason: 'idempotency_key_reused' } });

    // A read right after the write includes it (read your writes, whichever door reads).
    const open = await listOpenOrders(callAs(account.caller), { limit: 10, offset: 0 });
    expect(open.rows.map((r) => r.order_id)).toEqual([orderId]);

    const cancelled = await cancelOrder(callAs(account.caller), orderId.toUpperCase());
    expect(cancelled.order_id).toBe(orderId);
    expect((await getOrder(callAs(account.caller), orderId)).status).toBe('cancelled');
    await expect(cancelOrder(callAs(account.caller), orderId)).rejects.toMatchObject({
      code: 'ORDER_NOT_CANCELLABLE',
    });
  });

  it("assetBalances (the Binance door's currencies) reads the balances read model in one statement, as balances shows it", async () => {
    // A resting limit buy, so USDT is partly locked and the lines are not the starting balance alone.
    const price = Number(runtime.services.market!.feed.prices.get('BTCUSDT')!.price);
    const order = { symbol: 'BTCUSDT', side: 'buy' as const, type: 'limit' as const, quantity: '0.01' };
    await placeOrder(callAs(account.caller), {
      ...order,
      price: (price * 0.5).toFixed(2),
      triggerPrice: null,
    });
    const statements = statementCounter();
    const database = {
      ...runtime.services.database,
      db: runtime.services.database.db.withPlugin(statements.plugin),
    };
    const counted = newCall({ ...runtime.services, database }, account.caller, `use-case-test-${++seq}`);
    const assets = await assetBalances(counted);
    expect(statements.count).toBe(1);
    const shown = (await balances(callAs(account.caller))).balances;
    expect(shown.find((b) => b.asset === 'USDT')!.locked).not.toBe('0.00000000');
    const held = assets.filter((a) => a.available !== '0.00000000' || a.locked !== '0.00000000');
    expect(held.map(({ asset, available, locked }) => ({ asset, available, locked }))).toEqual(
      shown.map(({ asset, available, locked }) => ({ asset, available, locked })),
    );
  });

  it('runs a 10-step backtest with a sandbox order and reads the portfolio', async () => {
    const agent = await createAgent(account, { displayName: 'direct-agent' });
    const agentCall = () =>
      callAs({ accountId: account.caller.accountId, agentId: agent.agent.agentId, via: 'agent_key' });
    const created = await createBacktest(agentCall(), {
      startTime: '2023-06-01T00:00:00Z',
      endTime: '2023-06-01T10:00:00Z',
      candleInterval: '1h',
      startingBalance: '10000',
      strategyLabel: 'direct',
      pairs: ['BTCUSDT'],
      agentId: agent.agent.agentId,
    });
    expect(created.total_steps).toBe(10);
    await startBacktest(agentCall(), created.session_id);
    const placed = await placeSandboxOrder(agentCall(), created.session_id, {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'market',
      quantity: '0.01',
      price: null,
      triggerPrice: null,
    });
    expect(placed.status).toBe('filled');
    let last = await stepBacktest(agentCall(), created.session_id, 1);
    for (let i = 1; i < 10; i++) last = await stepBacktest(agentCall(), created.session_id, 1);
    expect(last.step).toBe(10);
    expect(last.is_complete).toBe(true);

    // The account's own portfolio: its cancelled order left it at its starting balance.
    const snapshot = await portfolio(callAs(account.caller));
    expect(snapshot.total_equity).toBe('10000.00000000');
    expect(snapshot.positions).toEqual([]);
  });
});
