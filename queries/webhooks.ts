import type { ColumnType, Kysely, Selectable } from 'kysely';
import type { WebhookEventType } from '../domain/webhook/events';
import type { ReadModels } from '../projections/read-models';
import type { WebhooksTable } from '../projections/webhooks';

/** Status of a delivery: waiting for its (next) attempt, answered 2xx, or out of attempts. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** `webhook_deliveries` (migration 0007; written by the delivery worker in `src/webhooks/`). */
export interface WebhookDeliveriesTable {
  delivery_id: string;
  webhook_id: string;
  event_type: string;
  dedupe_key: string;
  event_id: string | null;
  /** The JSON body exactly as sent (and signed). */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  last_attempt_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  last_status_code: number | null;
  last_error: string | null;
  created_at: ColumnType<Date, Date | string, Date | string>;
  delivered_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
}

/** The delivery worker's tables (migration 0007) as the read side sees them. */
export interface WebhookDeliveryTables {
  webhook_deliveries: WebhookDeliveriesTable;
}

/** A webhook as the API shows it (no secret). */
export interface WebhookView {
  webhookId: string;
  accountId: string;
  agentId: string | null;
  /** The URL as registered, a user name and password in it shown as `***` ({@link shownUrl}). */
  url: string;
  eventTypes: WebhookEventType[];
  description: string | null;
  active: boolean;
  secretPreview: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Whose webhooks a caller sees: the account's all, or (agent scope) the agent's own. */
export interface WebhookScope {
  accountId: string;
  agentId: string | null;
}

/**
 * A webhook's URL as the reads show it: a user name and a password in it (`https://user:pw@host/…`, refused since
 * the credentials rule, `src/net/outbound-url.ts`, but kept by webhooks registered before it) each become `***`;
 * any other URL is unchanged. Deliveries still go to the URL as registered (the worker's own fold of the log).
 */
const shownUrl = (url: string): string => {
  if (!url.includes('@')) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL (never registered so): whatever precedes an `@` of its authority is hidden.
    return url.replace(/^([^:/?#]*:\/\/)[^/?#]*@/, '$1***@');
  }
  if (parsed.username === '' && parsed.password === '') return url;
  if (parsed.username !== '') parsed.username = '***';
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
};

const view = (r: Selectable<WebhooksTable>): WebhookView => ({
  webhookId: r.webhook_id,
  accountId: r.account_id,
  agentId: r.agent_id,
  url: shownUrl(r.url),
  // jsonb arrives parsed from `pg` and PGlite alike; a string only from drivers that do not parse it.
  eventTypes: typeof r.event_types === 'string' ? JSON.parse(r.event_types) : r.event_types,
  description: r.description,
  active: r.active,
  secretPreview: r.secret_preview,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

const scoped = (db: Kysely<ReadModels>, scope: WebhookScope) => {
  let q = db.selectFrom('webhooks').selectAll().where('account_id', '=', scope.accountId);
  if (scope.agentId !== null) q = q.where('agent_id', '=', scope.agentId);
  return q;
};

/** The scope's webhooks, oldest first. */
export const listWebhooks = async (db: Kysely<ReadModels>, scope: WebhookScope): Promise<WebhookView[]> =>
  (await scoped(db, scope).orderBy('created_at').orderBy('webhook_id').execute()).map(view);

/** One webhook of the scope, or undefined (unknown, deleted, or another account's or agent's). */
export const getWebhook = async (
  db: Kysely<ReadModels>,
  scope: WebhookScope,
  webhookId: string,
): Promise<WebhookView | undefined> => {
  const row = await scoped(db, scope).where('webhook_id', '=', webhookId).executeTakeFirst();
  return row ? view(row) : undefined;
};

/** A delivery as the API lists it. */
export interface DeliveryView {
  deliveryId: string;
  webhookId: string;
  eventType: string;
  eventId: string | null;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

const date = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

/** A webhook's deliveries, newest first, with the total (optionally of one status). */
export const listDeliveries = async (
  db: Kysely<ReadModels>,
  webhookId: string,
  query: { limit: number; offset: number; status?: DeliveryStatus },
): Promise<{ deliveries: DeliveryView[]; total: number }> => {
  const d = db as unknown as Kysely<WebhookDeliveryTables>;
  let base = d.selectFrom('webhook_deliveries').where('webhook_id', '=', webhookId);
  if (query.status) base = base.where('status', '=', query.status);
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('delivery_id')
      .limit(query.limit)
      .offset(query.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return {
    total: Number(count.n),
    deliveries: rows.map((r) => ({
      deliveryId: r.delivery_id,
      webhookId: r.webhook_id,
      eventType: r.event_type,
      eventId: r.event_id,
      status: r.status,
      attempts: r.attempts,
      nextAttemptAt: date(r.next_attempt_at),
      lastAttemptAt: date(r.last_attempt_at),
      lastStatusCode: r.last_status_code,
      lastError: r.last_error,
      createdAt: new Date(r.created_at),
      deliveredAt: date(r.delivered_at),
    })),
  };
};
