import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { webhookEndpoints as ep } from '../../endpoints/webhooks';
import { routeGroup, serveAll } from './route-options';

/** JWT or API key (account or agent: docs/webhooks.md, "Who manages which webhooks"); rate group `management`. */
const route = routeGroup('webhooks', { auth: 'key-or-jwt', rateLimitGroup: 'management' });

/** The errors of a route on one webhook. */
const one = [401, 403, 404, 422, 429];

/**
 * The webhook endpoints (issue 17, item 11; docs/webhooks.md): register, list, get, update, delete, test and the
 * deliveries of one webhook. Each serves its endpoint of `src/endpoints/webhooks.ts`.
 */
export const webhookRoutes: FastifyPluginAsyncZod = async (app) => {
  serveAll(app, route, ep, one, {
    create: {
      summary: 'Register a webhook: a URL and the event types it receives; the signing secret is shown once',
      errors: [401, 403, 422, 429],
    },
    list: { summary: "The caller's webhooks, oldest first (no secrets)", errors: [401, 403, 429] },
    get: 'One webhook',
    update: 'Change a webhook: URL, event types, description, active (only the fields sent)',
    delete: 'Delete a webhook: no delivery from then on, pending ones dropped',
    test: 'Send a signed `webhook.test` delivery to the webhook (listed with its deliveries)',
    deliveries: "A webhook's deliveries, newest first: status, attempts, next attempt, last error",
  });
};
