import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { decisionIds } from '../../commands/backtest';
import { stepBacktestSliced } from '../../domain/backtest/decide';
import { BACKTEST_STEPPED_ELIDED, type BacktestStreamEvent } from '../../domain/backtest/events';
import { buildSessionMarket, type SessionMarket } from '../../domain/backtest/market';
import type { BacktestState } from '../../domain/backtest/state';
import { stepBattleSliced } from '../../domain/battle/decide';
import type { BattleEvent } from '../../domain/battle/events';
import type { BattleState } from '../../domain/battle/state';
import type { Candle } from '../../domain/market/candle';
import type { Interval } from '../../domain/market/intervals';
import { DomainError } from '../../domain/shared/errors';
import { decodeState } from '../../domain/shared/state-codec';
import type { PairFilters } from '../../domain/trading/quantity';
import { encodeDataText } from '../eventstore/data-text';
import { MarketCandles } from '../market/candles';
import { ColumnStore } from '../market/store/column-store';
import { candlesFromColumns } from '../market/store/convert';
import { errorText } from '../workers/error-text';
import { markUncaughtErrors } from '../workers/thread-death';
import { readPairChunk } from './chunk-read';
import { type ChunkedPair, chunkCandlesBound, chunkedMarket } from './chunked-market';
import { type SharedSeriesColumns, seriesOfShared } from './shared-series';

// An error this thread does not catch ends it: marked, the stepper runs the task once more (`thread-death.ts`).
markUncaughtErrors();

/**
 * A session market as it crosses to a worker thread: each pair's filters and columns in shared memory (posting it
 * shares the memory, no candle is copied; the thread builds no candle objects either) — or, for a market read in
 * chunks (`chunked-market.ts`), its pairs, chunk size and candle store: the thread reads each chunk its clock
 * reaches from the store itself (`chunk-read.ts`, as the request thread would), or asks for it on the task's `port`
 * (the pairs of the task's `remote`).
 */
export type MarketTransfer =
  | {
      interval: Interval;
      pairs: { filters: PairFilters; shared: SharedSeriesColumns }[];
      chunked?: undefined;
    }
  | {
      interval: Interval;
      chunked: {
        spanCandles: number;
        pairs: ChunkedPair[];
        /**
         * The candle store the chunks are read from (its directory) and the session's end (ms): the thread reads
         * the chunks of the pairs not in the task's `remote` itself, from its own read-only view of the store.
         */
        store?: { root: string; end: number };
      };
      pairs?: undefined;
    };

/** One `StepBacktest` or `StepBattle` for a worker thread (see `stepper.ts`). */
export interface StepTask {
  /** Which decider's step: a backtest session's or a historical battle's. */
  kind: 'backtest' | 'battle';
  /** Identifies the market: the worker keeps the markets it built, by key, and asks for one it lacks. */
  key: string;
  /** The market, sent when the worker answered `{ miss: true }` for `key`. */
  market?: MarketTransfer;
  /** The session's (or battle's) id: the decision's ids derive from it. */
  sessionId: string;
  /** The revision the decision's first event is appended at (ids derive from it). */
  revision: number;
  /** The session's state, `encodeState` text (exact decimals). */
  state: string;
  steps: number;
  /** Wall clock of the command (ms). */
  now: number;
  /**
   * A chunked market's channel to the request thread, for the pairs of `remote`: the thread posts `{ c, i }` (chunk
   * `c` of the `i`-th pair) and is answered `{ c, i, columns }` (or `{ c, i, error }`). A `MessagePort` on a
   * worker thread; in a stepping process (`step-process.ts`) the task's side messages over the IPC channel.
   */
  port?: ChunkPort;
  /**
   * Pairs (indices, sorted by symbol) of a chunked market whose chunks only the request thread can read (live
   * minutes in its memory), or every pair when the market names no store. Absent: none.
   */
  remote?: number[];
  /** Steps between two checks of the slice's time. */
  sliceSteps: number;
  /** CPU time (ms) a task computes before it lets the worker's other tasks run. */
  sliceMs: number;
}

/** What the request thread answers a chunk request with (see `StepTask.port`). */
export interface ChunkReply {
  c: number;
  i: number;
  columns?: SharedSeriesColumns;
  error?: string;
}

/** The stepping side of a chunked market's channel to the request thread (`StepTask.port`). */
export interface ChunkPort {
  on(event: 'message', listener: (m: ChunkReply) => void): unknown;
  off(event: 'message', listener: (m: ChunkReply) => void): unknown;
  postMessage(m: { c: number; i: number }): void;
  /**
   * In a stepping process, aborted when the venue abandons the task (`SideChannel.signal`: it failed the batch
   * and answers no more chunks): a chunk waited for rejects with its reason, so the task ends (a `failed` answer
   * the venue ignores) instead of waiting forever. Absent on a thread (a `MessagePort`).
   */
  signal?: AbortSignal;
}

