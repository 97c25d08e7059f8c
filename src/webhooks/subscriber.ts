import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import {
  deliveryIdOf,
  type StreamOwner,
  streamOwnerOf,
  testDedupeKey,
  webhookEventOf,
  webhookReceives,
} from '../../domain/webhook/catalog';
import {
  WEBHOOK_STREAM_PREFIX,
  WEBHOOK_TEST_EVENT,
  type WebhookEvent,
  type WebhookEventType,
} from '../../domain/webhook/events';
import {
  type AllSubscription,
  DELETIONS_STREAM,
  type EventStore,
  type LogPosition,
  type RecordedEvent,
  START,
  type StreamDeletedData,
} from '../../ports/event-store';
import { WakeableSleep } from '../core/wakeable-sleep';
import type { WebhookWorkerTables } from './tables';

/** The checkpoint row of the delivery subscriber. */
const CHECKPOINT = 'webhook_deliveries';

/** How often the checkpoint is saved while pages pass that change nothing (ms). */
const QUIET_SAVE_MS = 2_000;

/** A webhook as the subscriber matches events against it. */
interface Target {
  webhookId: string;
  accountId: string;
  agentId: string | null;
  eventTypes: readonly WebhookEventType[];
  active: boolean;
}

/** Dependencies of {@link createWebhookSubscriber}. */
export interface WebhookSubscriberDeps {
  store: EventStore;
  db: Kysely<any>;
  logger: Logger;
  /** Called after a page that enqueued deliveries committed (wakes the dispatcher). */
  onEnqueued: () => void;
  /** Wait after a failed page before reading again from the checkpoint (ms, default 1,000). */
  retryMs?: number;
}

/** The delivery subscriber: follows `$all` from its own checkpoint and enqueues deliveries. */
export interface WebhookSubscriber {
  start(): Promise<void>;
  /** Stops after the page in progress (whose transaction commits or rolls back as a whole). */
  stop(): Promise<void>;
  /** The position enqueued up to (for tests and `/health`). */
  position(): LogPosition;
}

const toPosition = (commit: string, prepare: string): LogPosition => ({
  commit: BigInt(commit),
  prepare: BigInt(prepare),
});

/**
 * The webhook delivery subscriber (docs/webhooks.md, "How deliveries are made"): a projection-like follower of the
 * event log with its own checkpoint (`webhook_checkpoint`). Each page of `$all` is handled in one transaction:
 * fold the webhook streams into `webhook_targets` and the first events of wallet, backtest and battle streams into
 * `webhook_stream_owners`, insert one `webhook_deliveries` row per matching webhook and event (unique by webhook
 * and dedupe key, so a page handled twice enqueues nothing twice), and move the checkpoint to the page's last
 * event. A crash loses nothing (the page is handled again from the checkpoint) and enqueues nothing twice; an
 * event is matched against the webhooks as they were at its position in the log (a webhook gets the events
 * after its registration, none after its deletion).
 */
