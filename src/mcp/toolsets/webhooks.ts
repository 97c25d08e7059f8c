import { webhookEndpoints as ep } from '../../endpoints/webhooks';
import { DESTRUCTIVE, IDEMPOTENT_WRITE, READ, type ToolDef, WRITE } from '../tool';
import { endpointTools } from '../tool-table';
import { confirmTrue } from './trading';

/**
 * Webhook tools (docs/webhooks.md): register a URL for the ledger's events, change, test and delete it, read its
 * deliveries. Key or JWT, as the routes (an agent key manages the agent's webhooks); the `management` rate-limit
 * group. Each serves its endpoint of `src/endpoints/webhooks.ts`, as `/webhooks/*` does.
 */

const common = { toolset: 'webhooks', auth: 'key-or-jwt', rateLimitGroup: 'management' } as const;
const read = { ...common, annotations: READ } as const;
const at = (id: string, rest = '') => `/webhooks/${encodeURIComponent(id)}${rest}`;

/** Each tool's description, by its name (what it does, units, errors). */
const describe: Readonly<Record<string, string>> = {
  create_webhook:
    'Registers an http(s) URL that receives signed POSTs of the given event_types (description, active ' +
    'optional). The answer holds the signing secret, shown only now. VALIDATION_ERROR (a private address, ' +
    'an unknown event type).',
  list_webhooks: "The caller's webhooks, oldest first (no secrets; URLs and descriptions are user text).",
  get_webhook:
    'One webhook of the caller: URL, event types, active. NOT_FOUND for an unknown or another’s webhook.',
  update_webhook:
    'Changes a webhook’s url, event_types, description or active (only the fields given); the secret stays.',
  delete_webhook:
    'Deletes a webhook: no delivery from then on, pending ones dropped. Destructive: needs confirm: true.',
  test_webhook:
    'Queues a signed webhook.test delivery to the webhook; follow it with list_webhook_deliveries.',
  list_webhook_deliveries:
    "A webhook's deliveries, newest first (filter by status pending, delivered, failed): attempts, next " +
    'attempt, last HTTP status and error.',
};

export const webhookTools: ToolDef[] = [
  ...endpointTools(read, ep, describe, {
    create: [
      'create_webhook',
      'Register a webhook',
      (r) => `webhook ${r.webhook_id} for ${r.event_types.length} event types`,
      WRITE,
    ],
    list: ['list_webhooks', 'Webhooks', (r) => `${r.total} webhooks`],
    get: ['get_webhook', 'One webhook', (r) => `webhook ${r.webhook_id} ${r.active ? 'active' : 'inactive'}`],
    update: [
      'update_webhook',
      'Change a webhook',
      (r) => `webhook ${r.webhook_id} ${r.active ? 'active' : 'inactive'}`,
      IDEMPOTENT_WRITE,
    ],
    delete: [
      'delete_webhook',
      'Delete a webhook',
      (r) => `webhook ${r.webhook_id} deleted`,
      DESTRUCTIVE,
      {
        input: ep.delete.input.extend({ confirm: confirmTrue }).strict(),
        rest: async (a, http) => {
          await http({ method: 'DELETE', path: at(a.webhook_id) });
          return { webhook_id: a.webhook_id, deleted: true as const };
        },
      },
    ],
    test: ['test_webhook', 'Test a webhook', (r) => `test delivery ${r.delivery_id} ${r.status}`, WRITE],
    deliveries: [
      'list_webhook_deliveries',
      'Webhook deliveries',
      (r) => `${r.deliveries.length} of ${r.total} deliveries`,
    ],
  }),
];
