import type { ColumnType, Kysely } from 'kysely';
import {
  WEBHOOK_STREAM_EVENT_TYPES,
  WEBHOOK_STREAM_PREFIX,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookSettings,
} from '../domain/webhook/events';
import type { RecordedEvent } from '../ports/event-store';
import type { Timestamp } from './columns';
import type { Projection } from './projection';

/** Row of the `webhooks` read model: one per webhook not deleted (docs/webhooks.md). No secret, only its preview. */
export interface WebhooksTable {
  webhook_id: string;
  account_id: string;
  agent_id: string | null;
  url: string;
  /** jsonb array of webhook event types. */
  event_types: ColumnType<WebhookEventType[], string, string>;
  description: string | null;
  active: boolean;
  secret_preview: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The webhooks read model's tables. */
export interface WebhookTables {
  webhooks: WebhooksTable;
}

const settingsColumns = (changes: Partial<WebhookSettings>) => {
  const { event_types, ...rest } = changes;
  return { ...rest, ...(event_types !== undefined ? { event_types: JSON.stringify(event_types) } : {}) };
};

/**
 * `webhooks` (docs/webhooks.md): the webhook list of `GET /webhooks`. `WebhookDeleted` removes the row;
 * `WebhookTestRequested` changes nothing. Deterministic: values from event data.
 */
export const webhooksProjection: Projection = {
  name: 'webhooks',
  version: 1,
  tables: ['webhooks'],
  eventTypes: [...WEBHOOK_STREAM_EVENT_TYPES],
  async createTables(db, schema) {
    await db.schema
      .withSchema(schema)
      .createTable('webhooks')
      .addColumn('webhook_id', 'uuid', (c) => c.primaryKey())
      .addColumn('account_id', 'uuid', (c) => c.notNull())
      .addColumn('agent_id', 'uuid')
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('event_types', 'jsonb', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('active', 'boolean', (c) => c.notNull())
      .addColumn('secret_preview', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema
      .withSchema(schema)
      .createIndex('webhooks_account_created')
      .on('webhooks')
      .columns(['account_id', 'created_at', 'webhook_id'])
      .execute();
  },
  async apply(db: Kysely<WebhookTables>, events: readonly RecordedEvent[]) {
    for (const e of events) {
      if (!e.streamId.startsWith(WEBHOOK_STREAM_PREFIX)) continue;
      const event = { type: e.type, data: e.data } as WebhookEvent;
      switch (event.type) {
        case 'WebhookRegistered': {
          const d = event.data;
          await db
            .insertInto('webhooks')
            .values({
              webhook_id: d.webhook_id,
              account_id: d.account_id,
              agent_id: d.agent_id,
              url: d.url,
              event_types: JSON.stringify(d.event_types),
              description: d.description,
              active: d.active,
              secret_preview: d.secret_preview,
              created_at: d.registered_at,
              updated_at: d.registered_at,
            })
            .execute();
          break;
        }
        case 'WebhookUpdated':
          await db
            .updateTable('webhooks')
            .set({ ...settingsColumns(event.data.changes), updated_at: event.data.updated_at })
            .where('webhook_id', '=', event.data.webhook_id)
            .execute();
          break;
        case 'WebhookDeleted':
          await db.deleteFrom('webhooks').where('webhook_id', '=', event.data.webhook_id).execute();
          break;
        case 'WebhookTestRequested':
          break;
      }
    }
  },
};
