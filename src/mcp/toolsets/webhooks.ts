import { webhookEndpoints as ep } from '../../endpoints/webhooks';
import { DESTRUCTIVE, defineTool, READ, servesEndpoint, type ToolDef, WRITE } from '../tool';
import { confirmTrue } from './trading';

/**
 * Webhook tools (docs/webhooks.md): register a URL for the ledger's events, change, test and delete it, read its
 * deliveries. Key or JWT, as the routes (an agent key manages the agent's webhooks); the `management` rate-limit
 * group. Each serves its endpoint of `src/endpoints/webhooks.ts`, as `/webhooks/*` does.
 */

const common = { toolset: 'webhooks', auth: 'key-or-jwt', rateLimitGroup: 'management' } as const;
const read = { ...common, annotations: READ } as const;
const at = (id: string, rest = '') => `/webhooks/${encodeURIComponent(id)}${rest}`;

export const webhookTools: ToolDef[] = [
  defineTool({
    ...common,
    name: 'create_webhook',
    title: 'Register a webhook',
    description:
      'Registers an http(s) URL that receives signed POSTs of the given event_types (description, active ' +
      'optional). The answer holds the signing secret, shown only now. VALIDATION_ERROR (a private address, ' +
      'an unknown event type).',
    ...servesEndpoint(ep.create),
    annotations: WRITE,
    summary: (r) => `webhook ${r.webhook_id} for ${r.event_types.length} event types`,
  }),
  defineTool({
    ...read,
    name: 'list_webhooks',
    title: 'Webhooks',
    description: "The caller's webhooks, oldest first (no secrets; URLs and descriptions are user text).",
    ...servesEndpoint(ep.list),
    summary: (r) => `${r.total} webhooks`,
  }),
  defineTool({
    ...read,
    name: 'get_webhook',
    title: 'One webhook',
    description:
      'One webhook of the caller: URL, event types, active. NOT_FOUND for an unknown or another’s webhook.',
    ...servesEndpoint(ep.get),
    summary: (r) => `webhook ${r.webhook_id} ${r.active ? 'active' : 'inactive'}`,
  }),
  defineTool({
    ...common,
    name: 'update_webhook',
    title: 'Change a webhook',
    description:
      'Changes a webhook’s url, event_types, description or active (only the fields given); the secret stays.',
    ...servesEndpoint(ep.update),
    annotations: { ...WRITE, idempotentHint: true },
    summary: (r) => `webhook ${r.webhook_id} ${r.active ? 'active' : 'inactive'}`,
  }),
  defineTool({
    ...common,
    name: 'delete_webhook',
    title: 'Delete a webhook',
    description:
      'Deletes a webhook: no delivery from then on, pending ones dropped. Destructive: needs confirm: true.',
    ...servesEndpoint(ep.delete),
    input: ep.delete.input.extend({ confirm: confirmTrue }).strict(),
    annotations: DESTRUCTIVE,
    rest: async (a, http) => {
      await http({ method: 'DELETE', path: at(a.webhook_id) });
      return { webhook_id: a.webhook_id, deleted: true as const };
    },
    summary: (r) => `webhook ${r.webhook_id} deleted`,
  }),
  defineTool({
    ...common,
    name: 'test_webhook',
    title: 'Test a webhook',
    description:
      'Queues a signed webhook.test delivery to the webhook; follow it with list_webhook_deliveries.',
    ...servesEndpoint(ep.test),
    annotations: WRITE,
    summary: (r) => `test delivery ${r.delivery_id} ${r.status}`,
  }),
  defineTool({
    ...read,
    name: 'list_webhook_deliveries',
    title: 'Webhook deliveries',
    description:
      "A webhook's deliveries, newest first (filter by status pending, delivered, failed): attempts, next " +
      'attempt, last HTTP status and error.',
    ...servesEndpoint(ep.deliveries),
    summary: (r) => `${r.deliveries.length} of ${r.total} deliveries`,
  }),
];
