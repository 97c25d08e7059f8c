import ccxt, { type Exchange } from 'ccxt';
import { afterAll, beforeAll } from 'vitest';

/**
 * A `ccxt.pro.binance` pointed at the venue at `venueUrl` (REST, market streams and the WebSocket API), with the
 * account's or agent's credentials when given, its markets loaded. ccxt opens a plain `ws://` URL only through an
 * http agent it loads on request (its own message says so), so that is loaded first.
 */
export const connectProBinance = async (
  venueUrl: string,
  credentials?: { apiKey: string; secret: string },
): Promise<Exchange> => {
  const wsBase = venueUrl.replace('http://', 'ws://');
  const pro = new ccxt.pro.binance({
    ...credentials,
    enableRateLimit: false,
    urls: {
      api: {
        public: `${venueUrl}/binance/api/v3`,
        private: `${venueUrl}/binance/api/v3`,
        ws: { spot: `${wsBase}/binance/ws`, 'ws-api': { spot: `${wsBase}/binance/ws-api/v3` } },
      },
    },
    options: { fetchMarkets: { types: ['spot'] }, fetchCurrencies: false, fetchMargins: false },
  });
  await pro.loadHttpProxyAgent();
  await pro.loadMarkets();
  return pro;
};

/**
 * A `ccxt.pro.binance` for a whole test file: a `beforeAll` (3 min, after the file's earlier hooks such as the
 * venue's start) connects it to `venue.url` with the credentials `credentials()` answers (none when it is absent,
 * for the public streams), an `afterAll` closes its sockets. The answer reads the client, and throws when read
 * before the hook made it. An accessor rather than a proxy: ccxt's methods write to `this`.
 */
export const useProBinance = (
  venue: { readonly url: string },
  credentials?: () => Promise<{ apiKey: string; secret: string }>,
): (() => Exchange) => {
  let pro: Exchange | undefined;
  beforeAll(async () => {
    pro = await connectProBinance(venue.url, await credentials?.());
  }, 180_000);
  afterAll(async () => {
    await pro?.close();
  }, 60_000);
  return () => {
    if (!pro) throw new Error('the ccxt.pro client is read before its beforeAll connected it');
    return pro;
  };
};
