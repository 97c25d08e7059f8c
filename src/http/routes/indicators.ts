import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { availableIndicators, marketIndicators } from '../../application/indicators';
import { errorResponses } from '../../contract/common';
import { availableIndicatorsResponse, indicatorsQuery, indicatorsResponse } from '../../contract/indicators';
import { symbolParams } from '../../contract/market';
import { publicCallOf } from '../call';
import { routeGroup } from './route-options';

/** Public, in the `market` rate-limit group. */
const route = routeGroup('market', { rateLimitGroup: 'market' });

/**
 * Technical indicators over the venue's closed candles (issue 17, item 10; docs/market-data.md "Indicators"):
 * public like the rest of `/market/*`. Each parses, calls its use case in `src/application/indicators.ts`.
 */
export const indicatorRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/market/indicators/available',
    route('The indicators `/market/indicators/{symbol}` computes, their periods and outputs', {
      response: { 200: availableIndicatorsResponse, ...errorResponses(429) },
    }),
    async () => availableIndicators(),
  );

  app.get(
    '/market/indicators/:symbol',
    route('RSI, MACD, SMA, EMA, Bollinger Bands, ATR, VWAP of a pair at its newest closed candle', {
      description:
        'Computed over the newest `limit` candles of `interval` closed by now (with the `files` replay: by the ' +
        'replayed time), with the `trading-signals` library. A value is null until there are enough candles ' +
        'for it (`GET /market/indicators/available`: `required_candles`). Errors: `INVALID_SYMBOL` 400, ' +
        '`VALIDATION_ERROR` 422 (an unknown indicator or interval).',
      params: symbolParams,
      querystring: indicatorsQuery,
      response: { 200: indicatorsResponse, ...errorResponses(400, 422, 429, 503) },
    }),
    async (request) => marketIndicators(publicCallOf(request), request.params.symbol, request.query),
  );
};