/**
 * A task that only starts the thread: piscina loads this module when the thread starts, so a session's first batch
 * finds it loaded (see `PooledStepper.warm`).
 */
export interface WarmTask {
  kind: 'warm';
}

/**
 * Every pair's last candle closed by virtual time `at` (the batch's end), read from the candle store on the
 * stepping thread (`lastsOf`): what the step response shows of each pair (its `prices`), which the request
 * thread would otherwise read one candle per pair (~1 ms each at 1m, 100 pairs per batch answer). By pair index
 * (sorted by symbol); `null` for no candle, absent (undefined) for a pair the request thread reads itself.
 */
export interface LastCandles {
  at: number;
  candles: (Candle | null | undefined)[];
}

/**
 * An event of the answer whose data this thread encoded (`NewEvent.dataText`): `events[index]`'s whole data as its
 * canonical JSON in UTF-8, its buffer transferred to the request thread (not copied), while the event in `events`
 * goes without the key the encoding was for (`BACKTEST_STEPPED_ELIDED.key`).
 */
export interface EncodedData {
  index: number;
  text: Uint8Array;
}

/**
 * What a worker answers: the decided events, a refusal of the decider (a `DomainError`: its code, message,
 * details, HTTP status), what else the task threw (`failed`: its message and stack — a bug in the decider, a bad
 * input, a chunk that could not be read; the request fails with 500 INTERNAL_ERROR, not retried), or a request
 * for the market. The task answers its own errors, so a stepping thread's or process's task never rejects: a
 * rejection is the thread's or process's end (`stepper.ts`).
 */
export type StepAnswer =
  | { events: BacktestStreamEvent[] | BattleEvent[]; lasts?: LastCandles; encoded?: EncodedData[] }
  | {
      error: {
        code: DomainError['code'];
        message: string;
        details?: Record<string, unknown>;
        status: number;
      };
    }
  | { failed: { message: string; stack?: string } }
  | { miss: true };

/**
 * Markets seen by this thread, bounded by candles referenced (many sessions on the same market share one; the
 * memory is the request thread's shared columns, so an entry costs little more than its key).
 */
const WORKER_CANDLES = Number(process.env.BACKTEST_WORKER_CANDLES ?? 8_000_000);
const markets = new LRUCache<string, SessionMarket>({
  maxSize: WORKER_CANDLES,
  // A chunked market holds one chunk per pair at most (`marketOf` sets its size); a whole market its candles.
  sizeCalculation: (m) =>
    Math.max(
      1,
      m.series.reduce((n, s) => n + s.length, 0),
    ),
});

/**
 * Chunks of chunked markets' pairs seen by this thread (market key, chunk number and pair), bounded by candles
 * held (64 bytes each): those this thread read from the store are its own memory; those the request thread sent
 * are its shared columns. Sessions over one market share them; a session needs one per pair it walks.
 */
const CHUNK_CANDLES_HELD = 2_000_000;
const chunks = new LRUCache<string, SharedSeriesColumns>({
  maxSize: CHUNK_CANDLES_HELD,
  sizeCalculation: (columns) => Math.max(1, columns.openTime.length),
});

/**
 * This thread's read-only views of candle stores, by directory: what chunks are read from off the request thread.
 * A chunk read is sequential and kept (`chunks`), so the store's own block cache is kept small.
 */
const stores = new Map<string, MarketCandles>();
const storeAt = (root: string): MarketCandles => {
  let known = stores.get(root);
  if (!known) {
    known = new MarketCandles(new ColumnStore(root, { blockCacheBytes: 8 * 1024 * 1024, openFiles: 64 }));
    stores.set(root, known);
  }
  return known;
};

/** The transfer each market of this thread was built from (a later task carries none). */
const transfersSeen = new WeakMap<SessionMarket, MarketTransfer>();

/**
 * Pairs of a chunked market of this thread that the request thread reads, as the task advancing now was sent with
 * them (its `remote`): set before each slice of a task, since batches over one market interleave on the thread
 * and each was sent with its own (a pair's first live minute between two sends makes them differ).
 */
const remoteOf = new WeakMap<SessionMarket, ReadonlySet<number>>();

/** The chunk of a pair a chunked market of this thread lacked (its stepping loop paused for it), by market. */
const missing = new WeakMap<SessionMarket, { c: number; i: number }>();

/** Where a chunk received for a market's pair goes. */
const received = new WeakMap<SessionMarket, (c: number, i: number, columns: SharedSeriesColumns) => void>();

