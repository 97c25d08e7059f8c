import { type Kysely, sql } from 'kysely';
import { dropTables } from './drop-tables';

/**
 * Webhook delivery (docs/webhooks.md, `src/webhooks/`). Not read models: operational state of the delivery worker,
 * which a rebuild must never reset (a rebuilt table would send every delivery again).
 * - `webhook_checkpoint`: how far in `$all` the delivery subscriber has enqueued (one row per subscriber);
 * - `webhook_targets`: the subscriber's own fold of the webhook streams (URL, event types, secret ciphertext), so
 *   an event is matched against the webhooks as they were at its position in the log;
 * - `webhook_stream_owners`: account (and agent) of each wallet, backtest and battle stream, from its first event;
 * - `webhook_deliveries`: one row per webhook and event, unique by `(webhook_id, dedupe_key)`, with the body as
 *   sent, status, attempts, the next attempt's time (the retry schedule survives restarts) and the last error.
 * The subscriber writes targets, owners, deliveries and its checkpoint in one transaction per page of the log.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`create table if not exists webhook_checkpoint (
    name text primary key,
    checkpoint_commit text not null,
    checkpoint_prepare text not null,
    updated_at timestamptz not null
  )`.execute(db);
  await sql`create table if not exists webhook_targets (
    webhook_id uuid primary key,
    account_id uuid not null,
    agent_id uuid,
    url text not null,
    event_types jsonb not null,
    active boolean not null,
    secret_ciphertext text not null
  )`.execute(db);
  await sql`create table if not exists webhook_stream_owners (
    stream_id text primary key,
    account_id uuid not null,
    agent_id uuid
  )`.execute(db);
  await sql`create table if not exists webhook_deliveries (
    delivery_id uuid primary key,
    webhook_id uuid not null,
    event_type text not null,
    dedupe_key text not null,
    event_id uuid,
    body text not null,
    status text not null,
    attempts integer not null default 0,
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    last_status_code integer,
    last_error text,
    created_at timestamptz not null,
    delivered_at timestamptz,
    unique (webhook_id, dedupe_key)
  )`.execute(db);
  await sql`create index if not exists webhook_deliveries_due on webhook_deliveries (next_attempt_at)
    where status = 'pending'`.execute(db);
  await sql`create index if not exists webhook_deliveries_webhook on webhook_deliveries (webhook_id, created_at)`.execute(
    db,
  );
};

export const down = dropTables(
  'webhook_deliveries',
  'webhook_stream_owners',
  'webhook_targets',
  'webhook_checkpoint',
);
