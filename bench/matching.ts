/**
 * Matching-engine benchmark under the realistic fill model (issue 21, "Done when": ticks with 100,000 pending orders
 * stay ≤ 1 ms per tick p99). Unlike `bench/trading.ts --skip-http`, whose fills go to a stub, everything here is
 * what the venue runs:
 *
 * 1. Build: `--wallets` wallets (default 1,000) on a scratch database of the local PostgreSQL server
 *    (`ptv_bench_matching_*`, dropped at the end), each opened with the `realistic` fill model, holding a position
 *    in each of `--symbols` pairs and `--pending` / `--wallets` pending orders (limit, stop-loss and take-profit,
 *    both sides, 0.5–5 % away from 100 USDT in the direction each waits for). Decided in-process by the real wallet
 *    decider and appended through the command handler (quick; as `bench/long-history.ts` builds its wallet).
 * 2. Start: a `MatchingEngine` over the real event store and the real wallet commands reads the log and indexes
 *    the pending orders (timed: the engine's share of a restart).
 * 3. Ticks: `--ticks` prints (a price and a traded quantity) offered at `--rate` prints/s, open loop, each symbol's
 *    price a random walk drifting down through the band of pending orders and back up. Each print goes through
 *    `onTick` (index lookup, queueing of the reached orders: timed per print) while the engine's fills run between
 *    prints as in the server: the real `FillOrder` command, decided by the realistic model (a resting limit takes at
 *    most its participation share, 10 %, of the print's quantity; a triggered stop walks the book), appended to
 *    PostgreSQL. Orders reached but only partly filled stay in the index and are reached again by later prints,
 *    which is the realistic model's extra work per tick.
 *
 * Reports the time per print (all, and those that reached orders), the orders reached, fills and partial fills
 * recorded, event-loop delay, and the load average.
 *
 *   npx tsx bench/matching.ts [--wallets 1000] [--pending 100000] [--symbols 10] [--ticks 20000] [--rate 1000]
 *                             [--url postgres://postgres@127.0.0.1:5432/postgres] [--db-prefix ptv_bench_matching_]
 *                             [--json out.json]
 *
 * Results: docs/benchmarks.md ("Matching engine under the realistic fill model").
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command } from 'commander';
import { sql } from 'kysely';
import { createCommandHandler } from '../commands/handler';
import { createWalletCommands, type MarketView } from '../commands/wallet';
import { fromUnits } from '../domain/market/decimal';
import { DEFAULT_RISK_PROFILE } from '../domain/shared/risk-profile';
import { dec } from '../domain/trading/decimal';
import type { PairFilters } from '../domain/trading/quantity';
import type { OrderRequest, WalletCommand, WalletContext } from '../domain/wallet/commands';
import { walletDecider } from '../domain/wallet/decide';
import { type WalletEvent, walletStreamId } from '../domain/wallet/events';
import { openPostgres } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrate';
import { createPostgresEventStore } from '../src/eventstore/postgres';
import { newAccountOwner } from '../test/support/owner';
import { replayingWalletDecider } from '../test/support/replaying-decider';
import { jsonOption, positiveInt, withScratchDatabase, writeJsonResults } from './options';
import { benchEngine, PENDING_KINDS, seededRandom, timedTick, walkedPrice } from './pending-orders';
import { createScratchDatabase, round, summarize } from './stats';

const o = withScratchDatabase(new Command(), 'ptv_bench_matching_')
  .option('--wallets <n>', 'wallets holding the pending orders', positiveInt, 1000)
  .option('--pending <n>', 'pending orders over all wallets', positiveInt, 100_000)
  .option('--symbols <n>', 'pairs the orders are spread over', positiveInt, 10)
  .option('--ticks <n>', 'prints offered to the engine', positiveInt, 20_000)
  .option('--rate <n>', 'prints per second offered (open loop)', positiveInt, 1000)
  .addOption(jsonOption())
  .parse()
  .opts<{
    wallets: number;
    pending: number;
    symbols: number;
    ticks: number;
    rate: number;
    url: string;
    dbPrefix: string;
    json?: string;
  }>();

const symbols = Array.from({ length: o.symbols }, (_, i) => `SYM${i}USDT`);
const BASE_UNITS = 100 * 1e8; // 100 USDT in 1e-8 units: every pair starts there
const pairOf = (symbol: string): PairFilters => ({
  symbol,
  baseAsset: symbol.replace(/USDT$/, ''),
  status: 'active',
  minQty: '0.00100000',
  stepSize: '0.00100000',
  tickSize: '0.01000000',
  minNotional: '5.00000000',
});
const pairs = new Map(symbols.map((s) => [s, pairOf(s)]));
const prices = new Map(symbols.map((s) => [s, BASE_UNITS]));
/** 24h quote volume of every pair (USDT): a mid-cap pair, so a triggered stop walks a few book levels. */
const QUOTE_VOLUME = '50000000';
const view: MarketView = {
  price: (symbol) => {
    const units = prices.get(symbol);
    return units === undefined
      ? undefined
      : { price: fromUnits(units), timestamp: new Date().toISOString(), source: 'synthetic' };
  },
  pair: (symbol) => pairs.get(symbol),
  quoteVolume24h: () => QUOTE_VOLUME,
};
const RISK = {
  ...DEFAULT_RISK_PROFILE,
  max_position_size_pct: 100,
  max_order_size_pct: 100,
  daily_loss_limit_pct: 100,
  max_open_orders: 100_000,
};