/** The market a task's transfer describes, built on this thread (chunked: chunks from the cache, else asked for). */
const marketOf = (key: string, transfer: MarketTransfer): SessionMarket => {
  if (!transfer.chunked) {
    return buildSessionMarket(
      transfer.interval,
      transfer.pairs.map((p) => ({ filters: p.filters, data: seriesOfShared(p.shared) })),
    );
  }
  // The chunk fetched last per pair stays at hand even if the cache cannot hold it (a chunk larger than the cache).
  const last = new Map<number, { c: number; columns: SharedSeriesColumns }>();
  const { pairs, spanCandles, store } = transfer.chunked;
  const built: SessionMarket = chunkedMarket(transfer.interval, pairs, spanCandles, {
    chunk(c, i) {
      const kept = last.get(i);
      if (kept?.c === c) return kept.columns;
      const known = chunks.get(`${key}|${c}|${i}`);
      if (known) return known;
      if (store && !remoteOf.get(built)?.has(i)) {
        const columns = readPairChunk(
          storeAt(store.root),
          pairs[i]!.filters.symbol,
          transfer.interval,
          store.end,
          spanCandles,
          c,
        );
        received.get(built)!(c, i, columns);
        return columns;
      }
      missing.set(built, { c, i });
      return undefined;
    },
  });
  received.set(built, (c, i, columns) => {
    last.set(i, { c, columns });
    chunks.set(`${key}|${c}|${i}`, columns);
  });
  return built;
};

/**
 * The {@link LastCandles} of a backtest batch over a chunked market with a store, at the end of its
 * `BacktestStepped`: for each pair the request thread does not read itself, the last candle with open time at
 * or before `min(at − interval, end − interval)` (the point read `MarketWindow.history` answers for `lastClosed`
 * of a pair not resident, `market-source.ts`), read from this thread's view of the store.
 */
const lastsOf = (
  market: SessionMarket,
  task: StepTask,
  events: readonly (BacktestStreamEvent | BattleEvent)[],
): LastCandles | undefined => {
  const store = (task.market ?? transfersSeen.get(market))?.chunked?.store;
  const stepped = events.find((e) => e.type === 'BacktestStepped');
  if (!store || !stepped) return undefined;
  const at = Date.parse(stepped.data.to_time);
  const remote = remoteOf.get(market);
  const candles = storeAt(store.root);
  const last = Math.min(at - market.intervalMs, store.end - market.intervalMs);
  return {
    at,
    candles: market.series.map((s, i) =>
      remote?.has(i)
        ? undefined
        : (candlesFromColumns(candles.queryColumns(s.symbol, market.interval, { end: last, limit: 1 }))[0] ??
          null),
    ),
  };
};

/**
 * A backtest batch's answer with each `BacktestStepped` (version 3: with `equity_peak`) encoded here
 * ({@link EncodedData}) and handed over without its packed equity. The request thread then neither receives the
 * ~0.6–1.1 MB `equity_units` as a string (a structured clone) nor serialises and joins it again for the append
 * (issue 24; docs/benchmarks.md, "Market data at scale", 2026-11-30); on a thread the bytes move (the default export).
 */
const withEncodedData = (events: BacktestStreamEvent[], lasts: LastCandles | undefined): StepAnswer => {
  const { type, key, onlyWith } = BACKTEST_STEPPED_ELIDED;
  const encoded: EncodedData[] = [];
  const sent = events.map((e, index) => {
    if (e.type !== type || !(onlyWith in e.data)) return e;
    encoded.push({ index, text: encodeDataText(e.data) });
    const { [key]: _left, ...rest } = e.data;
    return { ...e, data: rest };
  });
  if (encoded.length === 0) return lasts ? { events, lasts } : { events };
  return lasts
    ? { events: sent as BacktestStreamEvent[], lasts, encoded }
    : { events: sent as BacktestStreamEvent[], encoded };
};

/**
 * Asks the request thread for chunk `c` of pair `i` on `port` and waits for it; rejects with the reply's error, or
 * with `port.signal`'s reason when the venue abandons the task (no answer will come).
 */
const fetchChunk = (port: ChunkPort, c: number, i: number): Promise<SharedSeriesColumns> =>
  new Promise((resolve, reject) => {
    const { signal } = port;
    if (signal?.aborted) return reject(signal.reason);
    const abandoned = () => {
      port.off('message', answer);
      reject(signal?.reason);
    };
    const answer = (m: ChunkReply) => {
      if (m.c !== c || m.i !== i) return;
      port.off('message', answer);
      signal?.removeEventListener('abort', abandoned);
      if (m.columns) resolve(m.columns);
      else reject(new Error(m.error ?? `chunk ${c} of pair ${i} could not be read`));
    };
    signal?.addEventListener('abort', abandoned, { once: true });
    port.on('message', answer);
    port.postMessage({ c, i });
  });

