import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  comparePositions,
  type LogPosition,
  type ReadAllOptions,
  type RecordedEvent,
  START,
} from '../../ports/event-store';
import { LiveReader } from '../../src/eventstore/live-reader';
import { createPostgresEventStore } from '../../src/eventstore/postgres';
import { createPGliteTestDatabase } from '../support/databases';

/**
 * The shared tail of the live reader (issue 23): several subscriptions of one process, at different positions and
 * with different page sizes, each get exactly the log `readAll` gives, once and in order, while they share the
 * reads of the log's head. The source is a real store (PGlite); only the reads are counted.
 */
describe('LiveReader shared tail (PGlite)', () => {
  it('gives every subscription the whole log once and in order, with far fewer reads than one per subscription', async () => {
    const db = await createPGliteTestDatabase();
    const store = createPostgresEventStore(db);
    let reads = 0;
    const reader = new LiveReader(
      {
        readAll: (o: ReadAllOptions) => {
          reads++;
          return store.readAll(o);
        },
      },
      { idlePollMs: 50, tailEvents: 300, tailReadMax: 200 },
    );
    try {
      const tag = randomUUID();
      // Some history before the subscriptions: one starts at the beginning, one in the middle, one at the head.
      const early: LogPosition[] = [];
      for (let i = 0; i < 40; i++)
        early.push((await store.append(`pre-${i}-${tag}`, [{ type: 'E', data: { tag, i } }])).position);
      const starts: LogPosition[] = [START, early[19]!, early[39]!];
      const batches = [7, 500, 64];
      const writers = 8;
      const perWriter = 30;
      const total = 40 + writers * perWriter;
      const seen = starts.map(() => [] as RecordedEvent[]);
      const subs = starts.map((after, i) => reader.subscribe({ after, maxBatch: batches[i]! }));
      const consumers = subs.map(async (sub, i) => {
        for await (const page of sub) {
          expect(page.length).toBeLessThanOrEqual(batches[i]!);
          for (const e of page) if ((e.data as { tag?: string }).tag === tag) seen[i]!.push(e);
          // A slow consumer, so the subscriptions drift apart and meet again.
          if (i === 0) await new Promise((r) => setTimeout(r, 3));
          if (seen[i]!.length >= total - (i === 0 ? 0 : i === 1 ? 20 : 40)) break;
        }
      });
      const writer = async (w: number) => {
        for (let i = 0; i < perWriter; i++) {
          await store.append(`w${w}-${tag}`, [{ type: 'E', data: { tag, w, i } }]);
          reader.wake();
        }
      };
      const readsBefore = reads;
      await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
      await Promise.race([
        Promise.all(consumers),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), 30_000)),
      ]);
      const log = (await store.readAll({ maxCount: 100_000 })).events.filter(
        (e) => (e.data as { tag?: string }).tag === tag,
      );
      expect(log).toHaveLength(total);
      for (const [i, start] of starts.entries()) {
        const expected = log.filter((e) => comparePositions(e.position, start) > 0).map((e) => e.eventId);
        expect(seen[i]!.map((e) => e.eventId)).toEqual(expected);
      }
      // Three private followers would read at least once per wake-up each; the tail shares most of them.
      const used = reads - readsBefore;
      expect(used).toBeGreaterThan(0);
      expect(used).toBeLessThan(writers * perWriter);
      await Promise.all(subs.map((s) => s.close()));
    } finally {
      await reader.close();
      await store.close();
      await db.close();
    }
  });
});
