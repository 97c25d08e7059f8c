import type { Logger } from 'pino';
import type { Config } from '../config';
import { formatPosition, type RecordedEvent } from '../eventstore/port';
import { createRuntime } from '../runtime';

/** One event as a readable line: position, time, stream@revision, type, data. */
export const formatEventLine = (e: RecordedEvent): string =>
  `${formatPosition(e.position).padEnd(14)} ${e.metadata.occurred_at}  ${`${e.streamId}@${e.revision}`.padEnd(48)} ${e.type.padEnd(22)} ${JSON.stringify(e.data)}`;

/**
 * `events tail [--stream S] [--limit N] [--follow]`: prints the last N events of the log (or of one stream),
 * oldest first, then follows new ones with `--follow` until Ctrl-C.
 */
export const eventsTail = async (
  config: Config,
  logger: Logger,
  options: { stream?: string; limit: number; follow?: boolean },
): Promise<void> => {
  const runtime = await createRuntime(config, logger, { runProjections: false });
  const store = runtime.services.eventStore;
  try {
    if (options.stream) {
      const revision = await store.streamRevision(options.stream);
      if (revision < 0) {
        console.error(`stream not found: ${options.stream}`);
        return;
      }
      const events = await store.readStream(options.stream, {
        fromRevision: Math.max(0, revision - options.limit + 1),
      });
      for (const e of events) console.log(formatEventLine(e));
    } else {
      // Keep a ring of the last N while reading the log once.
      const ring: RecordedEvent[] = [];
      let after = undefined as RecordedEvent['position'] | undefined;
      for (;;) {
        const page = await store.readAll({ ...(after ? { after } : {}), maxCount: 5_000 });
        for (const e of page.events) {
          ring.push(e);
          if (ring.length > options.limit) ring.shift();
        }
        after = page.next;
        if (page.events.length < 5_000) break;
      }
      for (const e of ring) console.log(formatEventLine(e));
      if (options.follow) {
        const sub = store.subscribeToAll(after ? { after } : {});
        process.once('SIGINT', () => void sub.close());
        for await (const batch of sub) for (const e of batch) console.log(formatEventLine(e));
      }
    }
  } finally {
    await runtime.close();
  }
};
