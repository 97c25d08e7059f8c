import { type Kysely, sql } from 'kysely';

/**
 * Idempotency keys looked up in the log (issue 20; `EventStore.findByIdempotencyKey`, `domain/wallet/idempotency.ts`):
 * a partial index of the events that record a command's idempotency key (`data.idempotency_key`: a wallet's
 * `OrderPlaced`/`OrderRejected` of a keyed order), so a keyed order finds the key's newest claim with one index probe
 * instead of keeping every claim of the last 24 h in the wallet's state and snapshot. Events without a key (most of
 * the log) are not in it.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`create index if not exists events_idempotency_key
    on events (stream_id, (data->>'idempotency_key'), revision)
    where data->>'idempotency_key' is not null`.execute(db);
};

export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`drop index if exists events_idempotency_key`.execute(db);
};
