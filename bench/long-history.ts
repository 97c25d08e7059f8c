/**
 * Long-lived wallets (issue 20): what a cold command and a history page cost against the size of one wallet's
 * history. For each size N (default 10,000 and 100,000 orders) on a fresh database of the local PostgreSQL server
 * (or PGlite with `--pglite`):
 *
 * 1. Builds one wallet of N market orders (alternating buy and sell, each an `OrderPlaced` and an `OrderFilled`):
 *    the real wallet decider decides every order in-process and the events are appended through the command
 *    handler (`createCommandHandler`, the same append and snapshot path as the wallet commands) in chunks of 500
 *    orders, with snapshots on — so it takes seconds, not the N round trips of one command per order.
 * 2. Folds them into the trades read model (the `orders` projection, as the server does).
 * 3. "Restarts" `--restarts` times per mode: a new event store and new wallet commands (empty state cache), then
 *    times the first `placeOrder` (a market order: load, decide, append — the `command` of `Server-Timing`) and the
 *    next one; with snapshots off (`SNAPSHOT_EVERY=0`, the control: the whole stream is replayed) and on
 *    (`--every`, default 500).
 *    With `--keys`, every built order carries an idempotency key (as a bot that sends one with each order), all of
 *    them within the 24 h window; the snapshot's size (`octet_length` of the stored row) and the time to encode the
 *    final state (`walletSnapshotCodec.encode`, median of 5, on the main thread) are reported either way.
 * 4. Times `--samples` reads of the trade history page (`queries/trading` `listTrades`, what `GET /trade/history`
 *    runs, 50 rows, its `total` summed from `trade_counts`) at the first, middle and last page, by `offset` and by
 *    keyset `cursor` at the same depth, and the `count(*)` of the owner's fills that every page ran for its `total`
 *    before (the control), and reports p50/p99.
 *
 *   npx tsx bench/long-history.ts [--sizes 10000,100000] [--every 500] [--restarts 3] [--samples 50]
 *                                 [--url postgres://postgres@127.0.0.1:5432/postgres] [--pglite] [--json FILE]
 *                                 [--keys] [--db-prefix ptv_bench_history_]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { Command } from 'commander';
import { sql } from 'kysely';
import pg from 'pg';
import { createCommandHandler } from '../commands/handler';
import { Snapshotter } from '../commands/snapshots';
import { createWalletCommands, type MarketView } from '../commands/wallet';
import { type WalletTimeTravel, walletSnapshotFormat } from '../commands/wallet-time-travel';
import { DEFAULT_RISK_PROFILE } from '../domain/shared/risk-profile';
import { dec } from '../domain/trading/decimal';
import type { WalletCommand, WalletContext } from '../domain/wallet/commands';
import { walletDecider } from '../domain/wallet/decide';
import { type WalletEvent, walletOwnerOf, walletStreamId } from '../domain/wallet/events';
import { walletSnapshotCodec } from '../domain/wallet/snapshot';
import type { WalletState } from '../domain/wallet/state';
import type { LogPosition } from '../ports/event-store';
import { ordersProjection } from '../projections/orders';
import { ProjectionRunner } from '../projections/runner';
import { streamSummariesProjection } from '../projections/stream-summaries';
import { walletsProjection } from '../projections/wallets';
import { listOrders, listTrades } from '../queries/trading';
import { walletAsOf } from '../src/audit/wallet-as-of';
import { auditWalletNow, replayWallet } from '../src/audit/wallet-audit';
import { type DatabaseHandle, openPGlite, openPostgres } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrate';
import { createPostgresEventStore } from '../src/eventstore/postgres';
import { createSqlSnapshotStore } from '../src/eventstore/snapshots';
import { accountTradingProfile } from '../test/support/owner';
import { replayingWalletDecider } from '../test/support/replaying-decider';
import { PAIRS } from '../test/trading/support';

const program = new Command()
  .option('--sizes <list>', 'orders per wallet, comma-separated', '10000,100000')
  .option('--every <n>', 'SNAPSHOT_EVERY of the snapshot runs', '500')
  .option('--restarts <n>', 'cold starts timed per mode', '3')
  .option('--samples <n>', 'reads per history page', '50')
  .option('--url <url>', 'PostgreSQL server', 'postgres://postgres@127.0.0.1:5432/postgres')
  .option('--pglite', 'in-memory PGlite instead of the server')
  .option('--json <file>', 'also write the results as JSON')
  .option('--keys', 'every built order carries an idempotency key')
  .option('--db-prefix <prefix>', 'name prefix of the bench database on the server', 'ptv_bench_history_')
  .option('--build-only', 'build the wallet and keep its database (printed) without folding or timing it')
  .option(
    '--into <db>',
    'with --build-only: build the wallet into this existing database (another wallet beside those it holds)',
  )
  .option(
    '--reuse <db>',
    'time the wallet a --build-only run left in this database (then dropped unless --keep)',
  )
  .option('--keep', 'keep the database at the end (its name is printed)')
  .parse();
const o = program.opts<{
  sizes: string;
  every: string;
  restarts: string;
  samples: string;
  url: string;
  pglite?: boolean;
  json?: string;
  keys?: boolean;
  dbPrefix: string;
  buildOnly?: boolean;
  into?: string;
  reuse?: string;
  keep?: boolean;
}>();
const every = Number(o.every);

const PAIR = PAIRS.BTCUSDT!;
const view: MarketView = {
  price: () => ({ price: '40000', timestamp: new Date().toISOString(), source: 'synthetic' }),
  pair: (s) => (s === 'BTCUSDT' ? PAIR : undefined),
  quoteVolume24h: () => '400000000',
};
const RISK = {
  ...DEFAULT_RISK_PROFILE,
  max_position_size_pct: 100,
  max_order_size_pct: 100,
  daily_loss_limit_pct: 100,
};

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const median = (values: number[]) => percentile(values, 50);
const ms = (v: number) => Number(v.toFixed(2));

/** A fresh database: a new one on the server (dropped at the end), or an in-memory PGlite. */
const freshDatabase = async (): Promise<{ handle: DatabaseHandle; drop: () => Promise<void> }> => {
  if (o.pglite) {
    const handle = await openPGlite();
    await migrateToLatest(handle.db);
    return { handle, drop: () => handle.close() };
  }
  const existing = o.reuse ?? (o.buildOnly ? o.into : undefined);
  const name = existing ?? `${o.dbPrefix}${randomBytes(4).toString('hex')}`;
  if (!existing) {
    const admin = new pg.Client({ connectionString: o.url });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
  }
  const url = new URL(o.url);
  url.pathname = `/${name}`;
  const handle = openPostgres(url.toString(), { max: 8 });
  await migrateToLatest(handle.db);
  return {
    handle,
    drop: async () => {
      await handle.close();
      if (o.keep || o.buildOnly) {
        console.log(`database kept: ${name}`);
        return;
      }
      const a = new pg.Client({ connectionString: o.url });
      await a.connect();
      await a.query(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
};

const results: Record<string, unknown>[] = [];

/** The wallet a `--build-only` run left in the database: its owner, session and size. */
const builtWallet = async (
  handle: DatabaseHandle,
): Promise<{ ownerId: string; sessionId: string; orders: number; events: number }> => {
  const { rows } = await sql<{ stream_id: string; revision: string; session_id: string }>`
    select s.stream_id, s.revision::text,
      (select e.data->>'session_id' from events e
        where e.stream_id = s.stream_id and e.data ? 'session_id' order by e.revision limit 1) as session_id
    from streams s where s.stream_id like 'wallet-%' order by s.revision desc limit 1`.execute(handle.all);
  const row = rows[0];
  if (!row) throw new Error('no wallet in the reused database');
  const events = Number(row.revision) + 1;
  return {
    ownerId: walletOwnerOf(row.stream_id)!,
    sessionId: row.session_id,
    orders: (events - 3) / 2,
    events,
  };
};

const sizes = o.reuse ? [0] : o.sizes.split(',').map(Number);
for (let size of sizes) {
  const { handle, drop } = await freshDatabase();
  try {
    const reused = o.reuse ? await builtWallet(handle) : undefined;
    if (reused) size = reused.orders;
    const ownerId = reused?.ownerId ?? randomUUID();
    const stream = walletStreamId(ownerId);
    const profile = accountTradingProfile(ownerId, '100000000.00000000', RISK, reused?.sessionId);
    const owner = {
      ownerId,
      ownerType: 'account' as const,
      accountId: ownerId,
      status: 'active' as const,
      accountStatus: 'active' as const,
      sessionId: profile.sessionId,
      startingBalance: profile.startingBalance,
    };

    // 1. Build: decide every order in-process, append through the command handler in chunks.
    const built = performance.now();
    const store = createPostgresEventStore(handle);
    const snapshots = createSqlSnapshotStore(handle.all);
    const writer = new Snapshotter<WalletState, WalletTimeTravel>({
      store: snapshots,
      codec: walletSnapshotFormat,
      every,
    });
    const handler = createCommandHandler(store, replayingWalletDecider, { snapshots: writer });
    let state = walletDecider.initialState();
    let id = 0;
    const ctx = (): WalletContext => ({
      now: new Date(),
      newId: () => `${ownerId.slice(0, 8)}-${++id}`,
      prices: (symbol) => view.price(symbol),
      pairs: (symbol) => view.pair(symbol),
      quoteVolume24h: () => dec('400000000'),
      riskProfile: RISK,
      feeRate: dec('0.001'),
    });
    const decide = (command: WalletCommand, into: WalletEvent[]) => {
      const events = walletDecider.decide(command, state, ctx());
      for (const e of events) state = walletDecider.evolve(state, e);
      into.push(...events);
    };
    let events = reused?.events ?? 0;
    for (let placed = reused ? size : 0; placed < size; ) {
      const chunk: WalletEvent[] = [];
      if (placed === 0) decide({ type: 'OpenWallet', data: { owner } }, chunk);
      for (let i = 0; i < 500 && placed < size; i++, placed++) {
        decide(
          {
            type: 'PlaceOrder',
            data: {
              owner,
              order: {
                symbol: 'BTCUSDT',
                side: placed % 2 ? 'sell' : 'buy',
                type: 'market',
                quantity: '0.001',
                ...(o.keys ? { idempotencyKey: `bench-key-${placed}`, requestHash: `bench-${placed}` } : {}),
              },
            },
          },
          chunk,
        );
      }
      await handler.handle(stream, { events: chunk }, { now: new Date(), newId: randomUUID });
      events += chunk.length;
    }
    await writer.idle();
    const buildSeconds = (performance.now() - built) / 1000;
    // The snapshot as stored, and what encoding the final state costs (the snapshotter does it on the main thread).
    const { rows: storedRows } = await sql<{ bytes: string }>`
      select octet_length(state)::text as bytes from snapshots where stream_id = ${stream}`.execute(
      handle.all,
    );
    const stored = storedRows[0];
    const encodeTimes: number[] = [];
    // (A reused wallet's state was not folded here: its encoding is not timed.)
    for (let i = 0; i < (reused ? 0 : 5); i++) {
      const t0 = performance.now();
      walletSnapshotCodec.encode(state);
      encodeTimes.push(performance.now() - t0);
    }
    const snapshot = {
      bytes: Number(stored?.bytes ?? 0),
      encode_ms: encodeTimes.length ? ms(median(encodeTimes)) : null,
    };
    console.log(`${size} orders: snapshot ${snapshot.bytes} bytes, encoded in ${snapshot.encode_ms} ms`);

    if (o.buildOnly) {
      console.log(`${size} orders: ${events} events built in ${buildSeconds.toFixed(1)} s`);
      continue;
    }

    // 2. The trades read model.
    const folded = performance.now();
    // The read models `audit replay` compares with the fold, beside the lists' `orders`.
    const runner = new ProjectionRunner(store, handle.db, [
      ordersProjection,
      walletsProjection,
      streamSummariesProjection,
    ]);
    await runner.start();
    if (!(await runner.waitFor(await store.headPosition(), 600_000)))
      throw new Error('projection did not catch up');
    await runner.stop();
    const foldSeconds = (performance.now() - folded) / 1000;
    await store.close();
    console.log(
      `${size} orders: ${events} events built in ${buildSeconds.toFixed(1)} s, folded into trades in ${foldSeconds.toFixed(1)} s`,
    );

    // 3. Cold first order after a restart, with snapshots off (control) and on.
    const cold: Record<string, { first: number[]; next: number[] }> = {};
    for (const mode of ['off', 'on'] as const) {
      cold[mode] = { first: [], next: [] };
      for (let r = 0; r < Number(o.restarts); r++) {
        const restartedStore = createPostgresEventStore(handle);
        const wallets = createWalletCommands({
          store: restartedStore,
          db: handle.db,
          market: () => view,
          profileOf: async () => profile,
          snapshots: { store: snapshots, every: mode === 'on' ? every : 0 },
        });
        const order = { symbol: 'BTCUSDT', side: 'buy' as const, type: 'market' as const, quantity: '0.001' };
        const t0 = performance.now();
        // With `--keys` the timed order is keyed too: its key's lookup (or, before, the claims' fold) is timed.
        const key = o.keys ? { key: `timed-${mode}-${r}`, requestHash: `timed-${mode}-${r}` } : undefined;
        const first = await wallets.placeOrder({ accountId: ownerId }, order, { actor: 'bench' }, key);
        const t1 = performance.now();
        await wallets.placeOrder({ accountId: ownerId }, { ...order, side: 'sell' }, { actor: 'bench' });
        const t2 = performance.now();
        if (first.kind !== 'filled') throw new Error(`the timed order was ${first.kind}`);
        cold[mode].first.push(t1 - t0);
        cold[mode].next.push(t2 - t1);
        await wallets.snapshotsWritten();
        await restartedStore.close();
      }
    }

    // 4. History pages: first, middle, last (50 rows each, newest first), by offset (the spec's page) and by
    // cursor at the same depth (the keyset page: `cursor` = the seq of the row just above it), and, as a control,
    // the `count(*)` of the owner's fills that every page ran for its `total` before `trade_counts`.
    const total = (await listTrades(handle.db, ownerId, { limit: 1, offset: 0 })).total;
    const pages: Record<string, Record<string, { p50: number; p99: number }>> = {};
    const timed = async (read: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < Number(o.samples); i++) {
        const t0 = performance.now();
        await read();
        times.push(performance.now() - t0);
      }
      return { p50: ms(median(times)), p99: ms(percentile(times, 99)) };
    };
    // The first, middle and last 50-row page of a list of `total` rows: its offset, and the same page by cursor
    // (`before`: the seq of the row just above it).
    const pagesOf = async (
      total: number,
      list: (page: { limit: number; offset: number }) => Promise<{ rows: { seq: number }[] }>,
    ) => {
      const out: { name: string; offset: number; byCursor: { limit: number; offset: 0; before?: number } }[] =
        [];
      for (const [name, offset] of [
        ['first', 0],
        ['middle', Math.floor(total / 2 / 50) * 50],
        ['last', Math.max(0, Math.floor((total - 1) / 50) * 50)],
      ] as const) {
        const above = offset === 0 ? undefined : (await list({ limit: 1, offset: offset - 1 })).rows[0]!.seq;
        out.push({
          name,
          offset,
          byCursor: { limit: 50, offset: 0, ...(above === undefined ? {} : { before: above }) },
        });
      }
      return out;
    };
    // The `count(*)` of the owner's rows of a read model that every page ran for its `total` before the counts.
    const countStar = (table: 'trades' | 'orders') =>
      handle.db
        .selectFrom(table)
        .where('owner_id', '=', ownerId)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
    for (const { name, offset, byCursor } of await pagesOf(total, (page) =>
      listTrades(handle.db, ownerId, page),
    )) {
      const byOffset = await listTrades(handle.db, ownerId, { limit: 50, offset });
      const cursorPage = await listTrades(handle.db, ownerId, byCursor);
      if (byOffset.rows.length === 0 || byOffset.rows[0]!.trade_id !== cursorPage.rows[0]!.trade_id)
        throw new Error(`the ${name} page by cursor is not the page by offset`);
      pages[name] = {
        offset: await timed(() => listTrades(handle.db, ownerId, { limit: 50, offset })),
        cursor: await timed(() => listTrades(handle.db, ownerId, byCursor)),
        count_star: await timed(() => countStar('trades')),
      };
    }
    // 5. Order list pages (`listOrders`, what `GET /trade/orders` runs, 50 rows, `total` from `order_counts`) by
    // cursor at the first, middle and last page, and the `count(*)` of the owner's orders every page ran before.
    const orderTotal = (await listOrders(handle.db, ownerId, { limit: 1, offset: 0 })).total;
    const orderPages: Record<string, Record<string, { p50: number; p99: number }>> = {};
    for (const { name, byCursor } of await pagesOf(orderTotal, (page) =>
      listOrders(handle.db, ownerId, page),
    )) {
      const check = await listOrders(handle.db, ownerId, byCursor);
      if (check.rows.length === 0 || check.total !== orderTotal)
        throw new Error(`the ${name} order page is wrong`);
      orderPages[name] = {
        cursor: await timed(() => listOrders(handle.db, ownerId, byCursor)),
        count_star: await timed(() => countStar('orders')),
      };
    }

    // 6. Time travel (`GET /account/portfolio?as_of=`): `walletAsOf` (with the wallet's snapshot, as the server
    // runs it: a time after the snapshot's latest event starts from it) early (after 1 % of the events), in the
    // middle, and after the last event, against the whole-stream read it replaced (the control).
    const auditStore = createPostgresEventStore(handle);
    // Ordered by the column, not the text alias: by the text, "100001" came before "2000" and the 100,000-order
    // runs before 2026-11-28 19:00 UTC reported the middle time as "early" and the early one as "middle".
    const timesOf = await sql<{ revision: string; at: string }>`
      select revision::text, metadata->>'occurred_at' as at from events
      where stream_id = ${stream} and revision in (${Math.floor(events / 100)}, ${Math.floor(events / 2)})
      order by events.revision`.execute(handle.all);
    const asOfs = {
      early: new Date(timesOf.rows[0]!.at),
      middle: new Date(timesOf.rows[1]!.at),
      latest: new Date(Date.now() + 86_400_000),
    };
    const asOfMs: Record<string, { as_of_ms: number; whole_stream_read_ms: number }> = {};
    const once = async (run: () => Promise<unknown>) => {
      const t0 = performance.now();
      await run();
      return ms(performance.now() - t0);
    };
    for (const [name, at] of Object.entries(asOfs)) {
      // Median of 3 each (one read warms the connection and the pages).
      const three = async (run: () => Promise<unknown>) =>
        median([await once(run), await once(run), await once(run)]);
      asOfMs[name] = {
        as_of_ms: await three(() => walletAsOf(auditStore, ownerId, at, { snapshots })),
        // A page of 5,000 at a time: one read of 2,000,003 events (1,000,000 orders) would not fit in the heap.
        whole_stream_read_ms: await three(async () => {
          for (let from = 0; ; from += 5_000) {
            const page = await auditStore.readStream(stream, { fromRevision: from, maxCount: 5_000 });
            if (page.length < 5_000) break;
          }
        }),
      };
    }

    // 7. One agent's audit (`GET /account/audit`, `auditWalletNow`: read and fold the whole stream a page at a time,
    // check its hash chain, compare with the read models; `audit replay` does the same and also prints every event,
    // holding them all: up to 100,000 orders), and the read of the whole log 00de716's matching engine did at every
    // start (`readAll` in pages of 5,000 from the start).
    const replay =
      size <= 100_000
        ? await once(() => replayWallet(auditStore, handle.db, ownerId))
        : await once(() => auditWalletNow(auditStore, handle.db, ownerId));
    let logEvents = 0;
    const logRead = await once(async () => {
      for (let after: LogPosition | undefined; ; ) {
        const page = await auditStore.readAll({ ...(after ? { after } : {}), maxCount: 5_000 });
        logEvents += page.events.length;
        if (page.events.length < 5_000) break;
        after = page.next;
      }
    });
    await auditStore.close();
    console.log(
      `${size} orders: as_of ${JSON.stringify(asOfMs)}; audit replay ${replay} ms; start-up log read ${logEvents} events in ${logRead} ms`,
    );

    const row = {
      orders: size,
      events,
      trades: total,
      backend: o.pglite ? 'pglite' : 'postgres',
      snapshot_every: every,
      keyed_orders: o.keys === true,
      snapshot,
      cold_first_order_ms: {
        snapshots_off: ms(median(cold.off!.first)),
        snapshots_on: ms(median(cold.on!.first)),
        runs_off: cold.off!.first.map(ms),
        runs_on: cold.on!.first.map(ms),
      },
      next_order_ms: { snapshots_off: ms(median(cold.off!.next)), snapshots_on: ms(median(cold.on!.next)) },
      history_page_ms: pages,
      order_rows: orderTotal,
      order_page_ms: orderPages,
      portfolio_as_of_ms: asOfMs,
      audit_replay_ms: replay,
      startup_log_read: { events: logEvents, ms: logRead },
      load_average: os.loadavg().map((l) => Number(l.toFixed(2))),
    };
    results.push(row);
    console.log(JSON.stringify(row));
  } finally {
    await drop();
  }
}

if (o.json)
  fs.writeFileSync(o.json, `${JSON.stringify({ date: new Date().toISOString(), results }, null, 2)}\n`);
