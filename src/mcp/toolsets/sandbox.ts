import type { z } from 'zod';
import type { cancelResponse, ocoResponse, placedOrderResponse } from '../../contract/trading';
import type { RoutedEndpoint } from '../../endpoints/endpoint';
import { defineTool, servesEndpoint, servesEndpointAs, type ToolDef, WRITE } from '../tool';

/** The endpoints of trading in a sandbox at virtual time: one order, an OCO, a cancel (either leg of an OCO too). */
interface SandboxTradingEndpoints<A extends z.ZodObject, B extends z.ZodObject, C extends z.ZodObject> {
  placeOrder: RoutedEndpoint<A, typeof placedOrderResponse>;
  placeOco: RoutedEndpoint<B, typeof ocoResponse>;
  cancelOrder: RoutedEndpoint<C, z.ZodObject<Pick<(typeof cancelResponse)['shape'], 'order_id'>>>;
}

/**
 * The sandbox trading tools of a virtual-time venue — a backtest's sandbox or a historical battle's participant
 * sandboxes — which trade under the live order rules and risk chain: `place_{prefix}_order` (answers `{ order }`),
 * `place_{prefix}_oco_order` (`{ oco }`) and `cancel_{prefix}_order`, each serving its endpoint as its REST route
 * does. `title` names the sandbox in the titles (`Place a {title} order`), `noun` in the one-line summaries;
 * `describe` holds each tool's description.
 */
export const sandboxTradingTools = <
  A extends z.ZodObject,
  B extends z.ZodObject,
  C extends z.ZodObject,
>(set: {
  common: Pick<ToolDef, 'toolset' | 'auth' | 'rateLimitGroup'>;
  prefix: string;
  ep: SandboxTradingEndpoints<A, B, C>;
  title: string;
  noun: string;
  describe: { order: string; oco: string; cancel: string };
}): ToolDef[] => [
  defineTool({
    ...set.common,
    name: `place_${set.prefix}_order`,
    title: `Place a ${set.title} order`,
    description: set.describe.order,
    ...servesEndpointAs('order', set.ep.placeOrder),
    annotations: WRITE,
    summary: (r) => `${set.noun} order ${r.order.order_id} ${r.order.status}`,
  }),
  defineTool({
    ...set.common,
    name: `place_${set.prefix}_oco_order`,
    title: `Place a ${set.title} OCO`,
    description: set.describe.oco,
    ...servesEndpointAs('oco', set.ep.placeOco),
    annotations: WRITE,
    summary: (r) => `${set.noun} OCO ${r.oco.order_list_id}: ${r.oco.orders.map((o) => o.status).join(', ')}`,
  }),
  defineTool({
    ...set.common,
    name: `cancel_${set.prefix}_order`,
    title: `Cancel a ${set.title} order`,
    description: set.describe.cancel,
    ...servesEndpoint(set.ep.cancelOrder),
    annotations: { ...WRITE, idempotentHint: true },
    summary: (r) => `${set.noun} order ${r.order_id} cancelled`,
  }),
];
