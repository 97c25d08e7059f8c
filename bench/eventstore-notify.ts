/**
 * A/B experiment behind the event store benchmark's findings (docs/benchmarks.md, "Event store"): where the
 * PostgreSQL adapter sends its NOTIFY wake-up.
 *
 * - `in-transaction`: as `append_events` does today, `pg_notify` inside the append transaction. PostgreSQL
 *   (up to at least 16) takes a database-wide lock for NOTIFY at commit and holds it through the WAL flush, so
 *   concurrent appends commit one at a time.
 * - `post-commit`: `append_events` without `pg_notify` (replaced in the scratch database only), and after each
 *   successful append one coalesced `select pg_notify(...)` on a dedicated connection: while one is in flight,
 *   further positions only raise the one sent next.
 *
 * Each variant runs on its own scratch database: single-event appends from 64 concurrent streams, then the
 * end-to-end latency of a subscriber on a separate store (woken by NOTIFY only) while 8 writers append 500/s.
 *
 *   npx tsx bench/eventstore-notify.ts [--rounds 2] [--seconds 5]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Command } from 'commander';
import { sql } from 'kysely';
import pg from 'pg';
import type { EventStore, ExpectedRevision } from '../ports/event-store';
import { openPostgres } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrate';
import { createPostgresEventStore, EVENTS_CHANNEL } from '../src/eventstore/postgres';
import { positiveInt, positiveNumber, withScratchDatabase } from './options';
import { percentileOfSorted as percentile } from './stats';

const opts = withScratchDatabase(new Command(), 'ptv_bench_')
  .name('bench/eventstore-notify.ts')
  .description('A/B: NOTIFY inside the append transaction vs a coalesced NOTIFY after commit')
  .option('--rounds <n>', 'alternating rounds of both variants', positiveInt, 2)
  .option('--seconds <s>', 'duration of each measurement', positiveNumber, 5)
  .option('--streams <n>', 'concurrent streams in the append test', positiveInt, 64)
  .option('--pool <n>', 'pg pool size', positiveInt, 20)
  .parse()
  .opts<{ rounds: number; seconds: number; streams: number; pool: number; url: string; dbPrefix: string }>();

type Variant = 'in-transaction' | 'post-commit';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const nowMs = () => performance.timeOrigin + performance.now();

const admin = async (text: string) => {
  const client = new pg.Client({ connectionString: opts.url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end().catch(() => {});
  }
};

interface Outcome {
  variant: Variant;
  appendsPerSecond: number;
  appendP50: number;
  appendP99: number;
  delivered: number;
  appended: number;
  latencyP50: number;
  latencyP99: number;
  latencyMax: number;
  notifies: number;
}

/** The scratch database in use, dropped on any exit. */
let current: string | undefined;

