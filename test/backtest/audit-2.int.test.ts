import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../accounts/support';
import { dataDirectory, ok, startBacktestApp, type Trader, trader } from './http-support';

/**
 * Regressions of the second interface audit of the backtest endpoints, through the real stack (`inject`) on the
 * real hourly BTCUSDT and ETHUSDT files:
 * - `POST /backtest/create` trims `strategy_label` (`"  swing  "` is stored as `"swing"`), but the
 *   `strategy_label` filters of `GET /backtest/list` and `GET /backtest/best` compared the raw query value, so a
 *   client filtering by the very label it sent found nothing.
 */
let t: TestApp;
let remove: () => void;
let alice: Trader;

beforeAll(async () => {
  const data = dataDirectory();
  remove = data.remove;
  t = await startBacktestApp(data.dir);
  alice = await trader(t.app);
}, 90_000);

afterAll(async () => {
  await t?.close();
  remove?.();
});

describe('strategy_label filters match the label as create stores it', () => {
  it('list and best find a session by the label sent at create, surrounding spaces included', async () => {
    const created = await ok(t.app, alice.headers, 'POST', '/backtest/create', {
      start_time: '2022-01-01T00:00:00Z',
      end_time: '2022-01-01T03:00:00Z',
      starting_balance: '10000',
      candle_interval: '1h',
      agent_id: alice.agentId,
      pairs: ['BTCUSDT'],
      strategy_label: '  swing  ',
    });
    expect(created.strategy_label).toBe('swing');
    const id = created.session_id as string;
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: 3 });

    for (const label of ['swing', '  swing  ', 'swing ']) {
      const list = await ok(
        t.app,
        alice.headers,
        'GET',
        `/backtest/list?strategy_label=${encodeURIComponent(label)}`,
      );
      expect(list.total, `list strategy_label=${JSON.stringify(label)}`).toBe(1);
      expect(list.backtests[0].session_id).toBe(id);
      const best = await ok(
        t.app,
        alice.headers,
        'GET',
        `/backtest/best?metric=roi_pct&strategy_label=${encodeURIComponent(label)}`,
      );
      expect(best.session_id, `best strategy_label=${JSON.stringify(label)}`).toBe(id);
    }
    const none = await ok(t.app, alice.headers, 'GET', '/backtest/list?strategy_label=swin');
    expect(none.total).toBe(0);
  });
});
