/**
 * Restart of a venue process against a long log (issue 20, "the restart time of a process against a log of N
 * events"): the real process (`src/main.ts serve`, what `npm start` runs: API, projections and matching engine in
 * one process) started `--restarts` times on the database `--db` of the PostgreSQL server, and the same on a fresh
 * empty database (the control: what a start costs with no history at all). Each start is timed from the spawn to
 *
 *   - `listening`: the process logs `paper-trading venue listening`;
 *   - `ready`: every projection's live generation has folded the log up to its head as it was at the spawn (read
 *     from the database: `/health` counts each projection's lag by reading the log after its checkpoint, which
 *     during a long catch-up takes longer than its 2 s probe), then `GET /health` (as the operator) shows the
 *     matching engine ready (its index of pending orders built: seeded from the `orders` read model, then the log
 *     after it).
 *
 * The first start on `--db` also folds whatever the read models have not folded yet (its `ready` is then the
 * catch-up, reported apart); the restarts after it are what a deploy or a failover costs. For scale, the bench then
 * reads the whole log in pages of 5,000 events (`EventStore.readAll`), the read every start of 00de716's matching
 * engine made before it built its index (`docs/benchmarks.md`, "Long-lived wallets"), and reports its rate.
 *
 * A long log to start on: `bench/long-history.ts --sizes 1000000 --build-only` leaves a database with one wallet of
 * 2,000,003 events (its name is printed).
 *
 *   npx tsx bench/restart.ts --db h_lead_hist_4f39861b [--restarts 3] [--port 9890]
 *                            [--url postgres://postgres@127.0.0.1:5432/postgres] [--skip-read] [--json FILE]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { sql } from 'kysely';
import { comparePositions, type LogPosition } from '../ports/event-store';
import { liveCheckpoints } from '../projections/generations';
import { allProjections } from '../projections/registry';
import { openPostgres } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrate';
import { createPostgresEventStore } from '../src/eventstore/postgres';
import { positiveInt } from './options';
import { createScratchDatabase, round } from './stats';

const program = new Command()
  .requiredOption('--db <name>', 'database on the server holding the long log')
  .option('--restarts <n>', 'starts timed after the first one', positiveInt, 3)
  .option('--port <n>', 'port of the venue', positiveInt, 9890)
  .option('--url <url>', 'PostgreSQL server', 'postgres://postgres@127.0.0.1:5432/postgres')
  .option('--skip-read', 'do not time the read of the whole log')
  .option('--json <file>', 'also write the results as JSON')
  .parse();
const o = program.opts<{
  db: string;
  restarts: number;
  port: number;
  url: string;
  skipRead?: boolean;
  json?: string;
}>();

const ROOT = path.resolve(import.meta.dirname, '..');
const TOKEN = 'restart-bench-operator-token-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const urlOf = (db: string) => {
  const url = new URL(o.url);
  url.pathname = `/${db}`;
  return url.toString();
};

interface Health {
  checks?: Record<string, { status: string; ready?: boolean }>;
}

/** The log's head and a check that every projection's live generation has folded up to it. */
const foldedUpTo = async (db: string) => {
  const handle = openPostgres(urlOf(db), { max: 1 });
  const store = createPostgresEventStore(handle);
  const head = await store.headPosition();
  return {
    folded: async () => {
      const checkpoints = await liveCheckpoints(handle.db);
      return allProjections.every((p) => {
        const c = checkpoints.get(p.name);
        return c !== undefined && comparePositions(c, head) >= 0;
      });
    },
    close: async () => {
      await store.close();
      await handle.close();
    },
  };
};

