import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  consumeRateLimit,
  type RateLimitDecision,
  type RateLimitGroup,
  rateLimitExceeded,
} from '../application/rate-limits';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The rate-limit group of the route (default `general`). */
    rateLimitGroup?: RateLimitGroup;
  }
}

const groupOf = (request: FastifyRequest): RateLimitGroup =>
  request.routeOptions.config?.rateLimitGroup ?? 'general';

/** The spec's headers (spec "Errors" / "Limits"): limit, remaining, and the window's end as a Unix time (s). */
const presentDecision = (reply: FastifyReply, d: RateLimitDecision): void => {
  reply.header('x-ratelimit-limit', d.limit);
  reply.header('x-ratelimit-remaining', d.remaining);
  reply.header('x-ratelimit-reset', Math.ceil(d.resetAt / 1000));
  if (!d.allowed) reply.header('retry-after', d.retryAfterSeconds);
};

/**
 * The REST door of the venue's one rate limiter (`src/application/rate-limits.ts`), for every request of `app`
 * (call inside the `/api/v1` scope, before any other hook): the spec's `X-RateLimit-*` headers on every response
 * and 429 `RATE_LIMIT_EXCEEDED` with `Retry-After`. A request with a credential counts against its wallet owner's
 * budget (`services.rateLimitIdentity`, the auth capability: the same owner whichever credential); one without, or
 * an auth route, per client IP.
 *
 * It runs as the scope's first `onRequest` hook: before authentication, so a request refused with 401 still carries
 * the headers and counts (per client IP, which bounds credential guessing), and so does an unknown route once the
 * scope's not-found handler is set (see `buildApp`).
 */
export const registerRateLimit = async (app: FastifyInstance): Promise<void> => {
  app.addHook('onRequest', async (request, reply) => {
    const group = groupOf(request);
    const identity =
      group === 'auth'
        ? undefined
        : await app.services.rateLimitIdentity?.(request, request.routeOptions.config?.auth);
    const decision = await consumeRateLimit(app.services, identity ?? `ip:${request.ip}`, group);
    presentDecision(reply, decision);
    if (!decision.allowed) throw rateLimitExceeded(decision);
  });
};
