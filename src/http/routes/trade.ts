import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { rejectionError } from '../../../commands/wallet';
import { normalizeSymbol } from '../../../domain/market/pair';
import { DomainError, isDomainError } from '../../../domain/shared/errors';
import { dec, fmt, parseDecimal, ZERO } from '../../../domain/trading/decimal';
import { getOrder, listOrders, listTrades, OPEN_STATUSES } from '../../../queries/trading';
import { ownerIdOf, type Principal, principalOf } from '../../auth/principal';
import { errorResponses } from '../../contract/common';
import {
  cancelAllResponse,
  cancelResponse,
  filledOrderResponse,
  historyQuery,
  historyResponse,
  idempotencyHeaders,
  listOrdersQuery,
  openOrdersQuery,
  orderIdParams,
  orderListResponse,
  orderResponse,
  pendingOrderResponse,
  placeOrderBody,
} from '../../contract/trading';
import { trading } from '../../trading/install';
import { decimalText, orderOut, outcomeBody, tradeOut } from '../../trading/present';
import { acknowledgeTradeWrite } from '../read-your-writes';
import { addServerTiming } from '../server-timing';

const security: Record<string, string[]>[] = [{ apiKey: [] }, { bearer: [] }];
const tags = ['trade'];
const read = { auth: 'key-or-jwt' } as const;
/**
 * Placement and cancels share the order limit (spec "Limits": 100 per minute, combined). They decide from the
 * wallet's stream, so they need not wait for the caller's earlier writes to be folded (`awaitOwnWrites`).
 */
const write = { auth: 'key-or-jwt', rateLimitGroup: 'orders', awaitOwnWrites: false } as const;

/** The `{order_id}` of the path: ids are lower-case UUIDs, and a UUID is case-insensitive (RFC 9562). */
const orderIdOf = (params: { order_id: string }): string => params.order_id.trim().toLowerCase();

const ownerOf = (p: Principal) => ({ accountId: p.accountId, agentId: p.agentId ?? null });

/**
 * `ORDER_NOT_FOUND` 404 saying which wallet was searched: an account key (or a JWT without `X-Agent-Id`) reads the
 * account's own wallet, so an agent's order is not found there, and the message says where it is.
 */
const orderNotFound = (p: Principal, orderId: string): DomainError =>
  new DomainError(
    'ORDER_NOT_FOUND',
    p.agentId
      ? `order not found in this agent's wallet (the account's own orders are under the account's API key, or a JWT without X-Agent-Id)`
      : `order not found in the account's own wallet (an agent's orders are under the agent's API key, or a JWT with X-Agent-Id)`,
    { order_id: orderId },
  );
const meta = (p: Principal, requestId: string) => ({ actor: ownerIdOf(p), requestId });

/** A decimal of the order in canonical form (`"0.00100"`, `".001"` and `0.001` are one value), else as sent. */
const canonicalDecimal = (v: string | null): string | null => {
  const parsed = v == null ? undefined : parseDecimal(v);
  return parsed ? parsed.toFixed() : v;
};

/**
 * SHA-256 of the canonical order body: the same key with another body is a conflict. Canonical: the symbol in
 * upper case and the decimals by value, so a retry that spells the same order differently is still a replay.
 */
const requestHash = (o: {
  symbol: string;
  side: string;
  type: string;
  quantity: string;
  price: string | null;
  triggerPrice: string | null;
}): string =>
  createHash('sha256')
    .update(
      JSON.stringify({
        ...o,
        quantity: canonicalDecimal(o.quantity),
        price: canonicalDecimal(o.price),
        triggerPrice: canonicalDecimal(o.triggerPrice),
      }),
    )
    .digest('hex');

/**
 * Trading endpoints (spec "Trading endpoints"; ARCHITECTURE §8). Every figure is scoped to the caller's wallet:
 * the agent's with an agent key or `X-Agent-Id`, else the account's. Commands answer once their events are
 * durable and the caller's next request reads them (read your writes, `READ_YOUR_WRITES`); an order of another
 * owner is `ORDER_NOT_FOUND`.
 */