/** One start of the venue on `db`: spawn → listening → ready (ms), then a graceful stop. */
const start = async (db: string): Promise<{ listening_ms: number; ready_ms: number; stop_ms: number }> => {
  const log = await foldedUpTo(db);
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: urlOf(db),
      PORT: String(o.port),
      HOST: '127.0.0.1',
      OPERATOR_TOKEN: TOKEN,
      LOG_LEVEL: 'info',
      DATA_DIR: path.join(os.tmpdir(), `restart-bench-${o.port}`),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let listening: number | undefined;
  child.stdout!.on('data', (chunk: Buffer) => {
    if (listening === undefined && chunk.toString().includes('paper-trading venue listening'))
      listening = performance.now() - started;
  });
  let ready: number | undefined;
  let folded = false;
  for (let i = 0; ready === undefined; i++) {
    if (child.exitCode !== null) throw new Error(`the venue exited with ${child.exitCode}`);
    if (i > 36_000) throw new Error('the venue was not ready in an hour');
    if (listening !== undefined) {
      folded ||= await log.folded();
      const res = folded
        ? await fetch(`http://127.0.0.1:${o.port}/health`, {
            headers: { authorization: `Bearer ${TOKEN}` },
          }).catch(() => undefined)
        : undefined;
      if (res?.ok && ((await res.json()) as Health).checks?.['matching_engine']?.ready === true)
        ready = performance.now() - started;
    }
    if (ready === undefined) await sleep(50);
  }
  await log.close();
  const stopping = performance.now();
  child.kill('SIGTERM');
  await exited;
  return {
    listening_ms: round(listening!, 0),
    ready_ms: round(ready, 0),
    stop_ms: round(performance.now() - stopping, 0),
  };
};

/** The log's size: events and streams. */
const sizeOf = async (db: string) => {
  const handle = openPostgres(urlOf(db), { max: 2 });
  try {
    const { rows } = await sql<{ events: string; streams: string }>`
      select (select count(*) from events)::text as events, (select count(*) from streams)::text as streams`.execute(
      handle.all,
    );
    return { events: Number(rows[0]!.events), streams: Number(rows[0]!.streams) };
  } finally {
    await handle.close();
  }
};

/** Reads the whole log in pages of 5,000 (what 00de716's matching engine did at every start): events/s. */
const readWholeLog = async (db: string) => {
  const handle = openPostgres(urlOf(db), { max: 2 });
  const store = createPostgresEventStore(handle);
  try {
    const t = performance.now();
    let events = 0;
    for (let after: LogPosition | undefined; ; ) {
      const page = await store.readAll({ ...(after ? { after } : {}), maxCount: 5_000 });
      events += page.events.length;
      if (page.events.length < 5_000) break;
      after = page.next;
    }
    const seconds = (performance.now() - t) / 1000;
    return { events, seconds: round(seconds, 1), events_per_second: Math.round(events / seconds) };
  } finally {
    await store.close();
    await handle.close();
  }
};

const report: Record<string, unknown> = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  load_average_at_start: os.loadavg().map((l) => round(l, 2)),
};

const runs = async (db: string) => {
  const first = await start(db);
  // After the first start, which migrates an empty database.
  const size = await sizeOf(db);
  console.log(`== ${db}: ${size.events} events in ${size.streams} streams`);
  console.log('first start (folds what the read models lack):', first);
  const restarts = [];
  for (let i = 0; i < o.restarts; i++) {
    const r = await start(db);
    console.log(
      `restart ${i + 1}:`,
      r,
      'load',
      os.loadavg().map((l) => round(l, 2)),
    );
    restarts.push({ ...r, load_average: os.loadavg().map((l) => round(l, 2)) });
  }
  return { ...size, first, restarts };
};

report['long_log'] = await runs(o.db);
const empty = await createScratchDatabase(o.url, 'h_restart_empty_');
try {
  // Migrated as the venue's first start would (the readiness check reads the log's head before the spawn).
  const handle = openPostgres(empty.url, { max: 1 });
  await migrateToLatest(handle.db);
  await handle.close();
  report['empty_log'] = await runs(empty.name);
} finally {
  await empty.drop();
}
if (!o.skipRead) {
  const read = await readWholeLog(o.db);
  console.log('read of the whole log (00de716 start):', read);
  report['whole_log_read'] = read;
}
report['load_average_at_end'] = os.loadavg().map((l) => round(l, 2));
if (o.json) writeFileSync(o.json, `${JSON.stringify(report, null, 2)}\n`);
