import { afterEach, describe, expect, it, vi } from 'vitest';
import { MarketStreamHub } from '../../src/binance/streams';
import { MarketFeed } from '../../src/market/feed';
import { feedOnlyMarket, priceTicker } from '../support/price-ticks';

/**
 * The Binance market stream hub over a real market feed (no source: the test ingests the ticks). A stream's
 * stopper is safe to call again: once a new subscription of the same stream has been made, the old stopper leaves
 * it followed (the hub's per-second flush still reaches it).
 */
let hub: MarketStreamHub | undefined;
afterEach(() => hub?.close());

describe('a market stream stopper called again', () => {
  it('leaves a later subscription of the same stream followed', async () => {
    const market = feedOnlyMarket(new MarketFeed());
    hub = new MarketStreamHub(market);
    const { name, stream } = hub.parse('BTCUSDT@miniTicker');
    const first: string[] = [];
    const second: string[] = [];
    const stopFirst = hub.listen(name, stream, (_, json) => first.push(json));
    stopFirst();
    const stopSecond = hub.listen(name, stream, (_, json) => second.push(json));
    stopFirst(); // again, once the stream's entry is the second subscription's
    priceTicker(() => market)('BTCUSDT', '100', '1');
    await vi.waitFor(() => expect(second).toHaveLength(1), { timeout: 3_000 });
    expect(JSON.parse(second[0]!)).toMatchObject({ e: '24hrMiniTicker', s: 'BTCUSDT', c: '100.00000000' });
    expect(first).toEqual([]);
    stopSecond();
  });
});
