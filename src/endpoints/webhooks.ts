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
import { deletion, served } from './endpoint';

/**
 * The webhook endpoints (docs/webhooks.md): `/webhooks/*` and the webhooks MCP toolset serve these. Each parses
 * into its use case of `src/application/webhooks.ts` and presents with `src/contract/webhooks.ts`.
 */
export const webhookEndpoints = {
  create: served(
    { method: 'POST', path: '/webhooks', status: 201, body: createWebhookBody },
    createdWebhookResponse,
    async (call, b) => {
      const created = await createWebhook(call, webhookInputOf(b));
      return { ...webhookOut(created.webhook), secret: created.secret };
    },
  ),
  list: served({ method: 'GET', path: '/webhooks' }, webhookListResponse, async (call) => {
    const webhooks = await listWebhooks(call);
    return { webhooks: webhooks.map(webhookOut), total: webhooks.length };
  }),
  get: served(
    { method: 'GET', path: '/webhooks/:webhook_id', params: webhookIdParams },
    webhookResponse,
    async (call, a) => webhookOut(await getWebhook(call, a.webhook_id)),
  ),
  update: served(
    { method: 'PUT', path: '/webhooks/:webhook_id', params: webhookIdParams, body: updateWebhookBody },
    webhookResponse,
    async (call, { webhook_id: id, ...b }) => webhookOut(await updateWebhook(call, id, webhookChangesOf(b))),
    { strict: true },
  ),
  /** The REST door answers 204 with no body; the MCP tool this confirmation. */
  delete: deletion('/webhooks/:webhook_id', webhookIdParams, 'webhook_id', deleteWebhook),
  test: served(
    { method: 'POST', path: '/webhooks/:webhook_id/test', status: 202, params: webhookIdParams },
    testDeliveryResponse,
    async (call, a) => testDeliveryOut(await testWebhook(call, a.webhook_id)),
  ),
  deliveries: served(
    {
      method: 'GET',
      path: '/webhooks/:webhook_id/deliveries',
      params: webhookIdParams,
      querystring: deliveriesQuery,
    },
    deliveryListResponse,
    async (call, a) => {
      const page = await listWebhookDeliveries(call, a.webhook_id, deliveriesRequestOf(a));
      return { deliveries: page.deliveries.map(deliveryOut), total: page.total };
    },
  ),
};
