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
import { declareTables, type TableDefinitions } from './ddl';
import { entityRows, foldEntityEvents } from './entity-rows';
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

/** The DDL of its read-model tables. */
const WEBHOOKS_TABLES: TableDefinitions = {
  webhooks: {
    columns: {
      webhook_id: 'uuid primary key',
      account_id: 'uuid not null',
      agent_id: 'uuid',
      url: 'text not null',
      event_types: 'jsonb not null',
      description: 'text',
      active: 'boolean not null',
      secret_preview: 'text not null',
      created_at: 'timestamptz not null',
      updated_at: 'timestamptz not null',
    },
    indexes: {
      webhooks_account_created: ['account_id', 'created_at', 'webhook_id'],
    },
  },
};

/**
 * `webhooks` (docs/webhooks.md): the webhook list of `GET /webhooks`. `WebhookDeleted` removes the row;
 * `WebhookTestRequested` changes nothing. Deterministic: values from event data.
 */
export const webhooksProjection: Projection = {
  name: 'webhooks',
  version: 1,
  ...declareTables(WEBHOOKS_TABLES),
  eventTypes: [...WEBHOOK_STREAM_EVENT_TYPES],
  async apply(db: Kysely<WebhookTables>, events: readonly RecordedEvent[]) {
    const rows = entityRows<WebhooksTable>(db, 'webhooks', 'webhook_id');
    await foldEntityEvents<WebhookEvent>(events, WEBHOOK_STREAM_PREFIX, rows, async (event) => {
      switch (event.type) {
        case 'WebhookRegistered': {
          const d = event.data;
          await rows.insert({
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
          });
          break;
        }
        case 'WebhookUpdated':
          await rows.update(event.data.webhook_id, {
            ...settingsColumns(event.data.changes),
            updated_at: event.data.updated_at,
          });
          break;
        case 'WebhookDeleted':
          await rows.remove(event.data.webhook_id);
          break;
        case 'WebhookTestRequested':
          break;
      }
    });
  },
};