const rand = seededRandom();

const scratch = await createScratchDatabase(o.url, o.dbPrefix);
const handle = openPostgres(scratch.url, { max: 8 });
try {
  await migrateToLatest(handle.db);
  const store = createPostgresEventStore(handle);
  const handler = createCommandHandler(store, replayingWalletDecider);

  // 1. Build.
  const tBuild = performance.now();
  const perWallet = Math.ceil(o.pending / o.wallets);
  let placed = 0;
  for (let w = 0; w < o.wallets && placed < o.pending; w++) {
    const owner = newAccountOwner('10000000.00000000');
    const { ownerId } = owner;
    let state = walletDecider.initialState();
    let id = 0;
    const ctx: WalletContext = {
      now: new Date(),
      newId: () => `${ownerId.slice(0, 8)}-${++id}`,
      prices: (symbol) => view.price(symbol),
      pairs: (symbol) => view.pair(symbol),
      quoteVolume24h: () => dec(QUOTE_VOLUME),
      riskProfile: RISK,
      feeRate: dec('0.001'),
      fillModel: 'realistic',
    };
    const events: WalletEvent[] = [];
    const decide = (command: WalletCommand) => {
      for (const e of walletDecider.decide(command, state, ctx)) {
        state = walletDecider.evolve(state, e);
        events.push(e);
      }
    };
    const place = (order: OrderRequest) =>
      decide({
        type: 'PlaceOrder',
        data: { owner, order: { ...order, idempotencyKey: null, requestHash: null } },
      });
    decide({ type: 'OpenWallet', data: { owner } });
    // A position in every pair, so sell limits and stops have something to sell.
    for (const symbol of symbols) place({ symbol, side: 'buy', type: 'market', quantity: '1000' });
    for (let i = 0; i < perWallet && placed < o.pending; i++, placed++) {
      const [side, type, sign] = PENDING_KINDS[placed % PENDING_KINDS.length]!;
      const symbol = symbols[placed % symbols.length]!;
      const level = fromUnits(Math.round((BASE_UNITS * (1 + sign * (0.005 + rand() * 0.045))) / 1e6) * 1e6);
      place({
        symbol,
        side,
        type,
        quantity: '1',
        ...(type === 'limit' ? { price: level } : { triggerPrice: level }),
      });
    }
    const rejected = events.find((e) => e.type === 'OrderRejected');
    if (rejected) throw new Error(`build: an order was rejected: ${JSON.stringify(rejected.data)}`);
    await handler.handle(walletStreamId(ownerId), { events }, { now: new Date(), newId: randomUUID });
    if ((w + 1) % 100 === 0) console.log(`built ${w + 1} wallets, ${placed} pending orders`);
  }
  const buildSeconds = (performance.now() - tBuild) / 1000;

  // 2. Start: the engine reads the log.
  const wallets = createWalletCommands({
    store,
    db: handle.db,
    market: () => view,
    fillModel: 'realistic',
    profileOf: async () => undefined,
  });
  const engine = benchEngine(store, wallets);
  const tStart = performance.now();
  await engine.start();
  const startMs = performance.now() - tStart;
  const indexed = engine.status().pending_orders;
  if (indexed !== placed) throw new Error(`the engine indexed ${indexed} of ${placed} pending orders`);
  console.log(`engine started in ${round(startMs, 0)} ms with ${indexed} pending orders`);

  // 3. Prints, open loop.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const quiet: number[] = [];
  const active: number[] = [];
  let reachedTotal = 0;
  let maxQueued = 0;
  const t0 = performance.now();
  for (let i = 0; i < o.ticks; i++) {
    const due = t0 + (i * 1000) / o.rate;
    const wait = due - performance.now();
    // Fills run between prints, as they do between the feed's messages in the server.
    if (wait > 1) await sleep(wait);
    else await new Promise((r) => setImmediate(r));
    const symbol = symbols[i % symbols.length]!;
    const next = walkedPrice(prices.get(symbol)!, i, o.ticks, rand);
    prices.set(symbol, next);
    // A print of 0.5–20 units: a resting order of 1 unit takes 10 % of it, so fills over one to twenty prints.
    const quantity = (0.5 + rand() * 19.5).toFixed(3);
    reachedTotal += timedTick(engine, symbol, next, { quiet, active }, quantity);
    maxQueued = Math.max(maxQueued, engine.status().fills_queued);
  }
  const offeredSeconds = (performance.now() - t0) / 1000;
  loopDelay.disable();
  const tIdle = performance.now();
  await engine.idle();
  const drainSeconds = (performance.now() - tIdle) / 1000;
  const status = engine.status();
  await engine.stop();
  const { rows } = await sql<{ filled: string; partial: string; cancelled: string }>`
    select count(*) filter (where type = 'OrderFilled')::text as filled,
           count(*) filter (where type = 'OrderFilled' and (data->>'remaining_quantity')::numeric > 0)::text as partial,
           count(*) filter (where type = 'OrderCancelled')::text as cancelled
    from events where stream_id like 'wallet-%'`.execute(handle.all);
  const counts = rows[0]!;
  const result = {
    machine: {
      cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`,
      load_average_1m_at_end: round(os.loadavg()[0]!, 2),
      node: process.version,
      date: new Date().toISOString(),
    },
    options: o,
    build_seconds: round(buildSeconds, 1),
    engine_start_ms: round(startMs, 0),
    pending_orders: placed,
    ticks: o.ticks,
    offered_seconds: round(offeredSeconds, 1),
    achieved_rate: round(o.ticks / offeredSeconds, 0),
    reached: reachedTotal,
    fill_events: Number(counts.filled) - o.wallets * o.symbols, // less the build's market buys
    partial_fill_events: Number(counts.partial),
    cancels: Number(counts.cancelled),
    fills_by_engine: status.fills,
    left_pending: status.pending_orders,
    max_fills_queued: maxQueued,
    drain_seconds_after_last_tick: round(drainSeconds, 1),
    tick_ms_no_fill: summarize(quiet),
    tick_ms_reaching_orders: summarize(active),
    tick_ms_all: summarize([...quiet, ...active]),
    event_loop_delay_ms: {
      p50: round(loopDelay.percentile(50) / 1e6),
      p99: round(loopDelay.percentile(99) / 1e6),
      max: round(loopDelay.max / 1e6),
    },
  };
  console.log(JSON.stringify(result, null, 2));
  writeJsonResults(o.json, result);
} finally {
  await handle.close();
  await scratch.drop();
}
process.exit(0);
