/**
 * Reads of `$all` by the subscriptions of one process (issue 23): three subscriptions (page sizes 500, 5,000 and
 * 500, like the projection runner, the matching engine and the webhook subscriber; the first consumer slow) follow
 * 800 appends by 8 concurrent writers, once each on a private live reader (one read of the log per subscription
 * and wake-up: the code before the shared tail) and once on one shared reader (`LiveReader`'s shared tail).
 * Prints the `readAll` calls each way. Needs the PostgreSQL server of the test suite (a scratch database, dropped).
 *
 *   TEST_DATABASE_PREFIX=ptv_bench_ npx tsx bench/live-reader.ts
 */
import type { ReadAllOptions } from '../ports/event-store';
import { LiveReader } from '../src/eventstore/live-reader';
import { createPostgresEventStore } from '../src/eventstore/postgres';
import { createPostgresTestDatabase } from '../test/support/databases';

const WRITERS = 8;
const PER_WRITER = 100;

const main = async (): Promise<void> => {
  const db = await createPostgresTestDatabase();
  const store = createPostgresEventStore(db);
  const run = async (shared: boolean): Promise<void> => {
    let reads = 0;
    const source = {
      readAll: (o: ReadAllOptions) => {
        reads++;
        return store.readAll(o);
      },
    };
    const readers = shared
      ? [new LiveReader(source)]
      : [new LiveReader(source), new LiveReader(source), new LiveReader(source)];
    const head = await store.headPosition();
    const total = WRITERS * PER_WRITER;
    const subs = [500, 5_000, 500].map((maxBatch, i) =>
      readers[i % readers.length]!.subscribe({ after: head, maxBatch }),
    );
    const done = subs.map(async (sub, i) => {
      let n = 0;
      for await (const page of sub) {
        n += page.length;
        if (i === 0) await new Promise((r) => setTimeout(r, 1));
        if (n >= total) break;
      }
    });
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; i < PER_WRITER; i++) {
          const r = await store.append(`bench-${w}-${shared}-${i}-${Math.random()}`, [
            { type: 'E', data: { i } },
          ]);
          for (const reader of readers) reader.wake(r.position.prepare);
        }
      }),
    );
    await Promise.all(done);
    console.log(
      `${shared ? 'one shared reader' : 'three private readers'}: ${reads} reads of $all for ${total} appends (${Date.now() - t0} ms)`,
    );
    for (const reader of readers) await reader.close();
  };
  for (let round = 0; round < 2; round++) {
    await run(false);
    await run(true);
  }
  await store.close();
  await db.close();
};

await main();
