import ccxt, { type Exchange } from 'ccxt';

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
