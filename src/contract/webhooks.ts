import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT, type WebhookSettings } from '../../domain/webhook/events';
import type { DeliveryView, WebhookView } from '../../queries/webhooks';
import type { TestDelivery, WebhookInput } from '../application/webhooks';
import { oneLine, pageFields, timestamp } from './common';

/** `{webhook_id}` path parameter. */
export const webhookIdParams = z.object({
  webhook_id: z
    .uuid()
    .transform((id) => id.toLowerCase())
    .describe('webhook id (UUID, any letter case)'),
});

const url = z
  .string()
  .max(2048)
  .regex(/^https?:\/\/\S+$/i, 'must be an http(s) URL')
  .describe(
    'http(s) URL the deliveries are POSTed to, with no user name or password in it (receivers check X-PTV-Signature); its host must resolve to public addresses only unless the operator set WEBHOOKS_ALLOW_PRIVATE (docs/webhooks.md, "The SSRF rule")',
  );
const eventTypes = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length * 2)
  .describe(`event types to receive, at least one of: ${WEBHOOK_EVENT_TYPES.join(', ')}`);
const description = oneLine(z.string().max(200)).nullable().describe('free label, at most 200 characters');

/** `POST /webhooks` body. */
export const createWebhookBody = z.strictObject({
  url,
  event_types: eventTypes,
  description: description.optional(),
  active: z.boolean().optional().describe('default true; an inactive webhook gets no new deliveries'),
});

/** `PUT /webhooks/{id}` body: the fields to change (the secret never changes). */
export const updateWebhookBody = z.strictObject({
  url: url.optional(),
  event_types: eventTypes.optional(),
  description: description.optional(),
  active: z.boolean().optional(),
});

/** A webhook (no secret: only its preview). */
export const webhookResponse = z.object({
  webhook_id: z.uuid(),
  id: z.uuid().describe('the same as webhook_id'),
  account_id: z.uuid(),
  agent_id: z
    .uuid()
    .nullable()
    .describe("the agent whose events it receives; null: the account's and all its agents'"),
  url: z
    .string()
    .describe(
      'the URL deliveries go to; a user name and password in it (webhooks registered before they were refused) shown as ***',
    ),
  event_types: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  description: z.string().nullable(),
  active: z.boolean(),
  secret_preview: z.string().describe('first 12 characters of the signing secret, then an ellipsis'),
  created_at: timestamp,
  updated_at: timestamp,
});

/** `POST /webhooks` answer: the webhook and its signing secret, shown this once. */
export const createdWebhookResponse = webhookResponse.extend({
  secret: z
    .string()
    .describe('HMAC-SHA256 signing secret of the deliveries (X-PTV-Signature); shown only in this answer'),
});

/** `GET /webhooks` answer. */
export const webhookListResponse = z.object({ webhooks: z.array(webhookResponse), total: z.number().int() });

/** Presents a webhook. */
export const webhookOut = (w: WebhookView): z.infer<typeof webhookResponse> => ({
  webhook_id: w.webhookId,
  id: w.webhookId,
  account_id: w.accountId,
  agent_id: w.agentId,
  url: w.url,
  event_types: w.eventTypes,
  description: w.description,
  active: w.active,
  secret_preview: w.secretPreview,
  created_at: w.createdAt.toISOString(),
  updated_at: w.updatedAt.toISOString(),
});

/** `GET /webhooks/{id}/deliveries` query. */
export const deliveriesQuery = z.object({
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  ...pageFields(500, 100),
});

/** One delivery of a webhook. */
export const deliveryResponse = z.object({
  delivery_id: z.uuid().describe('also sent as X-PTV-Delivery (receivers deduplicate by it)'),
  webhook_id: z.uuid(),
  event_type: z.string(),
  event_id: z.uuid().nullable().describe('the ledger event delivered (docs/events.md)'),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  next_attempt_at: timestamp.nullable().describe('when a pending delivery is tried (again)'),
  last_attempt_at: timestamp.nullable(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: timestamp,
  delivered_at: timestamp.nullable(),
});

/** `GET /webhooks/{id}/deliveries` answer: newest first. */
export const deliveryListResponse = z.object({
  deliveries: z.array(deliveryResponse),
  total: z.number().int(),
});

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** Presents a delivery. */
export const deliveryOut = (d: DeliveryView): z.infer<typeof deliveryResponse> => ({
  delivery_id: d.deliveryId,
  webhook_id: d.webhookId,
  event_type: d.eventType,
  event_id: d.eventId,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: iso(d.nextAttemptAt),
  last_attempt_at: iso(d.lastAttemptAt),
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  created_at: d.createdAt.toISOString(),
  delivered_at: iso(d.deliveredAt),
});

/** `POST /webhooks/{id}/test` answer (202): the test delivery, made shortly by the delivery worker. */
export const testDeliveryResponse = z.object({
  delivery_id: z.uuid(),
  webhook_id: z.uuid(),
  event_type: z.literal(WEBHOOK_TEST_EVENT),
  status: z.literal('pending'),
});

/** Presents a test delivery request. */
export const testDeliveryOut = (t: TestDelivery): z.infer<typeof testDeliveryResponse> => ({
  delivery_id: t.deliveryId,
  webhook_id: t.webhookId,
  event_type: t.eventType,
  status: 'pending',
});

/** The use case's input from a `POST /webhooks` body: only the optional fields sent. */
export const webhookInputOf = (b: z.output<typeof createWebhookBody>): WebhookInput => ({
  url: b.url,
  event_types: b.event_types,
  ...(b.description !== undefined ? { description: b.description } : {}),
  ...(b.active !== undefined ? { active: b.active } : {}),
});

/** The changes of a `PUT /webhooks/{id}` body: only the fields sent. */
export const webhookChangesOf = (b: z.output<typeof updateWebhookBody>): Partial<WebhookSettings> =>
  Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)) as Partial<WebhookSettings>;

/** The deliveries use case's query from a `GET /webhooks/{id}/deliveries` query. */
export const deliveriesRequestOf = (q: z.output<typeof deliveriesQuery>) => ({
  limit: q.limit,
  offset: q.offset,
  ...(q.status ? { status: q.status } : {}),
});