export const createWebhookSubscriber = (deps: WebhookSubscriberDeps): WebhookSubscriber => {
  const db = deps.db as Kysely<WebhookWorkerTables>;
  const retryMs = deps.retryMs ?? 1_000;
  let subscription: AllSubscription | undefined;
  let loop: Promise<void> | undefined;
  let stopped = false;
  let at: LogPosition = START;
  const alarm = new WakeableSleep();
  /** The webhooks as of the checkpoint (a copy is changed in a page's transaction and kept once it commits). */
  let targets = new Map<string, Target>();
  let savedAt = 0;
  let unsaved = false;

  const loadCheckpoint = async (): Promise<LogPosition> => {
    const row = await db
      .selectFrom('webhook_checkpoint')
      .selectAll()
      .where('name', '=', CHECKPOINT)
      .executeTakeFirst();
    return row ? toPosition(row.checkpoint_commit, row.checkpoint_prepare) : START;
  };

  const loadTargets = async (): Promise<Map<string, Target>> => {
    const rows = await db.selectFrom('webhook_targets').selectAll().execute();
    return new Map(
      rows.map((r) => [
        r.webhook_id,
        {
          webhookId: r.webhook_id,
          accountId: r.account_id,
          agentId: r.agent_id,
          eventTypes: typeof r.event_types === 'string' ? JSON.parse(r.event_types) : r.event_types,
          active: r.active,
        },
      ]),
    );
  };

  /** Folds a webhook stream event into `webhook_targets` (and the in-page target map). */
  const foldWebhook = async (
    trx: Transaction<WebhookWorkerTables>,
    targets: Map<string, Target>,
    event: WebhookEvent,
  ): Promise<void> => {
    switch (event.type) {
      case 'WebhookRegistered': {
        const d = event.data;
        await trx
          .insertInto('webhook_targets')
          .values({
            webhook_id: d.webhook_id,
            account_id: d.account_id,
            agent_id: d.agent_id,
            url: d.url,
            event_types: JSON.stringify(d.event_types),
            active: d.active,
            secret_ciphertext: d.secret_ciphertext,
          })
          .onConflict((oc) => oc.column('webhook_id').doNothing())
          .execute();
        targets.set(d.webhook_id, {
          webhookId: d.webhook_id,
          accountId: d.account_id,
          agentId: d.agent_id,
          eventTypes: d.event_types,
          active: d.active,
        });
        return;
      }
      case 'WebhookUpdated': {
        const { url, event_types, active } = event.data.changes;
        const set = {
          ...(url !== undefined ? { url } : {}),
          ...(event_types !== undefined ? { event_types: JSON.stringify(event_types) } : {}),
          ...(active !== undefined ? { active } : {}),
        };
        if (Object.keys(set).length > 0)
          await trx
            .updateTable('webhook_targets')
            .set(set)
            .where('webhook_id', '=', event.data.webhook_id)
            .execute();
        const t = targets.get(event.data.webhook_id);
        if (t)
          targets.set(t.webhookId, {
            ...t,
            ...(event_types !== undefined ? { eventTypes: event_types } : {}),
            ...(active !== undefined ? { active } : {}),
          });
        return;
      }
      case 'WebhookDeleted':
        await trx.deleteFrom('webhook_targets').where('webhook_id', '=', event.data.webhook_id).execute();
        await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', event.data.webhook_id).execute();
        targets.delete(event.data.webhook_id);
        return;
      case 'WebhookTestRequested':
        return;
    }
  };

  const ownerOf = async (
    trx: Transaction<WebhookWorkerTables>,
    owners: Map<string, StreamOwner | null>,
    streamId: string,
  ): Promise<StreamOwner | null> => {
    if (owners.has(streamId)) return owners.get(streamId)!;
    const row = await trx
      .selectFrom('webhook_stream_owners')
      .select(['account_id', 'agent_id'])
      .where('stream_id', '=', streamId)
      .executeTakeFirst();
    const owner = row ? { accountId: row.account_id, agentId: row.agent_id } : null;
    owners.set(streamId, owner);
    return owner;
  };

  /** The body of a delivery: what the receiver gets, signed as is. */
  const bodyOf = (
    deliveryId: string,
    type: string,
    webhookId: string,
    owner: StreamOwner,
    e: RecordedEvent,
  ): string =>
    JSON.stringify({
      id: deliveryId,
      type,
      created_at: e.metadata.occurred_at ?? e.recordedAt.toISOString(),
      webhook_id: webhookId,
      account_id: owner.accountId,
      agent_id: owner.agentId,
      event: {
        event_id: e.eventId,
        stream_id: e.streamId,
        revision: e.revision,
        type: e.type,
        data: e.data,
      },
    });

  const checkpointRow = (position: LogPosition) => ({
    checkpoint_commit: position.commit.toString(),
    checkpoint_prepare: position.prepare.toString(),
    updated_at: new Date(),
  });
  const saveCheckpoint = async (q: Kysely<WebhookWorkerTables>, position: LogPosition) => {
    const row = checkpointRow(position);
    await q
      .insertInto('webhook_checkpoint')
      .values({ name: CHECKPOINT, ...row })
      .onConflict((oc) => oc.column('name').doUpdateSet(row))
      .execute();
    savedAt = Date.now();
    unsaved = false;
  };

  /**
   * Whether a page changes anything of the subscriber: a webhook event, a deletion, a stream's first event, or an
   * event some active webhook subscribes to. Other pages (most of a busy log when few webhooks exist) cost no
   * database work: only the checkpoint moves, saved at most every {@link QUIET_SAVE_MS} (reading them again
   * after a crash enqueues nothing).
   */
  const matters = (events: readonly RecordedEvent[]): boolean =>
    events.some((e) => {
      if (e.streamId.startsWith(WEBHOOK_STREAM_PREFIX) || e.streamId === DELETIONS_STREAM) return true;
      if (streamOwnerOf(e)) return true;
      const match = webhookEventOf(e);
      if (!match) return false;
      for (const t of targets.values()) if (t.active && t.eventTypes.includes(match.type)) return true;
      return false;
    });

  /** Handles one page: in one transaction when it matters; resolves to the number of deliveries enqueued. */
  const handlePage = async (events: readonly RecordedEvent[]): Promise<number> => {
    const last = events[events.length - 1];
    if (!last) return 0;
    if (!matters(events)) {
      unsaved = true;
      if (Date.now() - savedAt >= QUIET_SAVE_MS) await saveCheckpoint(db, last.position);
      return 0;
    }
    const next = new Map(targets);
    const enqueued = await db.transaction().execute(async (trx) => {
      const targets = next;
      const owners = new Map<string, StreamOwner | null>();
      const deliveries: Insertable<WebhookWorkerTables['webhook_deliveries']>[] = [];
      const enqueue = (
        target: Target,
        type: string,
        dedupeKey: string,
        owner: StreamOwner,
        e: RecordedEvent,
      ) => {
        const deliveryId = deliveryIdOf(target.webhookId, dedupeKey);
        deliveries.push({
          delivery_id: deliveryId,
          webhook_id: target.webhookId,
          event_type: type,
          dedupe_key: dedupeKey,
          event_id: e.eventId,
          body: bodyOf(deliveryId, type, target.webhookId, owner, e),
          status: 'pending',
          attempts: 0,
          next_attempt_at: e.recordedAt,
          last_attempt_at: null,
          last_status_code: null,
          last_error: null,
          created_at: e.recordedAt,
          delivered_at: null,
        });
      };
      for (const e of events) {
        if (e.streamId.startsWith(WEBHOOK_STREAM_PREFIX)) {
          const event = { type: e.type, data: e.data } as WebhookEvent;
          await foldWebhook(trx, targets, event);
          if (event.type === 'WebhookTestRequested') {
            const target = targets.get(event.data.webhook_id);
            if (target) enqueue(target, WEBHOOK_TEST_EVENT, testDedupeKey(event.data.test_id), target, e);
          }
          continue;
        }
        if (e.streamId === DELETIONS_STREAM) {
          const { stream_id } = e.data as StreamDeletedData;
          await trx.deleteFrom('webhook_stream_owners').where('stream_id', '=', stream_id).execute();
          owners.set(stream_id, null);
          continue;
        }
        const named = streamOwnerOf(e);
        if (named) {
          await trx
            .insertInto('webhook_stream_owners')
            .values({ stream_id: e.streamId, account_id: named.accountId, agent_id: named.agentId })
            .onConflict((oc) => oc.column('stream_id').doNothing())
            .execute();
          if (!owners.get(e.streamId)) owners.set(e.streamId, named);
        }
        const match = webhookEventOf(e);
        if (!match) continue;
        const interested = [...targets.values()].filter((t) => t.active && t.eventTypes.includes(match.type));
        if (interested.length === 0) continue;
        const owner = await ownerOf(trx, owners, e.streamId);
        if (!owner) continue;
        for (const t of interested)
          if (webhookReceives(t, owner)) enqueue(t, match.type, match.dedupeKey, owner, e);
      }
      for (let i = 0; i < deliveries.length; i += 200) {
        await trx
          .insertInto('webhook_deliveries')
          .values(deliveries.slice(i, i + 200))
          .onConflict((oc) => oc.columns(['webhook_id', 'dedupe_key']).doNothing())
          .execute();
      }
      await saveCheckpoint(trx, last.position);
      return deliveries.length;
    });
    targets = next;
    return enqueued;
  };

  const sleep = (ms: number) => alarm.sleep(ms);

  const run = async (): Promise<void> => {
    while (!stopped) {
      try {
        at = await loadCheckpoint();
        targets = await loadTargets();
        subscription = deps.store.subscribeToAll({ after: at, maxBatch: 500 });
        for await (const page of subscription) {
          if (stopped) break;
          const enqueued = await handlePage(page);
          at = page[page.length - 1]?.position ?? at;
          if (enqueued > 0) deps.onEnqueued();
        }
      } catch (error) {
        if (stopped) break;
        deps.logger.error({ err: error }, 'webhook subscriber failed; reading again from its checkpoint');
        await subscription?.close().catch(() => {});
        await sleep(retryMs);
      }
    }
  };

  return {
    async start() {
      if (loop) return;
      stopped = false;
      loop = run();
    },
    async stop() {
      stopped = true;
      alarm.wake();
      await subscription?.close().catch(() => {});
      await loop;
      loop = undefined;
      if (unsaved) await saveCheckpoint(db, at).catch(() => {});
    },
    position: () => at,
  };
};