/**
 * Decides one `StepBacktest` (or `StepBattle`) with the decider's own step (`stepBacktestSliced`) — what a stepping
 * thread (the default export) and a stepping process (`step-process.ts`) run. The decision is computed in slices:
 * after `sliceMs` of work the task yields (`setImmediate`), so the other batches the thread or process runs at the
 * same time (piscina's `concurrentTasksPerWorker`) each get a turn — a fair share instead of first come, first
 * served to the end. The pauses change nothing computed. Never rejects: what the decision throws is answered
 * (`StepAnswer`'s `error` for a `DomainError`, `failed` for anything else), so that only the end of the thread or
 * process running it rejects the task (the stepper retries that once; a `failed` task it does not retry).
 */
export const stepTask = async (task: StepTask | WarmTask): Promise<StepAnswer | { warm: true }> => {
  try {
    return await decideTask(task);
  } catch (error) {
    if (error instanceof DomainError) {
      return {
        error: {
          code: error.code,
          message: error.message,
          status: error.status,
          ...(error.details ? { details: error.details } : {}),
        },
      };
    }
    const stack = error instanceof Error ? error.stack : undefined;
    return { failed: { message: errorText(error), ...(stack ? { stack } : {}) } };
  }
};

/** {@link stepTask}'s decision; throws what the decider (or reading the market) throws. */
const decideTask = async (task: StepTask | WarmTask): Promise<StepAnswer | { warm: true }> => {
  if (task.kind === 'warm') return { warm: true };
  let market = markets.get(task.key);
  if (!market) {
    if (!task.market) return { miss: true };
    market = marketOf(task.key, task.market);
    transfersSeen.set(market, task.market);
    const chunked = task.market.chunked;
    markets.set(
      task.key,
      market,
      chunked
        ? {
            size: Math.max(
              1,
              chunked.pairs.length * chunkCandlesBound(chunked.spanCandles, task.market.interval),
            ),
          }
        : {},
    );
  }
  const remote: ReadonlySet<number> | undefined = market.window ? new Set(task.remote) : undefined;
  const ctx = { now: new Date(task.now), newId: decisionIds(task.sessionId, task.revision), market };
  const work: Generator<void, BacktestStreamEvent[] | BattleEvent[], void> =
    task.kind === 'battle'
      ? stepBattleSliced({ steps: task.steps }, decodeState<BattleState>(task.state), ctx, task.sliceSteps)
      : stepBacktestSliced(
          { steps: task.steps },
          decodeState<BacktestState>(task.state),
          ctx,
          task.sliceSteps,
        );
  let sliceStart = performance.now();
  for (;;) {
    // This task's pairs for the chunks of this slice (and the last candles after the last one).
    if (remote) remoteOf.set(market, remote);
    const r = work.next();
    if (r.done) {
      if (task.kind !== 'backtest') return { events: r.value };
      const events = r.value as BacktestStreamEvent[];
      return withEncodedData(events, lastsOf(market, task, events));
    }
    const need = missing.get(market);
    if (need !== undefined) {
      // The clock reached a chunk this thread lacks: ask the request thread for it, then resume.
      missing.delete(market);
      if (!task.port) throw new Error('a chunked market needs a channel to the request thread');
      received.get(market)!(need.c, need.i, await fetchChunk(task.port, need.c, need.i));
      sliceStart = performance.now();
      continue;
    }
    if (performance.now() - sliceStart >= task.sliceMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
};

/** `text` in a buffer of its own: a view into a larger (shared, pooled) buffer would take the rest of it along. */
const whole = (text: Uint8Array): Uint8Array =>
  text.byteOffset === 0 && text.byteLength === text.buffer.byteLength ? text : text.slice();

/**
 * The piscina task of a stepping thread: {@link stepTask}, its encoded bytes ({@link EncodedData}) moved to the
 * request thread (piscina's `move`: their buffers transferred, not copied).
 */
export default async (task: StepTask | WarmTask): Promise<unknown> => {
  const answer = await stepTask(task);
  if (!('encoded' in answer) || !answer.encoded) return answer;
  const encoded = answer.encoded.map(({ index, text }) => ({ index, text: whole(text) }));
  const moved: StepAnswer = { ...answer, encoded };
  return move({
    get [transferableSymbol]() {
      return encoded.map((x) => x.text.buffer);
    },
    get [valueSymbol]() {
      return moved;
    },
  });
};
