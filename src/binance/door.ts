import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDomainError } from '../../domain/shared/errors';
import { type Call, newCall, newPublicCall, type PublicCall } from '../application/call';
import {
  consumeRateLimit,
  RATE_LIMIT_GROUPS,
  type RateLimitDecision,
  type RateLimitGroup,
  rateLimitKeyOf,
} from '../application/rate-limits';
import type { Principal } from '../auth/principal';
import { databaseUnavailable } from '../db/connection-errors';
import { presentFailure } from '../http/errors';
import { BinanceError, CODES, type ErrorContext, toBinanceError } from './errors';
import { type BinanceParams, readParams } from './params';
import { authenticateApiKey, authenticateSigned } from './signed';

/**
 * The request plumbing of the Binance door: parameters, security (`NONE` or `SIGNED`), the venue's rate limiter
 * presented as Binance's headers, and Binance's error shape. Every endpoint is `handle(kind, group, context, fn)`.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** The raw `application/x-www-form-urlencoded` body of a Binance request ('' without one). */
    binanceBody?: string;
  }
}

/** What an endpoint's handler gets: its parameters, and for a `SIGNED` endpoint the call of the key's caller. */
export interface BinanceRequest {
  params: BinanceParams;
  request: FastifyRequest;
}
/** A `SIGNED` endpoint's request: the use-case call of the key's caller. */
export interface SignedRequest extends BinanceRequest {
  call: Call;
}

/**
 * The weight of one request of `group` against exchangeInfo's `REQUEST_WEIGHT` limit (the `market` group's budget,
 * 1,200 a minute): that limit divided by the group's own budget, so a group with a smaller budget weighs more (a
 * signed read 2 of 600, an order 12 of 100) and `X-MBX-USED-WEIGHT-1M` reaches the stated limit exactly when the
 * group's budget is spent. A client pacing itself on the header against the stated limit is never refused early.
 */
const requestWeightOf = (group: RateLimitGroup): number =>
  RATE_LIMIT_GROUPS.market / RATE_LIMIT_GROUPS[group];

/**
 * Presents a decision of the venue's one rate limiter (`src/application/rate-limits.ts`) as Binance's headers:
 * `X-MBX-USED-WEIGHT-1M` is the weight the caller used of the request's group this minute (its count times
 * {@link requestWeightOf}, at most the stated `REQUEST_WEIGHT`), and on order requests `X-MBX-ORDER-COUNT-1M` the
 * orders and cancels counted this minute. A refusal is -1003 (or -1015 for orders) 429 with `Retry-After`.
 */
const presentDecision = (reply: FastifyReply, d: RateLimitDecision): void => {
  const used = d.allowed ? d.limit - d.remaining : d.limit;
  const weight = Math.min(RATE_LIMIT_GROUPS.market, Math.ceil(used * requestWeightOf(d.group)));
  reply.header('x-mbx-used-weight-1m', String(weight));
  if (d.group === 'orders') reply.header('x-mbx-order-count-1m', String(used));
  if (!d.allowed) {
    throw d.group === 'orders'
      ? new BinanceError(
          CODES.TOO_MANY_ORDERS,
          `Too many new orders; current limit is ${d.limit} orders per MINUTE.`,
          429,
          d.retryAfterSeconds,
        )
      : new BinanceError(
          CODES.TOO_MANY_REQUESTS,
          `Too many requests; current limit of ${d.limit} requests per minute for the ${d.group} group. Please use the websocket for live updates to avoid polling the API.`,
          429,
          d.retryAfterSeconds,
        );
  }
};

/**
 * Sends a Binance error: `{code, msg}` with its HTTP status, `Retry-After` on a 429 (the limiter's wait) and on a
 * 503, logged as every HTTP door logs its failures (`presentFailure`: only a server fault at `error`).
 */
export const sendError = (reply: FastifyReply, error: unknown, context: ErrorContext): FastifyReply => {
  const e = toBinanceError(error, context);
  if (e.retryAfter !== undefined) reply.header('retry-after', String(e.retryAfter));
  presentFailure(
    reply.request,
    reply,
    {
      status: e.status,
      code: e.code,
      message: e.message,
      // A database error's details too (its `retry_after_seconds` heads `Retry-After`), as REST has them.
      details: (isDomainError(error) ? error : databaseUnavailable(error))?.details,
    },
    error,
  );
  return reply
    .status(e.status)
    .type('application/json; charset=utf-8')
    .send({ code: e.code, msg: e.message });
};

