/**
 * Projection rebuild benchmark (issue: foundation, done-when): fills a fresh database on the local PostgreSQL
 * server with a log of N events (default 1,000,000, over 10,000 streams, appended through the real
 * `append_events` path in batches), then times `rebuildProjection` of `stream_summaries` (read the log in
 * pages, fold, checkpoint per batch, swap) and reports events/s. Target: ≥ 20,000 events/s.
 *
 *   npx tsx bench/projections.ts [--events 1000000] [--batch 5000] [--url postgres://...]
 */
import { Command } from 'commander';
import { rebuildProjection } from '../projections/rebuild';
import { ProjectionRunner } from '../projections/runner';
import { streamSummariesProjection } from '../projections/stream-summaries';
import { openPostgres } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrate';
import { createPostgresEventStore } from '../src/eventstore/postgres';
import { createScratchDatabase } from './stats';

const program = new Command()
  .option('--events <n>', 'events in the log', '1000000')
  .option('--streams <n>', 'streams', '10000')
  .option('--batch <n>', 'events per rebuild transaction', '5000')
  .option('--url <url>', 'PostgreSQL server', 'postgres://postgres@127.0.0.1:5432/postgres')
  .parse();
const o = program.opts<{ events: string; streams: string; batch: string; url: string }>();
const total = Number(o.events);
const streams = Number(o.streams);

const scratch = await createScratchDatabase(o.url, 'ptv_bench_proj_');
const handle = openPostgres(scratch.url, { max: 8 });
try {
  await migrateToLatest(handle.db);
  const store = createPostgresEventStore(handle);
  // The live generation exists first, as in production: the rebuild builds generation 2 beside it.
  const runner = new ProjectionRunner(store, handle.db, [streamSummariesProjection]);
  await runner.start();
  await runner.stop();

  const perAppend = 1000;
  const fillStarted = performance.now();
  let written = 0;
  const revisions = new Map<number, number>();
  const workers = Array.from({ length: 4 }, async () => {
    while (written < total) {
      const n = Math.min(perAppend, total - written);
      written += n;
      const s = Math.floor(Math.random() * streams);
      const rev = revisions.get(s) ?? -1;
      revisions.set(s, rev + n);
      await store.append(
        `bench-${s}`,
        Array.from({ length: n }, (_, i) => ({
          type: i % 3 === 0 ? 'OrderPlaced' : 'OrderFilled',
          data: {
            order_id: `${s}-${rev + 1 + i}`,
            symbol: 'BTCUSDT',
            quantity: '0.01000000',
            price: '43250.12000000',
          },
          metadata: { occurred_at: new Date(1_700_000_000_000 + written * 10).toISOString(), actor: 'bench' },
        })),
        { expectedRevision: 'any' },
      );
    }
  });
  await Promise.all(workers);
  const fillSeconds = (performance.now() - fillStarted) / 1000;
  console.log(
    `log filled: ${total} events in ${fillSeconds.toFixed(1)} s (${Math.round(total / fillSeconds)} events/s appended in batches of ${perAppend})`,
  );

  let lastPrint = 0;
  const result = await rebuildProjection(store, handle.db, streamSummariesProjection, {
    batchSize: Number(o.batch),
    onProgress: (p) => {
      if (performance.now() - lastPrint > 5000) {
        lastPrint = performance.now();
        console.log(`  ${p.processed}/${p.total ?? '?'} events, ${Math.round(p.eventsPerSecond)} events/s`);
      }
    },
  });
  const rate = Math.round(result.processed / result.seconds);
  console.log(
    `rebuild stream_summaries: ${result.processed} events in ${result.seconds.toFixed(2)} s = ${rate} events/s (batch ${o.batch}), swapped=${result.swapped}, generation ${result.generation.generation}`,
  );
  const verify = await rebuildProjection(store, handle.db, streamSummariesProjection, {
    batchSize: Number(o.batch),
    verify: true,
  });
  console.log(
    `rebuild --verify: ${verify.processed} events in ${verify.seconds.toFixed(2)} s = ${Math.round(verify.processed / verify.seconds)} events/s, identical=${verify.differences?.length === 0}`,
  );
  await store.close();
} finally {
  await handle.close();
  await scratch.drop();
}