export const tradeRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = () => app.services.database.db;

  app.post(
    '/trade/order',
    {
      config: write,
      schema: {
        tags,
        security,
        summary:
          'Place an order: market orders fill at once, limit/stop_loss/take_profit wait with collateral locked',
        description:
          'Passes the 8-step risk chain (docs/trading-rules.md); a rejection is recorded (status `rejected`) and ' +
          'answered with the error of the failing rule (`details.rule`). `Idempotency-Key` (scoped to the wallet, ' +
          'whichever credential sends it): the same key and body within 24 h return the original response; another ' +
          'body gives 409 `CONFLICT`.',
        headers: idempotencyHeaders,
        body: placeOrderBody,
        response: {
          201: z.union([filledOrderResponse, pendingOrderResponse]),
          ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      addServerTiming(reply, 'handler', reply.elapsedTime);
      const principal = principalOf(request);
      const b = request.body;
      const order = {
        symbol: normalizeSymbol(b.symbol),
        side: b.side,
        type: b.type,
        quantity: decimalText(b.quantity),
        price: b.price == null ? null : decimalText(b.price),
        triggerPrice: b.trigger_price == null ? null : decimalText(b.trigger_price),
      };
      const key = request.headers['idempotency-key'];
      const idempotency = key
        ? {
            key,
            scope: `wallet:${ownerIdOf(principal)}`,
            requestHash: requestHash(order),
          }
        : undefined;
      const commandStarted = performance.now();
      const outcome = await trading(app.services).wallets.placeOrder(
        ownerOf(principal),
        order,
        meta(principal, request.id),
        idempotency,
      );
      addServerTiming(reply, 'command', performance.now() - commandStarted);
      if (outcome.kind === 'replayed') {
        reply.header('idempotent-replayed', 'true');
        if (outcome.original?.kind === 'rejected') throw outcome.original.error;
        if (outcome.row?.status === 'rejected') {
          const r = outcome.row;
          throw rejectionError({
            code: r.reject_code as never,
            message: r.reject_message ?? '',
            details: (r.reject_details as Record<string, unknown>) ?? {},
            order_id: r.order_id,
          });
        }
      } else {
        await acknowledgeTradeWrite(app.services, reply, principal, outcome.position);
        if (outcome.kind === 'rejected') throw outcome.error;
      }
      const body = outcomeBody(outcome);
      if (!body) throw new DomainError('INTERNAL_ERROR', 'order outcome without a placement');
      return reply.status(201).send(body);
    },
  );

  app.get(
    '/trade/order/:order_id',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'One order of the caller',
        params: orderIdParams,
        response: { 200: orderResponse, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const ownerId = ownerIdOf(principal);
      const orderId = orderIdOf(request.params);
      const row = await getOrder(db(), ownerId, orderId);
      if (!row) throw orderNotFound(principal, orderId);
      return orderOut(row);
    },
  );

  app.get(
    '/trade/orders',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'Orders of the caller, newest first (filter by status and symbol)',
        querystring: listOrdersQuery,
        response: { 200: orderListResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const q = request.query;
      const page = await listOrders(db(), ownerIdOf(principal), {
        ...(q.status ? { statuses: [q.status] } : {}),
        ...(q.symbol ? { symbol: normalizeSymbol(q.symbol) } : {}),
        limit: q.limit,
        offset: q.offset,
      });
      return { orders: page.rows.map(orderOut), total: page.total, limit: q.limit, offset: q.offset };
    },
  );

  app.get(
    '/trade/orders/open',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'Pending and partially filled orders of the caller, newest first (filter by symbol)',
        querystring: openOrdersQuery,
        response: { 200: orderListResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const q = request.query;
      const page = await listOrders(db(), ownerIdOf(principal), {
        statuses: OPEN_STATUSES,
        ...(q.symbol ? { symbol: normalizeSymbol(q.symbol) } : {}),
        limit: q.limit,
        offset: q.offset,
      });
      return { orders: page.rows.map(orderOut), total: page.total, limit: q.limit, offset: q.offset };
    },
  );

  app.delete(
    '/trade/order/:order_id',
    {
      config: write,
      schema: {
        tags,
        security,
        summary: 'Cancel one open order; its whole lock is released',
        params: orderIdParams,
        response: { 200: cancelResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const orderId = orderIdOf(request.params);
      const outcome = await trading(app.services)
        .wallets.cancelOrder(ownerOf(principal), orderId, meta(principal, request.id))
        .catch((error: unknown) => {
          throw isDomainError(error) && error.code === 'ORDER_NOT_FOUND'
            ? orderNotFound(principal, orderId)
            : error;
        });
      await acknowledgeTradeWrite(app.services, reply, principal, outcome.position);
      const c = outcome.cancelled;
      return {
        order_id: c.order_id,
        status: 'cancelled' as const,
        unlocked_amount: c.unlocked_amount,
        unlocked_asset: c.unlocked_asset,
        cancelled_at: c.cancelled_at,
      };
    },
  );

  app.delete(
    '/trade/orders/open',
    {
      config: write,
      schema: {
        tags,
        security,
        summary: 'Cancel every open order of the caller atomically (one append)',
        response: { 200: cancelAllResponse, ...errorResponses(401, 403, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const outcome = await trading(app.services).wallets.cancelAll(
        ownerOf(principal),
        meta(principal, request.id),
      );
      await acknowledgeTradeWrite(app.services, reply, principal, outcome.position);
      const unlocked = new Map<string, ReturnType<typeof dec>>();
      for (const c of outcome.cancelled) {
        unlocked.set(c.unlocked_asset, (unlocked.get(c.unlocked_asset) ?? ZERO).plus(c.unlocked_amount));
      }
      return {
        cancelled_count: outcome.cancelled.length,
        total_unlocked: fmt(unlocked.get('USDT') ?? dec(0)),
        unlocked: Object.fromEntries([...unlocked].map(([asset, v]) => [asset, fmt(v)])),
      };
    },
  );

  app.get(
    '/trade/history',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'Executed fills of the caller, newest first',
        querystring: historyQuery,
        response: { 200: historyResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const q = request.query;
      const page = await listTrades(db(), ownerIdOf(principal), {
        ...(q.symbol ? { symbol: normalizeSymbol(q.symbol) } : {}),
        ...(q.side ? { side: q.side } : {}),
        limit: q.limit,
        offset: q.offset,
      });
      return { trades: page.rows.map(tradeOut), total: page.total, limit: q.limit, offset: q.offset };
    },
  );
};
