import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { tradingEndpoints as ep } from '../../endpoints/trading';
import { routeGroup, serve } from './route-options';

/** Reads settle the caller's own writes in their use case, into the read models they read. */
const read = routeGroup('trade', { auth: 'key-or-jwt' });
/**
 * Placement and cancels share the order limit (spec "Limits": 100 per minute, combined). They decide from the
 * wallet's stream, so they need not wait for the caller's earlier writes to be folded.
 */
const write = routeGroup('trade', { auth: 'key-or-jwt', rateLimitGroup: 'orders' });
/** The errors of a placement or its preview. */
const placementErrors = [400, 401, 403, 404, 409, 422, 429, 503];
/** The errors of a read of the caller's orders or fills. */
const listErrors = [401, 403, 422, 429];

/**
 * Trading endpoints (spec "Trading endpoints"; ARCHITECTURE §8): each serves its endpoint of
 * `src/endpoints/trading.ts`, which calls the use case in `src/application/trading.ts` (idempotency, read your
 * writes and ownership) and presents.
 */
export const tradeRoutes: FastifyPluginAsyncZod = async (app) => {
  serve(app, write, ep.place, {
    summary:
      'Place an order: market orders fill at once, limit/stop_loss/take_profit wait with collateral locked',
    description:
      'Passes the 8-step risk chain (docs/trading-rules.md); a rejection is recorded (status `rejected`) and ' +
      'answered with the error of the failing rule (`details.rule`). `Idempotency-Key` (scoped to the wallet, ' +
      'whichever credential sends it): the same key and body within 24 h return the original response; another ' +
      'body gives 409 `CONFLICT`.',
    errors: placementErrors,
    timed: true,
  });
  serve(app, write, ep.placeOco, {
    summary:
      'Place an OCO: a take-profit and a stop-loss of one quantity; the first to fill cancels the other',
    description:
      'Both legs pass the 8-step risk chain together and share one lock (a sell OCO locks its base quantity ' +
      'once). As soon as one leg starts to fill the other is cancelled in the same decision; cancelling either ' +
      'leg cancels both (docs/trading-rules.md, "Order lists: OCO and bracket"). `Idempotency-Key` as for ' +
      '`POST /trade/order`.',
    errors: placementErrors,
  });
  serve(app, read, ep.previewOco, {
    summary: 'What an OCO would do now (each leg, or the rule it breaks), without placing it',
    description:
      'Same body as `POST /trade/order/oco`. Runs the same guards, 8-step risk chain (both legs together, one ' +
      'lock) and pricing on the wallet as it is, offers each leg the current price as the matching engine ' +
      'would, and records nothing: 200 with each leg as `POST /trade/order/preview` answers an order, or the ' +
      'error the list would get.',
    errors: placementErrors,
  });
  serve(app, read, ep.preview, {
    summary: 'What an order would do now (its fill, or the rule it breaks), without placing it',
    description:
      'Same body as `POST /trade/order`. Runs the same guards, 8-step risk chain and pricing (live price, ' +
      'slippage, fee rate, risk profile) on the wallet as it is, and records nothing: 200 with the fill a ' +
      'market order would get or the lock a resting order would hold, or the error the order would get.',
    errors: placementErrors,
  });
  serve(app, read, ep.get, { summary: 'One order of the caller', errors: [401, 403, 404, 429] });
  serve(app, read, ep.list, {
    summary: 'Orders of the caller, newest first (filter by status, symbol and client_order_id)',
    errors: listErrors,
  });
  serve(app, read, ep.listOpen, {
    summary: 'Pending and partially filled orders of the caller, newest first (filter by symbol)',
    errors: listErrors,
  });
  serve(app, write, ep.cancel, {
    summary: 'Cancel one open order; its whole lock is released',
    errors: [401, 403, 404, 409, 429],
  });
  serve(app, write, ep.cancelAll, {
    summary: 'Cancel every open order of the caller atomically (one append)',
    errors: [401, 403, 429],
  });
  serve(app, read, ep.history, { summary: 'Executed fills of the caller, newest first', errors: listErrors });
};
