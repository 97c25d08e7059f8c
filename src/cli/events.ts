import { sql } from 'kysely';
import type { Logger } from 'pino';
import { formatPosition, type LogPosition, type RecordedEvent } from '../../ports/event-store';
import type { Config } from '../config';
import type { DatabaseHandle } from '../db/database';
import { CliError } from './errors';
import { openReadingRuntime } from './runtime';

/** One event as a readable line: position, time, stream@revision, type, data. */
export const formatEventLine = (e: RecordedEvent): string =>
  `${formatPosition(e.position).padEnd(14)} ${e.metadata.occurred_at}  ${`${e.streamId}@${e.revision}`.padEnd(48)} ${e.type.padEnd(22)} ${JSON.stringify(e.data)}`;

/** One event as a JSON line (`--json`): the whole envelope, for `jq` and scripts. */
export const formatEventJson = (e: RecordedEvent): string =>
  JSON.stringify({
    position: formatPosition(e.position),
    stream_id: e.streamId,
    revision: e.revision,
    event_id: e.eventId,
    type: e.type,
    data: e.data,
    metadata: e.metadata,
    recorded_at: e.recordedAt,
  });

/**
 * Where the last `limit` events of the log begin, found from the end of the `events` table (PostgreSQL event
 * store) instead of reading the whole log: the position of the event just before them (`undefined`: the log has
 * at most `limit` events). The same visibility horizon as the `$all` reader.
 */
const tailStart = async (database: DatabaseHandle, limit: number): Promise<LogPosition | undefined> => {
  const { rows } = await sql<{ commit: string; prepare: string }>`
    select transaction_id::text as commit, global_position::text as prepare from events
    where transaction_id < pg_snapshot_xmin(pg_current_snapshot())
    order by transaction_id desc, global_position desc
    offset ${limit} limit 1`.execute(database.db);
  const row = rows[0];
  return row ? { commit: BigInt(row.commit), prepare: BigInt(row.prepare) } : undefined;
};

/**
 * `events tail [--stream S] [--limit N] [--follow] [--json]`: prints the last N events of the log (or of one
 * stream), oldest first, one per line (`--json`: one JSON object per line), then follows new ones with
 * `--follow` until Ctrl-C. An unknown stream is an error (exit code 1).
 */
export const eventsTail = async (
  config: Config,
  logger: Logger,
  options: { stream?: string; limit: number; follow?: boolean; json?: boolean },
): Promise<void> => {
  const runtime = await openReadingRuntime(config, logger);
  const store = runtime.services.eventStore;
  const print = (e: RecordedEvent) => console.log(options.json ? formatEventJson(e) : formatEventLine(e));
  try {
    if (options.stream) {
      const revision = await store.streamRevision(options.stream);
      if (revision < 0) throw new CliError(`stream not found: ${options.stream}`);
      const events = await store.readStream(options.stream, {
        fromRevision: Math.max(0, revision - options.limit + 1),
      });
      for (const e of events) print(e);
      if (options.follow) {
        let next = (events.at(-1)?.revision ?? revision) + 1;
        const sub = store.subscribeToAll({ ...(events.length ? { after: events.at(-1)!.position } : {}) });
        process.once('SIGINT', () => void sub.close());
        for await (const batch of sub) {
          for (const e of batch) {
            if (e.streamId !== options.stream || e.revision < next) continue;
            print(e);
            next = e.revision + 1;
          }
        }
      }
      return;
    }
    let after: LogPosition | undefined;
    if (config.EVENT_STORE === 'postgres') {
      after = await tailStart(runtime.services.database, options.limit);
      const page = await store.readAll({ ...(after ? { after } : {}), maxCount: options.limit });
      for (const e of page.events) print(e);
      after = page.next;
    } else {
      // Keep a ring of the last N while reading the log once.
      const ring: RecordedEvent[] = [];
      for (;;) {
        const page = await store.readAll({ ...(after ? { after } : {}), maxCount: 5_000 });
        for (const e of page.events) {
          ring.push(e);
          if (ring.length > options.limit) ring.shift();
        }
        after = page.next;
        if (page.events.length < 5_000) break;
      }
      for (const e of ring) print(e);
    }
    if (options.follow) {
      const sub = store.subscribeToAll(after ? { after } : {});
      process.once('SIGINT', () => void sub.close());
      for await (const batch of sub) for (const e of batch) print(e);
    }
  } finally {
    await runtime.close();
  }
};
