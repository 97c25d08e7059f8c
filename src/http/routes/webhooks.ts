import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../../contract/common';
import {
  createWebhookBody,
  deliveriesQuery,
  updateWebhookBody,
  webhookIdParams,
} from '../../contract/webhooks';
import { webhookEndpoints as ep } from '../../endpoints/webhooks';
import { callOf } from '../call';
import { routeGroup } from './route-options';

/** JWT or API key (account or agent: docs/webhooks.md, "Who manages which webhooks"); rate group `management`. */
const route = routeGroup('webhooks', { auth: 'key-or-jwt', rateLimitGroup: 'management' });

/**
 * The webhook endpoints (issue 17, item 11; docs/webhooks.md): register, list, get, update, delete, test and the
 * deliveries of one webhook. Each serves its endpoint of `src/endpoints/webhooks.ts`.
 */
export const webhookRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/webhooks',
    route('Register a webhook: a URL and the event types it receives; the signing secret is shown once', {
      body: createWebhookBody,
      response: { 201: ep.create.output, ...errorResponses(401, 403, 422, 429) },
    }),
    async (request, reply) => reply.status(201).send(await ep.create.run(callOf(request), request.body)),
  );

  app.get(
    '/webhooks',
    route("The caller's webhooks, oldest first (no secrets)", {
      response: { 200: ep.list.output, ...errorResponses(401, 403, 429) },
    }),
    async (request) => ep.list.run(callOf(request), {}),
  );

  app.get(
    '/webhooks/:webhook_id',
    route('One webhook', {
      params: webhookIdParams,
      response: { 200: ep.get.output, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => ep.get.run(callOf(request), request.params),
  );

  app.put(
    '/webhooks/:webhook_id',
    route('Change a webhook: URL, event types, description, active (only the fields sent)', {
      params: webhookIdParams,
      body: updateWebhookBody,
      response: { 200: ep.update.output, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => ep.update.run(callOf(request), { ...request.params, ...request.body }),
  );

  app.delete(
    '/webhooks/:webhook_id',
    route('Delete a webhook: no delivery from then on, pending ones dropped', {
      params: webhookIdParams,
      response: { 204: z.null().describe('no body'), ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request, reply) => {
      await ep.delete.run(callOf(request), request.params);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/webhooks/:webhook_id/test',
    route('Send a signed `webhook.test` delivery to the webhook (listed with its deliveries)', {
      params: webhookIdParams,
      response: { 202: ep.test.output, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request, reply) => reply.status(202).send(await ep.test.run(callOf(request), request.params)),
  );

  app.get(
    '/webhooks/:webhook_id/deliveries',
    route("A webhook's deliveries, newest first: status, attempts, next attempt, last error", {
      params: webhookIdParams,
      querystring: deliveriesQuery,
      response: { 200: ep.deliveries.output, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => ep.deliveries.run(callOf(request), { ...request.params, ...request.query }),
  );
};
