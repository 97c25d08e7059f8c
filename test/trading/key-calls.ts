import type { FastifyInstance } from 'fastify';
import { api, keyHeader } from '../accounts/support';

/**
 * An order's body in the spec's field order: `symbol`, `side`, `type`, `quantity` (a decimal string, or a JSON
 * number where a test reads how numbers are parsed), then the type's own fields (`price`, `trigger_price`, …).
 */
export const orderBody = (
  symbol: string,
  side: string,
  type: string,
  quantity: string | number,
  more: Record<string, unknown> = {},
): Record<string, unknown> => ({ symbol, side, type, quantity, ...more });

/** `POST /trade/order` on `app` (through `inject`) with `headers` (a credential) and `payload` ({@link orderBody}). */
export const postOrder = (
  app: FastifyInstance,
  headers: Record<string, string>,
  payload: Record<string, unknown>,
) => api(app, { method: 'POST', url: '/trade/order', headers, payload });

/** A market buy of `quantity` (a decimal string) BTCUSDT on `app` with `headers` ({@link postOrder}). */
export const marketBuy = (app: FastifyInstance, headers: Record<string, string>, quantity: string) =>
  postOrder(app, headers, orderBody('BTCUSDT', 'buy', 'market', quantity));

/** A limit buy of `quantity` BTCUSDT at `price` (decimal strings) on `app` with `headers` ({@link postOrder}). */
export const limitBuy = (
  app: FastifyInstance,
  headers: Record<string, string>,
  quantity: string,
  price: string,
) => postOrder(app, headers, orderBody('BTCUSDT', 'buy', 'limit', quantity, { price }));

/**
 * The `/api/v1` calls a trading test makes with an API key (`X-API-Key`), through `inject` on the app `app()`
 * returns (a function: a test that restarts its app keeps using these). Each answers fastify's inject response.
 */
export const keyCalls = (app: () => FastifyInstance) => {
  /** `method url` with the key's headers (and `headers`), with `payload` as the JSON body when given. */
  const send = (
    key: string,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) =>
    api(app(), {
      method,
      url,
      headers: { ...keyHeader(key), ...headers },
      ...(payload !== undefined ? { payload } : {}),
    });
  return {
    send,
    /** `POST /trade/order` with `payload` (see {@link orderBody}). */
    order: (key: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
      send(key, 'POST', '/trade/order', payload, headers),
    /** `GET url`. */
    get: (key: string, url: string) => send(key, 'GET', url),
    /** `DELETE /trade/order/{orderId}`. */
    cancel: (key: string, orderId: string) => send(key, 'DELETE', `/trade/order/${orderId}`),
  };
};
