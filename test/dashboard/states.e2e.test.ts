import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserTestsSkipped,
  dashboardVenue,
  openDuringOutage,
  openViewer,
  pageWidths,
  registerViewer,
  startedBacktest,
} from '../support/dashboard-page';

/**
 * The dashboard's states a new owner meets beyond the happy path (docs/dashboard.md), in Debian's `chromium` driven
 * by `playwright-core` against the real venue process on the real market data (embedded PGlite in a temporary
 * `DATA_DIR`): a page read while the venue is away shows the venue's absence and reads itself again once the
 * socket is back after a restart. Skipped, with the reason printed, where no chromium is installed.
 */
const MISSING = browserTestsSkipped();

const venue = dashboardVenue('ptv-dashboard-states-');
let base = '';
let page: Page;
let jwt: Record<string, string>;
let key: Record<string, string>;

/** One REST call of the venue started for this file (`restCall`). */
const { call } = venue;

describe.skipIf(MISSING !== undefined)('the dashboard beyond the happy path', () => {
  beforeAll(async () => {
    base = await venue.start();
    const viewer = await registerViewer(call, 'States viewer');
    ({ jwt, key } = viewer);
    ({ browser: venue.browser, page } = await openViewer(viewer.token));
  }, 180_000);

  afterAll(() => venue.close(), 60_000);

  it('reads a page opened while the venue was away again once the venue is back', async () => {
    await page.goto(`${base}/#/overview`);
    // Opened during the outage: the page says the venue did not answer.
    let alert: Locator;
    ({ server: venue.server, alert } = await openDuringOutage(page, venue.server!, venue.env, '#/backtests'));
    // Without a reload, the page asked the venue again: the outage's error is gone, the (empty) list is shown.
    await page.getByText('No backtests').waitFor({ timeout: 10_000 });
    expect(await alert.count()).toBe(0);
    expect((await call('GET', '/backtest/list', jwt)).total).toBe(0);
  }, 180_000);

  it("names the asset of each open order's lock: USDT for a buy, the base for a sell", async () => {
    await call('POST', '/trade/order', key, {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'market',
      quantity: '0.01',
    });
    const buy = await call('POST', '/trade/order', key, {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'limit',
      quantity: '0.01',
      price: '1000',
    });
    const sell = await call('POST', '/trade/order', key, {
      symbol: 'BTCUSDT',
      side: 'sell',
      type: 'stop_loss',
      quantity: '0.01',
      trigger_price: '1000',
    });
    expect([buy.locked_amount, sell.locked_amount]).toEqual(['10.01000000', '0.01000000']);
    await page.goto(`${base}/#/overview`);
    // The "Locked" cell of an order's row, found by its column's header (columns come and go with the layout).
    const locked = async (id: string) => {
      const row = page.locator(`[data-order="${id}"]`);
      if ((await row.count()) === 0) return '';
      const column = await page
        .locator('table:has([data-order]) thead th')
        .evaluateAll((ths) => ths.findIndex((th) => (th.textContent ?? '').trim().startsWith('Locked')) + 1);
      if (column === 0) return 'no Locked column';
      return (await row.locator(`td:nth-child(${column})`).textContent()) ?? '';
    };
    await expect.poll(() => locked(buy.order_id)).toMatch(/^10\.01\d* USDT$/);
    await expect.poll(() => locked(sell.order_id)).toMatch(/^0\.01\d* BTC$/);
  }, 60_000);

  it('fits a narrow screen: no page scrolls sideways, wide tables scroll inside their box', async () => {
    const btId = await startedBacktest(call, jwt, {
      label: 'narrow',
      agentId: (await call('POST', '/agents', jwt, { display_name: 'Narrow bot' })).agent_id,
    });
    await call('POST', `/backtest/${btId}/step/batch`, jwt, { steps: 100 });
    const battle = await call('POST', '/battles', jwt, { name: 'Narrow duel', battle_mode: 'live' });
    await page.setViewportSize({ width: 390, height: 800 });
    const ready: [string, string][] = [
      ['#/overview', '[data-panel="orders"] tbody tr'],
      ['#/market/BTCUSDT', '[data-testid="live-price"] .num'],
      ['#/backtests', '[data-testid="backtest-list"] tbody tr'],
      [`#/backtests/${btId}`, '[data-testid="bt-metrics"]'],
      ['#/battles', '[data-testid="battle-list"] tbody tr'],
      [`#/battles/${battle.battle_id}`, '.battle'],
      ['#/audit', '[data-testid="event-log"] tbody tr'],
    ];
    const wider: string[] = [];
    for (const [hash, selector] of ready) {
      await page.goto(`${base}/${hash}`);
      await page.locator(selector).first().waitFor();
      const { scroll, client } = await pageWidths(page);
      if (scroll > client) wider.push(`${hash}: ${scroll} px wide in ${client}`);
    }
    expect(wider).toEqual([]);
    await page.setViewportSize({ width: 1400, height: 900 });
  }, 90_000);

  it("shows the account's own wallet, saying why, once the viewed agent is deleted", async () => {
    const agent = await call('POST', '/agents', jwt, { display_name: 'Short-lived bot' });
    await page.goto(`${base}/#/overview`);
    await page.reload(); // the picker lists the agents of the page's load
    await page.locator('select[name="wallet"]').selectOption(agent.agent_id);
    await page.locator('.conn.live').waitFor();
    await page.locator('[data-testid="summary"]').waitFor();
    await call('DELETE', `/agents/${agent.agent_id}`, jwt);
    // The next reads of the agent's wallet are refused; the page reads the agents again and shows the account's.
    await page.evaluate("location.hash = '#/audit'");
    await page.locator('[data-testid="agent-gone"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('select[name="wallet"]').inputValue()).toBe('');
    await page.locator('[data-testid="chain-status"]').waitFor();
    await page.locator('.conn.live').waitFor({ timeout: 15_000 });
    expect(await page.locator('[role="alert"]').count()).toBe(0);
    // After a reload too: the session no longer names the agent.
    await page.reload();
    await page.locator('[data-testid="chain-status"]').waitFor();
    expect(await page.locator('select[name="wallet"]').inputValue()).toBe('');
    expect(await page.locator('[role="alert"]').count()).toBe(0);
  }, 60_000);
});
