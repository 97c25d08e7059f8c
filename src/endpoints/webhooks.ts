import { z } from 'zod';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  testWebhook,
  updateWebhook,
} from '../application/webhooks';
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
} from '../contract/webhooks';
import { endpoint } from './endpoint';

/**
 * The webhook endpoints (docs/webhooks.md): `/webhooks/*` and the webhooks MCP toolset serve these. Each parses
 * into its use case of `src/application/webhooks.ts` and presents with `src/contract/webhooks.ts`.
 */
export const webhookEndpoints = {
  create: endpoint({
    route: { method: 'POST', path: '/webhooks', status: 201, body: createWebhookBody },
    input: createWebhookBody,
    output: createdWebhookResponse,
    run: async (call, b) => {
      const created = await createWebhook(call, webhookInputOf(b));
      return { ...webhookOut(created.webhook), secret: created.secret };
    },
  }),
  list: endpoint({
    route: { method: 'GET', path: '/webhooks' },
    input: z.object({}),
    output: webhookListResponse,
    run: async (call) => {
      const webhooks = await listWebhooks(call);
      return { webhooks: webhooks.map(webhookOut), total: webhooks.length };
    },
  }),
  get: endpoint({
    route: { method: 'GET', path: '/webhooks/:webhook_id', params: webhookIdParams },
    input: webhookIdParams,
    output: webhookResponse,
    run: async (call, a) => webhookOut(await getWebhook(call, a.webhook_id)),
  }),
  update: endpoint({
    route: {
      method: 'PUT',
      path: '/webhooks/:webhook_id',
      params: webhookIdParams,
      body: updateWebhookBody,
    },
    input: webhookIdParams.extend(updateWebhookBody.shape).strict(),
    output: webhookResponse,
    run: async (call, a) => {
      const { webhook_id: id, ...b } = a;
      return webhookOut(await updateWebhook(call, id, webhookChangesOf(b)));
    },
  }),
  /** The REST door answers 204 with no body; the MCP tool this confirmation. */
  delete: endpoint({
    route: { method: 'DELETE', path: '/webhooks/:webhook_id', status: 204, params: webhookIdParams },
    input: webhookIdParams,
    output: z.object({ webhook_id: z.string(), deleted: z.literal(true) }),
    run: async (call, a) => {
      await deleteWebhook(call, a.webhook_id);
      return { webhook_id: a.webhook_id, deleted: true as const };
    },
  }),
  test: endpoint({
    route: { method: 'POST', path: '/webhooks/:webhook_id/test', status: 202, params: webhookIdParams },
    input: webhookIdParams,
    output: testDeliveryResponse,
    run: async (call, a) => testDeliveryOut(await testWebhook(call, a.webhook_id)),
  }),
  deliveries: endpoint({
    route: {
      method: 'GET',
      path: '/webhooks/:webhook_id/deliveries',
      params: webhookIdParams,
      querystring: deliveriesQuery,
    },
    input: webhookIdParams.extend(deliveriesQuery.shape),
    output: deliveryListResponse,
    run: async (call, a) => {
      const page = await listWebhookDeliveries(call, a.webhook_id, deliveriesRequestOf(a));
      return { deliveries: page.deliveries.map(deliveryOut), total: page.total };
    },
  }),
};
