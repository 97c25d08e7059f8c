import type { ColumnType } from 'kysely';
import type { WebhookEventType } from '../../domain/webhook/events';
import type { WebhookDeliveryTables } from '../../queries/webhooks';

/**
 * The delivery worker's tables (migration 0007, `src/db/migrations/0007_webhooks.ts`): its checkpoint, its own
 * fold of the webhooks and of stream owners, and the deliveries (typed in `queries/webhooks.ts`, which lists them).
 */
export interface WebhookWorkerTables extends WebhookDeliveryTables {
  webhook_checkpoint: {
    name: string;
    checkpoint_commit: string;
    checkpoint_prepare: string;
    updated_at: ColumnType<Date, Date | string, Date | string>;
  };
  webhook_targets: {
    webhook_id: string;
    account_id: string;
    agent_id: string | null;
    url: string;
    event_types: ColumnType<WebhookEventType[], string, string>;
    active: boolean;
    secret_ciphertext: string;
  };
  webhook_stream_owners: {
    stream_id: string;
    account_id: string;
    agent_id: string | null;
  };
}
