import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { type CommandHandler, createCommandHandler } from '../../commands/handler';
import {
  type MarkPrice,
  type MarksEvent,
  type MarksState,
  marksDecider,
  marksStreamId,
  minuteOf,
  type RecordMarks,
} from '../../domain/analytics/marks';
import type { EventStore, LogPosition } from '../../ports/event-store';
import type { EquitySnapshotTables } from '../../projections/equity-snapshots';
import type { CachedPrice } from '../market/price-cache';
import type { Leadership } from '../matching/leader';

/** Dependencies of {@link createSnapshotter}. */
export interface SnapshotterDeps {
  store: EventStore;
  db: Kysely<any>;
  /** The live price of a symbol from the market feed's cache, if any. */
  price: (symbol: string) => CachedPrice | undefined;
  /** Only the leader records (one writer per minute across processes). */
  leadership: Leadership;
  logger?: Logger;
  /** Wall clock (ms); tests pass their own. */
  now?: () => number;
}

/** The equity snapshotter: records the marks of each minute (docs/analytics.md). */
export interface Snapshotter {
  /**
   * Records the marks of the minute containing `at` (ms): the live price of every symbol some wallet holds.
   * Resolves to the append's result, or undefined when that minute (or a later one) was already recorded.
   */
  record(at: number): Promise<{ position: LogPosition } | undefined>;
  /** Records every minute, just after it starts, while this process is the leader. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Delay after a minute starts before its marks are taken, so the feed has published that minute's prices. */
const AFTER_MINUTE_MS = 1_000;

/**
 * Creates the snapshotter. Which symbols to price comes from the projection's own holdings (`equity_holdings`),
 * the prices from the price cache; the marks go through the marks decider, so the minute is recorded once even
 * when two processes try (optimistic concurrency on `marks-{day}`). Rate: one event per minute at most.
 */
export const createSnapshotter = (deps: SnapshotterDeps): Snapshotter => {
  const now = deps.now ?? Date.now;
  const handler: CommandHandler<MarksState, RecordMarks, MarksEvent, unknown> = createCommandHandler(
    deps.store,
    marksDecider,
    { cacheSize: 4 },
  );
  const db = deps.db as Kysely<EquitySnapshotTables>;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;

  const record: Snapshotter['record'] = async (at) => {
    const minute = minuteOf(at);
    const rows = await db
      .selectFrom('equity_holdings')
      .select('symbol')
      .distinct()
      .orderBy('symbol')
      .execute();
    const marks: MarkPrice[] = [];
    for (const { symbol } of rows) {
      const p = deps.price(symbol);
      if (p)
        marks.push({ symbol, price: p.price, price_time: new Date(p.time).toISOString(), source: p.source });
    }
    const iso = new Date(minute).toISOString();
    const result = await handler.handle(
      marksStreamId(new Date(minute)),
      { type: 'RecordMarks', data: { at: iso, marks } },
      {},
      { metadata: { occurred_at: iso, actor: 'system' } },
    );
    return result.append ? { position: result.append.position } : undefined;
  };

  const schedule = () => {
    if (stopped) return;
    const t = now();
    const delay = minuteOf(t) + 60_000 + AFTER_MINUTE_MS - t;
    timer = setTimeout(() => {
      if (deps.leadership.isLeader()) {
        running = record(now()).catch((err) =>
          deps.logger?.warn({ err }, 'equity snapshot: recording marks failed'),
        );
      }
      schedule();
    }, delay);
    timer.unref?.();
  };

  return {
    record,
    async start() {
      stopped = false;
      await deps.leadership.start();
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await deps.leadership.stop();
    },
  };
};
