import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserTestsSkipped,
  dashboardVenue,
  openViewer,
  pageWidths,
  registerViewer,
  testOutputDir,
} from '../support/dashboard-page';

/**
 * The dashboard's tables fit their panels on a 1280 px wide screen (no scrolling inside a panel to read a
 * position's "Opened" or reach an order's "Cancel"), and the pages still never scroll sideways at 390 px: the
 * overview's positions and open orders, and a live battle's leaderboard in its half-width panel. Debian's
 * `chromium` driven by `playwright-core` against the real venue process on the real market data (embedded
 * PGlite in a temporary `DATA_DIR`); screenshots go to `DASHBOARD_TEST_OUTPUT` (default `test-output/dashboard`).
 * Skipped, with the reason printed, where no chromium is installed.
 */
const MISSING = browserTestsSkipped();
const OUT = testOutputDir();

const venue = dashboardVenue('ptv-dashboard-fit-');
let base = '';
let page: Page;
let battleId = '';

/** One REST call of the venue started for this file (`restCall`). */
const { call } = venue;

/** How far the panel `id` scrolls sideways: its content's width beyond its own, px (0: it fits). */
const overflow = (id: string): Promise<number> =>
  // A string, run in the page: the browser's globals are not the test's (Node's).
  page.evaluate(`(() => {
    const p = document.querySelector('[data-panel="${id}"]');
    return p.scrollWidth - p.clientWidth;
  })()`);

/** How far the whole page scrolls sideways, px. */
const pageOverflow = async (): Promise<number> => {
  const { scroll, client } = await pageWidths(page);
  return scroll - client;
};

describe.skipIf(MISSING !== undefined)('the dashboard’s tables on a laptop and a phone', () => {
  beforeAll(async () => {
    fs.mkdirSync(OUT, { recursive: true });
    base = await venue.start();
    const { token, jwt, key } = await registerViewer(call, 'Fit viewer');
    const order = (body: Record<string, string>) => call('POST', '/trade/order', key, body);
    // Wide figures, as a funded wallet shows them: a position of each kind of pair and orders of each type.
    for (const [symbol, quantity] of [
      ['BTCUSDT', '0.01234'],
      ['ETHUSDT', '0.5'],
    ] as const)
      await order({ symbol, side: 'buy', type: 'market', quantity });
    await order({ symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.01', price: '1000' });
    await order({
      symbol: 'ETHUSDT',
      side: 'sell',
      type: 'take_profit',
      quantity: '0.5',
      trigger_price: '99999',
    });
    await order({
      symbol: 'BTCUSDT',
      side: 'sell',
      type: 'stop_loss',
      quantity: '0.005',
      trigger_price: '1000',
    });
    const agents: { id: string; key: string }[] = [];
    for (const name of ['Trend follower with a long name', 'Mean reverter']) {
      const a = await call('POST', '/agents', jwt, { display_name: name });
      agents.push({ id: a.agent_id, key: a.api_key });
    }
    battleId = (await call('POST', '/battles', jwt, { name: 'Fit duel', battle_mode: 'live' })).battle_id;
    for (const a of agents) await call('POST', `/battles/${battleId}/participants`, jwt, { agent_id: a.id });
    await call('POST', `/battles/${battleId}/start`, jwt);
    await call(
      'POST',
      '/trade/order',
      { 'x-api-key': agents[0]!.key },
      { symbol: 'ETHUSDT', side: 'buy', type: 'market', quantity: '0.1' },
    );
    ({ browser: venue.browser, page } = await openViewer(token));
  }, 180_000);

  afterAll(() => venue.close(), 60_000);

  for (const [width, height] of [
    [1280, 800],
    [390, 844],
  ] as const) {
    it(`fits the positions, open orders and live leaderboard at ${width} px`, async () => {
      await page.setViewportSize({ width, height });
      await page.goto(`${base}/#/overview`);
      await page.locator('[data-panel="positions"] [data-position="ETHUSDT"]').waitFor();
      await page.locator('[data-panel="orders"] [data-order]').nth(2).waitFor();
      await page.screenshot({ path: path.join(OUT, `fit-overview-${width}.png`), fullPage: true });
      expect(await pageOverflow()).toBe(0);
      const scrolls: Record<string, number> = {
        positions: await overflow('positions'),
        orders: await overflow('orders'),
      };

      await page.goto(`${base}/#/battles`);
      await page.locator(`[data-battle="${battleId}"] a`).click();
      await page.locator('[data-testid="rankings"] [data-agent]').nth(1).waitFor();
      await page.screenshot({ path: path.join(OUT, `fit-battle-${width}.png`), fullPage: true });
      expect(await pageOverflow()).toBe(0);
      scrolls.leaderboard = await overflow('leaderboard');
      // At 1280 px nothing scrolls inside its panel; at 390 px a table may (the page itself never does).
      if (width >= 1280) expect(scrolls).toEqual({ positions: 0, orders: 0, leaderboard: 0 });
    }, 60_000);
  }
});