/** The API key of a Binance-door request (`X-MBX-APIKEY`; the first when repeated), undefined without one. */
export const apiKeyOf = (request: FastifyRequest): string | undefined => {
  const raw = request.headers['x-mbx-apikey'];
  return Array.isArray(raw) ? raw[0] : raw;
};

/**
 * An endpoint of `security` `NONE` (public market data: counted per client IP in `group`) or `SIGNED` (counted
 * against the key's wallet owner, the same budget as every other door). `context` tells the error mapping what a
 * domain error means here (an unknown order is -2011 on a cancel, -2013 on a query).
 */
export const publicEndpoint =
  (group: RateLimitGroup, fn: (r: BinanceRequest) => unknown | Promise<unknown>) =>
  async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      const params = readParams(request.url, request.binanceBody ?? '');
      presentDecision(reply, await consumeRateLimit(request.server.services, `ip:${request.ip}`, group));
      return reply.send(await fn({ params, request }));
    } catch (error) {
      return sendError(reply, error, 'read');
    }
  };

/**
 * An endpoint whose caller is authenticated from the request's parameters by `authenticate` and counted in `group`
 * against its wallet owner; a refused credential counts per client IP instead, which bounds guessing (as on the
 * REST door). Errors are answered in Binance's envelope for `context`.
 */
const authenticatedEndpoint =
  (
    group: RateLimitGroup,
    context: ErrorContext,
    authenticate: (
      publicCall: PublicCall,
      request: FastifyRequest,
      params: BinanceParams,
    ) => Promise<Principal>,
    fn: (r: SignedRequest) => unknown | Promise<unknown>,
  ) =>
  async (request: FastifyRequest, reply: FastifyReply) => {
    const services = request.server.services;
    try {
      const params = readParams(request.url, request.binanceBody ?? '');
      let call: Call;
      try {
        const principal = await authenticate(newPublicCall(services, request.id), request, params);
        call = newCall(services, principal, request.id);
      } catch (error) {
        presentDecision(reply, await consumeRateLimit(services, `ip:${request.ip}`, 'general'));
        throw error;
      }
      presentDecision(
        reply,
        await consumeRateLimit(services, rateLimitKeyOf(call.caller, request.ip), group),
      );
      return reply.send(await fn({ params, request, call }));
    } catch (error) {
      return sendError(reply, error, context);
    }
  };

/** A `SIGNED` endpoint (see {@link publicEndpoint}): the key in `X-MBX-APIKEY` and an HMAC signature of the parameters. */
export const signedEndpoint = (
  group: RateLimitGroup,
  context: ErrorContext,
  fn: (r: SignedRequest) => unknown | Promise<unknown>,
) =>
  authenticatedEndpoint(
    group,
    context,
    (publicCall, request, params) => authenticateSigned(publicCall, apiKeyOf(request), params),
    fn,
  );

/**
 * An endpoint of security `USER_STREAM` (Binance: the key in `X-MBX-APIKEY`, no signature; the user data stream's
 * listen keys): counted against the key's wallet owner in `group`. A refused key counts per client IP.
 */
export const apiKeyEndpoint = (group: RateLimitGroup, fn: (r: SignedRequest) => unknown | Promise<unknown>) =>
  authenticatedEndpoint(
    group,
    'read',
    (publicCall, request) => authenticateApiKey(publicCall, apiKeyOf(request)),
    fn,
  );

/**
 * Prepares a fastify scope for the Binance door: form bodies are read as text (kept for the signature and parsed
 * with the query string), JSON bodies are left to the parameters too, unknown routes and framework errors answer in
 * Binance's shape, no answer may be cached, and the routes stay out of the venue's OpenAPI document.
 */
export const prepareScope = (app: FastifyInstance): void => {
  // Binance's own documentation describes these endpoints; the venue's OpenAPI document (/docs) is /api/v1's.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    request.binanceBody = typeof body === 'string' ? body : body.toString('utf8');
    done(null, undefined);
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
  // An endpoint of Binance's the venue does not serve (`/order/cancelReplace`, `/myPreventedMatches`,
  // `/sapi/v1/asset/dust`, …) is Binance's -1020 "This operation is not supported.", which a client takes as final
  // (ccxt: BadRequest), not -1000, which it takes as a failure worth retrying (ccxt: OperationFailed).
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply.status(404),
      new BinanceError(
        CODES.UNSUPPORTED_OPERATION,
        `This operation is not supported. ${request.method} ${request.url.split('?')[0]} is not served by this venue (docs/binance-compatibility.md lists the endpoints it serves).`,
        404,
      ),
      'read',
    ),
  );
  app.setErrorHandler((error, _request, reply) => sendError(reply, error, 'read'));
};
