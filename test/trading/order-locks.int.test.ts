import { describe, expect, it } from 'vitest';
import { SandboxLog } from '../../domain/backtest/sandbox-log';
import { api, keyHeader } from '../accounts/support';
import { useAccount, useTestApp } from '../support/test-app';
import { until } from '../support/until';
import { limitBuyPlaced } from '../support/wallet-events';
import { settleTrading } from './log-head';

/**
 * An order's `locked_amount` in the orders read model is what it holds now (issue 21; docs/trading-rules.md,
 * "Locks"): the lock while pending, 0 once filled, cancelled or expired (the lock was consumed or released).
 */

const t = useTestApp({
  env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT', FILL_MODEL: 'instant' },
});

const account = useAccount(t, [['BTCUSDT', '40000', '10000']]);
const order = (payload: Record<string, unknown>) =>
  api(t.app, { method: 'POST', url: '/trade/order', headers: keyHeader(account.apiKey), payload });
const read = async (id: string) => {
  await settleTrading(t);
  return (
    await api(t.app, { method: 'GET', url: `/trade/order/${id}`, headers: keyHeader(account.apiKey) })
  ).json();
};
const limitBuy = { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.01' };

describe('locked_amount of finished orders', () => {
  it('is the lock while pending and 0 once cancelled', async () => {
    const placed = await order({ ...limitBuy, price: '30000' });
    const id = placed.json().order_id as string;
    expect(await read(id)).toMatchObject({ status: 'pending', locked_amount: '300.30000000' });
    const cancelled = await api(t.app, {
      method: 'DELETE',
      url: `/trade/order/${id}`,
      headers: keyHeader(account.apiKey),
    });
    expect(cancelled.json()).toMatchObject({ unlocked_amount: '300.30000000' });
    expect(await read(id)).toMatchObject({ status: 'cancelled', locked_amount: '0.00000000' });
  });

  it('is 0 once filled (the lock was consumed) and once expired (an IOC the price does not reach)', async () => {
    const placed = await order({ ...limitBuy, price: '39000' });
    const id = placed.json().order_id as string;
    t.tick('BTCUSDT', '38900', '10000');
    await until(async () => (await read(id)).status === 'filled', { what: 'the limit buy fills' });
    expect(await read(id)).toMatchObject({ status: 'filled', locked_amount: '0.00000000' });

    const ioc = await order({ ...limitBuy, price: '30000', time_in_force: 'IOC' });
    expect(ioc.json()).toMatchObject({ status: 'cancelled' });
    expect(await read(ioc.json().order_id)).toMatchObject({
      status: 'cancelled',
      locked_amount: '0.00000000',
    });
  });

  it('the sandbox orders of backtests and battles show the same', () => {
    const log = new SandboxLog();
    const placed = limitBuyPlaced({ order_id: 'o1', session_id: 's', placed_at: '2024-01-01T00:00:00.000Z' });
    log.apply({ type: 'OrderPlaced', data: placed });
    expect(log.orders[0]!.locked_amount).toBe('300.30000000');
    log.apply({
      type: 'OrderCancelled',
      data: {
        order_id: 'o1',
        session_id: 's',
        symbol: 'BTCUSDT',
        reason: 'user',
        unlocked_amount: '300.30000000',
        unlocked_asset: 'USDT',
        cancelled_at: '2024-01-01T01:00:00.000Z',
      },
    });
    expect(log.orders[0]).toMatchObject({ status: 'cancelled', locked_amount: '0.00000000' });
  });
});
