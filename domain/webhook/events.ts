import type { DomainEvent } from '../shared/decider';

/**
 * The event types a webhook can subscribe to (issue 17, item 11), each derived from a ledger event of
 * `docs/events.md` ({@link webhookEventOf} in `./catalog.ts` is the mapping). `webhook.test` is sent only by
 * `POST /webhooks/{id}/test` and cannot be subscribed to.
 */
export const WEBHOOK_EVENT_TYPES = [
  'order.filled',
  'order.cancelled',
  'backtest.completed',
  'battle.completed',
  'risk.daily_loss_breaker_tripped',
] as const;

/** A subscribable webhook event type. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The type of a test delivery (`POST /webhooks/{id}/test`). */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

/**
 * Events of the `webhook-{webhook_id}` stream (catalogue in `docs/events.md`, "Webhooks"). The signing secret is
 * recorded only as AES-256-GCM ciphertext under the server key (`v1:<iv>:<ciphertext>:<tag>`, the webhook id as
 * additional authenticated data) and a preview; timestamps ISO 8601 UTC.
 */
export type WebhookEvent =
  | DomainEvent<'WebhookRegistered', WebhookRegisteredData>
  | DomainEvent<'WebhookUpdated', WebhookUpdatedData>
  | DomainEvent<'WebhookDeleted', WebhookDeletedData>
  | DomainEvent<'WebhookTestRequested', WebhookTestRequestedData>;

/** The fields of a webhook a client may change (`PUT /webhooks/{id}`). */
export interface WebhookSettings {
  /** http(s) URL the deliveries are POSTed to (checked against the SSRF rule before the command). */
  url: string;
  /** At least one of {@link WEBHOOK_EVENT_TYPES}, sorted, no duplicates. */
  event_types: WebhookEventType[];
  /** Free label, at most 200 characters, or null. */
  description: string | null;
  /** Inactive webhooks keep their settings but get no new deliveries. */
  active: boolean;
}

/** A webhook was registered (`POST /webhooks`). */
export interface WebhookRegisteredData extends WebhookSettings {
  webhook_id: string;
  account_id: string;
  /** The agent whose events it receives when an agent key registered it; null: the account and all its agents. */
  agent_id: string | null;
  /** AES-256-GCM ciphertext of the signing secret, bound to the webhook id. */
  secret_ciphertext: string;
  /** First characters of the secret and an ellipsis, to tell secrets apart. */
  secret_preview: string;
  registered_at: string;
}

/** Settings changed (`PUT /webhooks/{id}`): only the fields that changed. */
export interface WebhookUpdatedData {
  webhook_id: string;
  changes: Partial<WebhookSettings>;
  updated_at: string;
}

/** The webhook was deleted (`DELETE /webhooks/{id}`): no delivery from then on. */
export interface WebhookDeletedData {
  webhook_id: string;
  deleted_at: string;
}

/** A test delivery was asked for (`POST /webhooks/{id}/test`); `test_id` names it. */
export interface WebhookTestRequestedData {
  webhook_id: string;
  test_id: string;
  requested_at: string;
}

/** Every event type of the webhook stream (projections and the delivery subscriber select them). */
export const WEBHOOK_STREAM_EVENT_TYPES = [
  'WebhookRegistered',
  'WebhookUpdated',
  'WebhookDeleted',
  'WebhookTestRequested',
] as const;

/** The stream of one webhook. */
export const webhookStreamId = (webhookId: string): string => `webhook-${webhookId}`;

/** The stream-name prefix of webhooks. */
export const WEBHOOK_STREAM_PREFIX = 'webhook-';
