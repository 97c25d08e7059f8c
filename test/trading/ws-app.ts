import { afterAll, beforeAll, expect } from 'vitest';
import { type api, keyHeader, startApp, type TestApp } from '../accounts/support';
import { lateBound } from '../support/late-bound';
import { priceTicker } from '../support/price-ticks';
import { connectWs } from '../support/ws-client';
import { marketBuy } from './key-calls';

/** The real stack listening on a free port, for the private WebSocket channels' tests. */
export interface ListeningTradingApp {
  t: TestApp;
  /** `ws://127.0.0.1:<port>`: the base of `/ws/v1`. */
  base: string;
  /** Publishes a price tick into the market feed (see `priceTicker`). */
  tick: (symbol: string, price: string, quantity?: string) => void;
  /** Places a market buy of `quantity` BTC with `apiKey` over HTTP (`inject`). */
  buy: (apiKey: string, quantity: string) => ReturnType<typeof api>;
  /** Subscribes to a private `channel` on a socket with no credential, expects INVALID_API_KEY and closes it. */
  expectRefusedWithoutCredential: (channel: string) => Promise<void>;
}

/**
 * Starts the real stack (PGlite, or PostgreSQL with DATABASE_URL) on the synthetic source walking SOLUSDT only,
 * listening on 127.0.0.1, with BTCUSDT at 40,000 USDT and 10,000 BTC of 24h volume (minimum slippage), so
 * BTCUSDT moves only when a test ticks it. Close it with `t.close()`.
 */
export const startListeningTradingApp = async (): Promise<ListeningTradingApp> => {
  // The channels' tests are about what is pushed when: wallets open `instant` (fill in full) explicitly.
  const t = await startApp({
    env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT', FILL_MODEL: 'instant' },
  });
  const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const tick = priceTicker(() => t.app.services.market!);
  tick('BTCUSDT', '40000', '10000');
  const base = address.replace('http', 'ws');
  return {
    t,
    base,
    tick,
    buy: (apiKey, quantity) => marketBuy(t.app, keyHeader(apiKey), quantity),
    expectRefusedWithoutCredential: async (channel) => {
      const anonymous = await connectWs(base);
      anonymous.send({ action: 'subscribe', channel });
      expect((await anonymous.next((m) => m.type === 'error')).data).toMatchObject({
        code: 'INVALID_API_KEY',
        channel,
      });
      anonymous.ws.close();
    },
  };
};

/**
 * The {@link startListeningTradingApp} of one test file, started in a `beforeAll` registered by this call and
 * closed in an `afterAll`. `t`, `tick` and `buy` may be destructured at the file's top level (they reach the app
 * when called); `base` is read inside hooks and tests only, once the app listens.
 */
export const useListeningTradingApp = (): ListeningTradingApp => {
  let started: ListeningTradingApp | undefined;
  beforeAll(async () => {
    started = await startListeningTradingApp();
  });
  afterAll(async () => {
    await started?.t.close();
  });
  const what = 'the listening trading app';
  const app = lateBound(what, () => started);
  return lateBound(what, () => started, {
    t: lateBound(what, () => started?.t),
    tick: (symbol: string, price: string, quantity?: string) => app.tick(symbol, price, quantity),
    buy: (apiKey: string, quantity: string) => app.buy(apiKey, quantity),
  });
};
