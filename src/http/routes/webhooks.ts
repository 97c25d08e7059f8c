import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  testWebhook,
  updateWebhook,
} from '../../application/webhooks';
import { errorResponses } from '../../contract/common';
import {
  createdWebhookResponse,
  createWebhookBody,
  deliveriesQuery,
  deliveriesRequestOf,
  deliveryListResponse,
  deliveryOut,
  testDeliveryOut,
  testDeliveryResponse,
  updateWebhookBody,
  webhookChangesOf,
  webhookIdParams,
  webhookInputOf,
  webhookListResponse,
  webhookOut,
  webhookResponse,
} from '../../contract/webhooks';
import { callOf } from '../call';

const security: Record<string, string[]>[] = [{ apiKey: [] }, { bearer: [] }];
const tags = ['webhooks'];
/** JWT or API key (account or agent: docs/webhooks.md, "Who manages which webhooks"); rate group `management`. */
const config = { auth: 'key-or-jwt', rateLimitGroup: 'management' } as const;

/**
 * The webhook endpoints (issue 17, item 11; docs/webhooks.md): register, list, get, update, delete, test and the
 * deliveries of one webhook. Each parses, calls its use case in `src/application/webhooks.ts` and presents.
 */
export const webhookRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/webhooks',
    {
      config,
      schema: {
        tags,
        security,
        summary:
          'Register a webhook: a URL and the event types it receives; the signing secret is shown once',
        body: createWebhookBody,
        response: { 201: createdWebhookResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request, reply) => {
      const created = await createWebhook(callOf(request), webhookInputOf(request.body));
      return reply.status(201).send({ ...webhookOut(created.webhook), secret: created.secret });
    },
  );

  app.get(
    '/webhooks',
    {
      config,
      schema: {
        tags,
        security,
        summary: "The caller's webhooks, oldest first (no secrets)",
        response: { 200: webhookListResponse, ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => {
      const webhooks = await listWebhooks(callOf(request));
      return { webhooks: webhooks.map(webhookOut), total: webhooks.length };
    },
  );

  app.get(
    '/webhooks/:webhook_id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'One webhook',
        params: webhookIdParams,
        response: { 200: webhookResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => webhookOut(await getWebhook(callOf(request), request.params.webhook_id)),
  );

  app.put(
    '/webhooks/:webhook_id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Change a webhook: URL, event types, description, active (only the fields sent)',
        params: webhookIdParams,
        body: updateWebhookBody,
        response: { 200: webhookResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) =>
      webhookOut(
        await updateWebhook(callOf(request), request.params.webhook_id, webhookChangesOf(request.body)),
      ),
  );

  app.delete(
    '/webhooks/:webhook_id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Delete a webhook: no delivery from then on, pending ones dropped',
        params: webhookIdParams,
        response: { 204: z.null().describe('no body'), ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request, reply) => {
      await deleteWebhook(callOf(request), request.params.webhook_id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/webhooks/:webhook_id/test',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Send a signed `webhook.test` delivery to the webhook (listed with its deliveries)',
        params: webhookIdParams,
        response: { 202: testDeliveryResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request, reply) =>
      reply.status(202).send(testDeliveryOut(await testWebhook(callOf(request), request.params.webhook_id))),
  );

  app.get(
    '/webhooks/:webhook_id/deliveries',
    {
      config,
      schema: {
        tags,
        security,
        summary: "A webhook's deliveries, newest first: status, attempts, next attempt, last error",
        params: webhookIdParams,
        querystring: deliveriesQuery,
        response: { 200: deliveryListResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => {
      const q = deliveriesRequestOf(request.query);
      const page = await listWebhookDeliveries(callOf(request), request.params.webhook_id, q);
      return { deliveries: page.deliveries.map(deliveryOut), total: page.total };
    },
  );
};