const dropCurrent = async () => {
  const name = current;
  current = undefined;
  if (name) await admin(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`).catch(() => {});
};

const run = async (variant: Variant): Promise<Outcome> => {
  const name = `${opts.dbPrefix}${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await admin(`create database ${pg.escapeIdentifier(name)}`);
  current = name;
  const url = new URL(opts.url);
  url.pathname = `/${name}`;
  const handle = openPostgres(url.toString(), { max: opts.pool });
  const store = createPostgresEventStore(handle);
  const readerHandle = openPostgres(url.toString(), { max: 2 });
  const reader = createPostgresEventStore(readerHandle);
  const notifier = new pg.Client({ connectionString: url.toString() });
  notifier.on('error', () => {});
  try {
    await migrateToLatest(handle.db);
    await notifier.connect();
    if (variant === 'post-commit') {
      const { rows } = await sql<{ d: string }>`
        select pg_get_functiondef('append_events'::regproc) as d`.execute(handle.db);
      const without = rows[0]!.d.replace(/perform pg_notify\([^;]*\);/, '');
      if (without === rows[0]!.d) throw new Error('append_events has no pg_notify call to remove');
      await sql.raw(without).execute(handle.db);
    }

    // Coalescing post-commit notifier (post-commit variant only).
    let inFlight = false;
    let wanted: bigint | undefined;
    let notifies = 0;
    const notify = (position: bigint) => {
      if (variant !== 'post-commit') return;
      if (wanted === undefined || position > wanted) wanted = position;
      if (inFlight) return;
      inFlight = true;
      void (async () => {
        while (wanted !== undefined) {
          const p = wanted;
          wanted = undefined;
          notifies++;
          await notifier.query('select pg_notify($1, $2)', [EVENTS_CHANNEL, p.toString()]).catch(() => {});
        }
        inFlight = false;
      })();
    };
    const append = async (
      s: EventStore,
      stream: string,
      data: unknown,
      expectedRevision: ExpectedRevision,
    ) => {
      const r = await s.append(
        stream,
        [{ type: 'OrderPlaced', data, metadata: { actor: 'bench', correlation_id: randomUUID() } }],
        { expectedRevision },
      );
      notify(r.position.prepare);
      return r;
    };

    // Appends: 64 streams, one event at a time, exact expected revision.
    const expected: ExpectedRevision[] = Array.from({ length: opts.streams }, () => 'no_stream');
    await Promise.all(
      expected.map(async (e, w) => {
        expected[w] = (await append(store, `a-${w}`, { w }, e)).nextRevision;
      }),
    );
    const appendLatencies: number[] = [];
    const started = performance.now();
    const deadline = started + opts.seconds * 1000;
    await Promise.all(
      expected.map(async (_, w) => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          const data = { order_id: randomUUID(), price: '64123.50000000', quantity: '0.01000000' };
          expected[w] = (await append(store, `a-${w}`, data, expected[w]!)).nextRevision;
          appendLatencies.push(performance.now() - t0);
        }
      }),
    );
    const appendsPerSecond = appendLatencies.length / ((performance.now() - started) / 1000);
    appendLatencies.sort((a, b) => a - b);

    // Subscriber on a separate store: NOTIFY is its only wake-up. 8 writers, 500/s.
    const subscription = reader.subscribeToAll({ after: await reader.headPosition() });
    const latencies: number[] = [];
    let appended = 0;
    const reading = (async () => {
      for await (const batch of subscription) {
        const at = nowMs();
        for (const e of batch) {
          const t = (e.data as { t?: number }).t;
          if (t !== undefined) latencies.push(at - t);
        }
      }
    })();
    const subStarted = performance.now();
    const end = subStarted + opts.seconds * 1000;
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        let revision: ExpectedRevision = 'no_stream';
        for (let k = 0; ; k++) {
          const due = subStarted + w * 2 + k * 16;
          if (due >= end) break;
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          revision = (await append(store, `w-${w}`, { t: nowMs(), k }, revision)).nextRevision;
          appended++;
        }
      }),
    );
    const until = performance.now() + 5000;
    while (latencies.length < appended && performance.now() < until) await sleep(20);
    await subscription.close();
    await Promise.race([reading, sleep(2000)]);
    latencies.sort((a, b) => a - b);
    return {
      variant,
      appendsPerSecond,
      appendP50: percentile(appendLatencies, 50),
      appendP99: percentile(appendLatencies, 99),
      delivered: latencies.length,
      appended,
      latencyP50: percentile(latencies, 50),
      latencyP99: percentile(latencies, 99),
      latencyMax: latencies[latencies.length - 1] ?? Number.NaN,
      notifies,
    };
  } finally {
    await notifier.end().catch(() => {});
    await reader.close();
    await readerHandle.close();
    await store.close();
    await handle.close();
    await dropCurrent();
  }
};

const f = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');

const main = async () => {
  const outcomes: Outcome[] = [];
  for (let round = 1; round <= opts.rounds; round++) {
    for (const variant of ['in-transaction', 'post-commit'] as const) {
      process.stderr.write(`[bench] round ${round}: ${variant}\n`);
      outcomes.push(await run(variant));
    }
  }
  process.stdout.write(
    '| NOTIFY | appends/s (64 streams) | append p50 / p99 ms | subscriber p50 / p99 / max ms | delivered | NOTIFYs sent |\n' +
      '|---|---|---|---|---|---|\n',
  );
  for (const o of outcomes) {
    process.stdout.write(
      `| ${o.variant} | ${Math.round(o.appendsPerSecond)} | ${f(o.appendP50)} / ${f(o.appendP99)} | ` +
        `${f(o.latencyP50)} / ${f(o.latencyP99)} / ${f(o.latencyMax)} | ${o.delivered}/${o.appended} | ` +
        `${o.variant === 'post-commit' ? o.notifies : 'one per append'} |\n`,
    );
  }
};

const abort = (reason: string, code: number) => {
  process.stderr.write(`[bench] ${reason}\n`);
  void dropCurrent().finally(() => process.exit(code));
};
process.once('SIGINT', () => abort('interrupted', 130));
process.once('SIGTERM', () => abort('terminated', 143));
setTimeout(() => abort('timed out', 2), 300_000).unref();

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    process.stderr.write(`[bench] failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    await dropCurrent();
    process.exit(1);
  },
);
