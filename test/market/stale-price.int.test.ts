import { describe, expect, it } from 'vitest';
import { keyHeader, registerAccount } from '../accounts/support';
import { call, fails, ok } from '../support/api-calls';
import { operatorHeadersOf } from '../support/runtime';
import { until } from '../support/until';
import { orderBody } from '../trading/key-calls';
import { RECORDED, useFakeBinance } from './fake-binance';

/**
 * No trading on stale prices (issue 21, item 4; docs/trading-rules.md "Stale prices"): the `binance` source
 * against a local stand-in whose stream goes silent. Past MAX_PRICE_AGE_MS a market order is refused with the
 * feed's age and changes nothing, `/market/price` and `/health` say so, a marketable limit order rests instead of
 * filling at the old price, and the first fresh trade lets both fill again.
 */
const MAX_AGE_MS = 1500;
const fx = useFakeBinance('ptv-stale-');

let tradeId = Number(RECORDED.trade.data['t']);
/** A new trade of BTCUSDT at `price`, now: what Binance's stream would send next. */
const trade = (price: string) => ({
  ...RECORDED.trade,
  data: { ...RECORDED.trade.data, t: ++tradeId, p: price, T: Date.now(), E: Date.now() },
});

describe('stale prices on the live binance source', () => {
  it('refuses market orders and holds resting ones while the feed is silent, then trades again', async () => {
    const { runtime, app } = await fx.startVenue({
      MAX_PRICE_AGE_MS: String(MAX_AGE_MS),
      // The point is when orders may fill, not how much: the fake feed's few trades make a thin `realistic` book,
      // so the wallet opens `instant` (fill in full) explicitly.
      FILL_MODEL: 'instant',
    });
    const market = runtime.services.market!;
    try {
      await until(() => market.feed.prices.get('BTCUSDT') !== undefined);
      const account = await registerAccount(app, {}, { plain: true });
      const headers = keyHeader(account.apiKey);
      /** An order the venue takes (201), its answer. */
      const placed = (body: Record<string, unknown>) => ok(app, headers, 'POST', '/trade/order', body, 201);

      // Fresh: a market buy fills.
      fx.fake.broadcast(trade('100000.00'));
      await until(() => market.feed.prices.get('BTCUSDT')?.price === '100000.00000000');
      const bought = await placed(orderBody('BTCUSDT', 'buy', 'market', '0.01'));
      expect(bought.status).toBe('filled');
      const fresh = await ok(app, {}, 'GET', '/market/price/BTCUSDT');
      expect(fresh).not.toHaveProperty('stale');

      // Silent past the limit.
      await until(() => market.staleness() !== undefined);
      const balanceBefore = await ok(app, headers, 'GET', '/account/balance');
      const refused = await fails(app, headers, 'POST', '/trade/order', 503, 'PRICE_NOT_AVAILABLE', {
        symbol: 'BTCUSDT',
        side: 'sell',
        type: 'market',
        quantity: '0.005',
      });
      expect(refused.message).toMatch(/stale/);
      expect(refused.details).toMatchObject({ symbol: 'BTCUSDT', max_price_age_ms: MAX_AGE_MS });
      expect(refused.details!['price_age_ms']).toBeGreaterThan(MAX_AGE_MS);
      expect(await ok(app, headers, 'GET', '/account/balance')).toEqual(balanceBefore);

      const price = await ok(app, {}, 'GET', '/market/price/BTCUSDT');
      expect(price).toMatchObject({ symbol: 'BTCUSDT', price: '100000.00000000', stale: true });
      expect(price.price_age_ms).toBeGreaterThan(MAX_AGE_MS);
      const health = (
        await app.inject({ method: 'GET', url: '/health', headers: operatorHeadersOf(app) })
      ).json();
      expect(health.checks.market_feed).toMatchObject({ prices_stale: true, max_price_age_ms: MAX_AGE_MS });
      expect(health.checks.market_feed.feed_lag_ms).toBeGreaterThan(MAX_AGE_MS);

      // A limit buy through the old price rests: it would have filled at once on a fresh feed.
      const limit = await placed(orderBody('BTCUSDT', 'buy', 'limit', '0.01', { price: '100500.00' }));
      expect(limit.status).toBe('pending');
      await new Promise((r) => setTimeout(r, 300));
      expect((await ok(app, headers, 'GET', `/trade/order/${limit.order_id}`)).status).toBe('pending');

      // The feed comes back: the resting order fills on the fresh trade, market orders are taken again.
      fx.fake.broadcast(trade('100200.00'));
      await until(async () => {
        const r = await call(app, headers, 'GET', `/trade/order/${limit.order_id}`);
        return r.body.status === 'filled';
      });
      expect(market.staleness()).toBeUndefined();
      const sold = await placed(orderBody('BTCUSDT', 'sell', 'market', '0.005'));
      expect(sold.status).toBe('filled');
    } finally {
      await app.close();
      await runtime.close();
    }
  }, 120_000);
});
