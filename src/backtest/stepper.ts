import os from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import {
  type BacktestStepper,
  decisionIds,
  type SteppedEvent,
  type StepRequest,
} from '../../commands/backtest';
import type { BattleStepper } from '../../commands/battle';
import { MAX_BATCH_STEPS } from '../../domain/backtest/clock';
import { backtestDecider } from '../../domain/backtest/decide';
import type { SessionMarket } from '../../domain/backtest/market';
import { battleDecider } from '../../domain/battle/decide';
import type { BattleEvent } from '../../domain/battle/events';
import { DomainError } from '../../domain/shared/errors';
import { encodeState } from '../../domain/shared/state-codec';
import { columnsFromCandles } from '../market/store/convert';
import { errorText } from '../workers/error-text';
import { createWorkerPool, type WorkerPoolLog } from '../workers/pool';
import { createProcessPool, ProcessGoneError } from '../workers/process-pool';
import { threadDied } from '../workers/thread-death';
import { type SharedSeriesColumns, shareColumns } from './shared-series';
import type { ChunkReply, LastCandles, MarketTransfer, StepAnswer, StepTask, WarmTask } from './step-worker';

/** Options of {@link createPooledStepper}. */
export interface PooledStepperOptions {
  /** Worker threads (default: one fewer than the cores, at least 1). */
  threads?: number;
  /** Batches one thread runs at once, interleaved slice by slice (default 16). */
  concurrentPerThread?: number;
  /**
   * A step of at most this many candle updates (steps × pairs) is decided in process: cheaper than a hop (2048) —
   * except a backtest step over a market whose chunks a thread reads from the candle store (`readsStoreOffThread`).
   */
  inlineUpTo?: number;
  /** CPU time (ms) a batch computes before another batch of the same thread gets a turn (default 4). */
  sliceMs?: number;
  /** Nice increment of the threads (Linux; default 19, the lowest priority): the request thread wins the CPU when both want it. */
  niceIncrement?: number;
  /**
   * Where batches are decided (`BACKTEST_STEPPING`): `thread` — piscina worker threads of the venue's process;
   * `process` — child processes of the venue (`step-process.ts`), each with its own V8 (heap, external memory, GC
   * and compiler helper threads) at nice 19. `threads` then counts processes. Default `thread`; the venue
   * passes its validated `BACKTEST_STEPPING` (`src/config.ts`).
   */
  stepping?: BacktestStepping;
  /**
   * Where the stepper logs what it does not answer: why a batch was answered 503 (the thread's or process's end:
   * exit code, signal, out of memory — internals a client is not shown; `warn`), and a stepping thread failing
   * outside any task, e.g. its module failing to load (`error`, with the thread's error: `createWorkerPool`). The
   * venue passes its logger (pino).
   */
  log?: WorkerPoolLog & { warn(fields: Record<string, unknown>, message: string): void };
  /**
   * The module the threads or processes run (default `step-worker.ts` on threads, `step-process.ts` in processes).
   * Tests point it at one that fails to load, to see what a batch answers when no thread or process can start.
   */
  taskModule?: URL;
}

/** Where backtest batches are decided off the request thread: see {@link PooledStepperOptions.stepping}. */
export type BacktestStepping = 'thread' | 'process';

/** Reads chunk `c` of the `i`-th pair of a chunked market for a stepping thread or process (`ChunkReader.read`). */
type ReadChunk = (c: number, i: number) => SharedSeriesColumns;

/**
 * Answers a stepping thread's or process's chunk request `request` through `post`: the chunk's columns, or — when
 * they cannot be read, or `post` refuses them (a value the structured clone cannot copy) — the reason as the
 * reply's `error`, which fails that batch alone (500 INTERNAL_ERROR, not retried), in both modes alike. Runs in an
 * event handler of the request thread, where a throw would be an uncaught exception of the venue.
 */
const answerChunkRequest = (
  read: ReadChunk,
  { c, i }: { c: number; i: number },
  post: (reply: ChunkReply) => void,
): void => {
  try {
    post({ c, i, columns: read(c, i) });
  } catch (error) {
    post({ c, i, error: errorText(error) });
  }
};

/** Where the tasks of {@link createPooledStepper} run: worker threads or child processes. */
interface StepRunner {
  /** Rejects (no pool is built again) after `close`. `readChunk` answers the task's chunk requests. */
  run(task: StepTask | WarmTask, readChunk?: ReadChunk): Promise<unknown>;
  warm(): void;
  started(): number;
  pids(): number[];
  close(): Promise<void>;
  /** True once `close` was called: a task rejected then was stopped, not killed by a death. */
  closed(): boolean;
  /**
   * Whether `error`, a rejection of `run`, says the thread or process died under the task (exit, signal, out of
   * memory, could not start): the task is run once more. Otherwise the rejection is an internal error (500).
   */
  gone(error: unknown): boolean;
}

/**
 * A runner's pool, started on first use (`get`), and its closing: after `close` (the venue stopping) `get` throws
 * and no pool is started again — a batch stopped by it would otherwise start a fresh one — and `closed` is true
 * (the stepper then answers 503: `unavailable`). `end` stops a started pool.
 */
const lazyPool = <P>(start: () => P, end: (pool: P) => Promise<void>) => {
  let pool: P | undefined;
  let closed = false;
  return {
    get(): P {
      if (closed) throw new Error('the stepping is closed');
      pool ??= start();
      return pool;
    },
    /** The pool if started (and not closed). */
    current: (): P | undefined => pool,
    closed: () => closed,
    async close(): Promise<void> {
      closed = true;
      const p = pool;
      pool = undefined;
      if (p) await end(p);
    },
  };
};

/**
 * 503 SERVICE_UNAVAILABLE with Retry-After (1 s) and `message`: a batch the stepper cannot run now — it was closed
 * (the venue is stopping), or its thread or process died twice — which the client retries later.
 */
const unavailable = (message: string): DomainError =>
  new DomainError('SERVICE_UNAVAILABLE', message, { retry_after_seconds: 1 });

/** Stepping on piscina worker threads; a chunk request comes on a `MessageChannel` handed to the task. */
const threadRunner = (threads: number, options: PooledStepperOptions): StepRunner => {
  const pool = lazyPool(
    () =>
      createWorkerPool(options.taskModule ?? new URL('./step-worker.ts', import.meta.url), {
        maxThreads: threads,
        concurrentTasksPerWorker: options.concurrentPerThread ?? 16,
        niceIncrement: options.niceIncrement ?? 19,
        idleTimeoutMs: 60_000,
        ...(options.log ? { log: options.log } : {}),
      }),
    (p) => p.destroy(),
  );
  return {
    async run(task, readChunk) {
      if (!readChunk) return pool.get().run(task);
      // The answer shares the request thread's columns (shared memory), read from the candle store here.
      const channel = new MessageChannel();
      channel.port1.on('message', (m: { c: number; i: number }) =>
        answerChunkRequest(readChunk, m, (reply) => channel.port1.postMessage(reply)),
      );
      try {
        return await pool.get().run({ ...task, port: channel.port2 }, { transferList: [channel.port2] });
      } finally {
        channel.port1.close();
      }
    },
    warm() {
      if (pool.closed()) return;
      const p = pool.get();
      // One task per thread still to start: each lands on a thread of its own while the others are busy starting.
      for (let i = p.threads(); i < threads; i++) {
        p.run({ kind: 'warm' } satisfies WarmTask).catch(() => {
          // Nothing to do: a thread that cannot start fails the session's first batch with its error.
        });
      }
    },
    started: () => pool.current()?.threads() ?? 0,
    pids: () => [],
    // The task answers its own errors (`stepTask`: `error`, `failed`); of the rejections, only the thread's end —
    // it exited, threw an error it did not catch, ran out of memory, could not start (its module failed to load:
    // `WorkerPoolFailed`) — is a death (`threadDied`). A task that could not be posted (DataCloneError), a
    // destroyed pool: not retried.
    gone: threadDied,
    closed: pool.closed,
    close: pool.close,
  };
};

/**
 * Stepping in child processes at nice `niceIncrement` (`step-process.ts`): what crosses is copied by the IPC
 * channel's structured clone — shared columns (a whole market's, a chunk the request thread read) are sent as they
 * are, each typed array's bytes copied into a plain buffer on the child's side (only a bare `SharedArrayBuffer`
 * cannot cross, and the columns hold none); a chunk request comes as the task's side message, answered as on a
 * thread (`answerChunkRequest`: a reply the channel refuses is answered as the chunk's error, the process goes on).
 * A process that dies fails its batches with "the backtest stepping process exited …", and the next batch starts a
 * fresh one.
 */
const processRunner = (processes: number, options: PooledStepperOptions): StepRunner => {
  const pool = lazyPool(
    () =>
      createProcessPool(options.taskModule ?? new URL('./step-process.ts', import.meta.url), {
        maxProcesses: processes,
        nice: options.niceIncrement ?? 19,
        idleTimeoutMs: 60_000,
        label: 'backtest stepping',
      }),
    (p) => p.close(),
  );
  return {
    run(task, readChunk) {
      return pool
        .get()
        .run(
          task,
          readChunk
            ? (data, reply) => answerChunkRequest(readChunk, data as { c: number; i: number }, reply)
            : undefined,
        );
    },
    warm: () => {
      if (!pool.closed()) pool.get().warm();
    },
    started: () => pool.current()?.started() ?? 0,
    pids: () => pool.current()?.pids() ?? [],
    gone: (error) => error instanceof ProcessGoneError,
    closed: pool.closed,
    close: pool.close,
  };
};

/**
 * A chunked market's chunks as the request thread reads them: `read(c, i)` is chunk `c`'s columns of its `i`-th
 * pair (sorted by symbol), of `pairs`. `local(i)`: true when a stepping thread reads the `i`-th pair's chunks
 * itself from the candle store the transfer names (`MarketTransfer`'s `chunked.store`) — the same columns, off the
 * request thread; false when only the request thread has them (live minutes in its memory). Absent: none is local.
 */
interface ChunkReader {
  pairs: number;
  read(c: number, i: number): SharedSeriesColumns;
  local?(i: number): boolean;
  /**
   * Keeps the last candles a thread read at the end of a batch (`LastCandles`: every local pair's last candle closed
   * by `at`), so the request thread's reads of them at `at` (the step response's prices) need no store read.
   */
  seed?(lasts: LastCandles): void;
}

/** The market a session was built from, where the market source registered it (typed columns, cheap to send). */
const transfers = new WeakMap<
  SessionMarket,
  { key: string; transfer: MarketTransfer; chunks?: ChunkReader | undefined }
>();
let anonymous = 0;

/**
 * Registers how `market` crosses to a worker thread: its columns — or, for a chunked market, its pairs and how to
 * read its chunks, which the thread asks for as its clock reaches them — and a key naming its content (the market
 * source passes its fingerprint, so sessions over the same candles share one market in each thread).
 */
export const registerMarketTransfer = (
  market: SessionMarket,
  key: string,
  transfer: MarketTransfer,
  chunks?: ChunkReader,
): void => {
  transfers.set(market, { key, transfer, chunks });
};

const transferOf = (
  market: SessionMarket,
): { key: string; transfer: MarketTransfer; chunks?: ChunkReader | undefined } => {
  let known = transfers.get(market);
  if (!known) {
    // A market not built by the market source (tests, benchmarks): its candles in shared columns, once.
    known = {
      key: `anonymous:${process.pid}:${++anonymous}`,
      transfer: {
        interval: market.interval,
        pairs: market.series.map((s) => {
          const candles = Array.from({ length: s.length }, (_, i) => s.candleAt(i));
          const shared = shareColumns(columnsFromCandles(candles, market.intervalMs));
          if (!shared) throw new Error(`a ${s.symbol} price is too large for exact backtest arithmetic`);
          return { filters: s.filters, shared };
        }),
      },
    };
    transfers.set(market, known);
  }
  return known;
};

/**
 * True when a stepping thread reads `market`'s candles from the candle store itself (a chunked market over the
 * store with a pair the thread reads: `ChunkReader.local`). Such a market's steps are all decided there, however
 * small: a step's answer shows every pair's last candle (the step response's `prices`), which the thread reads
 * with the events (`LastCandles`) — in process the request thread would read one candle per pair not resident
 * (~1–4 ms each at 1m: 100 pairs is a 100–400 ms block of the event loop) and, after a few steps, their chunks.
 */
const readsStoreOffThread = (market: SessionMarket): boolean => {
  const known = transfers.get(market);
  if (!known?.chunks || !known.transfer.chunked?.store) return false;
  for (let i = 0; i < known.chunks.pairs; i++) if (known.chunks.local?.(i)) return true;
  return false;
};

/**
 * The error a `failed` step answer fails its request with (500 INTERNAL_ERROR, logged with its stack): message
 * "<kind> stepping failed: <the task's error, its class named when not a plain Error>", and a stack of that one
 * header line and the task's frames (from the thread or process), so the log shows the message once. Pure.
 */
export const failureOf = (kind: string, failed: { message: string; stack?: string }): Error => {
  const stack = failed.stack ?? '';
  // A stack starts with "<name>: <message>" (the message may span lines), then its frames.
  const at = failed.message ? stack.indexOf(`: ${failed.message}`) : -1;
  const name = at > 0 && !stack.slice(0, at).includes('\n') ? stack.slice(0, at) : '';
  const headed = name !== '' && stack.startsWith(`${name}: ${failed.message}`);
  const message = `${kind} stepping failed: ${headed && name !== 'Error' ? `${name}: ` : ''}${failed.message}`;
  const failure = new Error(message);
  if (stack) {
    const frames = headed ? stack.slice(name.length + 2 + failed.message.length).replace(/^\n/, '') : stack;
    failure.stack = `Error: ${message}\n${frames}`;
  }
  return failure;
};

/** The stepper of {@link createPooledStepper}. */
export interface PooledStepper extends BacktestStepper {
  battles: BattleStepper;
  /**
   * Starts the worker threads without waiting for them (a session was created: its batches will come), so the first
   * batch does not wait for a thread to start and load its modules (~0.3 s of CPU under `tsx`). Threads started
   * so stop after a minute idle, as any.
   */
  warm(): void;
  /** Worker threads (or stepping processes) started (or starting) now. */
  threadsStarted(): number;
  /** The stepping processes' ids (`stepping: 'process'`; none with threads). */
  processIds(): number[];
  /**
   * Tasks sent to the threads or processes so far: each run of a batch, a run once more after a death and a
   * resend with the market (the thread lacked it) each count one; warming does not. For tests and benchmarks.
   */
  tasksRun(): number;
  /**
   * Stops the threads or processes. A batch running then fails with 503 SERVICE_UNAVAILABLE (Retry-After; not run
   * again), and so does every later batch that would leave the request thread: no thread or process starts again.
   */
  close(): Promise<void>;
}

/**
 * Backtest stepping off the request thread (issue 24 item 4; `docs/backtesting.md`, "Where stepping runs"): a
 * `StepBacktest` — or a historical battle's `StepBattle` (`battles`) — bigger than `inlineUpTo` candle updates
 * (× participants) is decided on a piscina worker thread — or, with `stepping: 'process'`, in a child process of
 * the venue at nice 19 — by the decider's own step, interleaved slice by slice with the other batches of that thread, while the request thread keeps serving.
 * The thread builds the session's market from its columns the first time it sees it and keeps it (bounded LRU).
 * The events are the decider's, byte for byte, so what is appended, answered and folded does not depend on where
 * the decision ran. The pool starts on the first batch; `close` stops it.
 */
export const createPooledStepper = (options: PooledStepperOptions = {}): PooledStepper => {
  const threads = options.threads ?? Math.max(1, os.availableParallelism() - 1);
  const inlineUpTo = options.inlineUpTo ?? 2048;
  const sliceMs = options.sliceMs ?? 4;
  // `BACKTEST_STEPPING` is the configuration's (`src/config.ts` validates it; `install.ts` passes it), not read here.
  const stepping = options.stepping ?? 'thread';
  const runner = stepping === 'process' ? processRunner(threads, options) : threadRunner(threads, options);
  let tasksRun = 0;

  /** Sends one step to a thread (the market too when the thread lacks it) and answers its events. */
  const offThread = async (
    kind: StepTask['kind'],
    id: string,
    request: { revision: number; state: unknown; steps: number; now: Date },
    market: SessionMarket,
  ): Promise<unknown[]> => {
    const { key, transfer, chunks } = transferOf(market);
    const task: StepTask = {
      kind,
      key,
      sessionId: id,
      revision: request.revision,
      state: encodeState(request.state),
      steps: request.steps,
      now: request.now.getTime(),
      sliceSteps: 8,
      sliceMs,
    };
    // A chunked market: the thread reads the chunks its clock reaches from the candle store itself, except those
    // of the pairs named here, which it asks the request thread for.
    const remote: number[] = [];
    if (chunks) {
      for (let i = 0; i < chunks.pairs; i++) if (!chunks.local?.(i)) remote.push(i);
      if (remote.length) task.remote = remote;
    }
    // One pair's chunk per request (a step reads only the pairs it walks), read from the candle store here.
    const readChunk: ReadChunk | undefined =
      chunks && remote.length ? (c, i) => chunks.read(c, i) : undefined;
    // One rule in both modes (`docs/backtesting.md`, "When stepping fails"): a thread or process that dies under
    // the batch (exit, signal, out of memory) appended nothing, and the step is deterministic: it is run once more
    // (a fresh process gets the market with it); dying again, the venue answers 503 SERVICE_UNAVAILABLE
    // (Retry-After), the client retrying later. A task that throws answers `failed` (below): 500, not retried.
    const send = (withMarket: boolean): Promise<StepAnswer> => {
      tasksRun++;
      return runner.run(withMarket ? { ...task, market: transfer } : task, readChunk) as Promise<StepAnswer>;
    };
    /** Throws unless `error` is the thread's or process's death under the task (then the caller runs it again). */
    const throwUnlessDeath = (error: unknown): void => {
      // Stopped by `close` (the venue is stopping), or sent after it: not a death, and no fresh thread or process
      // is started (`lazyPool`).
      if (runner.closed()) throw unavailable(`${kind} stepping is stopped; retry shortly`);
      if (!runner.gone(error)) throw error;
    };
    const run = async (withMarket: boolean): Promise<StepAnswer> => {
      try {
        return await send(withMarket);
      } catch (first) {
        throwUnlessDeath(first);
        try {
          return await send(true);
        } catch (second) {
          throwUnlessDeath(second);
          // The client is told to retry, not how the thread or process ended (exit code, signal): that is logged.
          options.log?.warn(
            { kind, id, stepping, first: errorText(first), second: errorText(second) },
            `${kind} stepping: the ${stepping} died twice under a batch (answered 503)`,
          );
          throw unavailable(`${kind} stepping is unavailable; retry shortly`);
        }
      }
    };
    let answer = await run(false);
    if ('miss' in answer) answer = await run(true);
    if ('miss' in answer) throw new Error('the backtest worker did not keep the market it was sent');
    if ('error' in answer) {
      const e = answer.error;
      throw new DomainError(e.code, e.message, e.details, e.status);
    }
    if ('failed' in answer) {
      // The task threw (a bug, a bad input): the same throw again would fail again, so it is not retried. The
      // request fails with 500 INTERNAL_ERROR, logged once with this message and the task's stack (`logFailure`).
      throw failureOf(kind, answer.failed);
    }
    if (answer.lasts) chunks?.seed?.(answer.lasts);
    // The events whose data the thread encoded go to the append as those bytes (`NewEvent.dataText`).
    for (const { index, text } of answer.encoded ?? []) {
      (answer.events[index] as SteppedEvent).dataText = text;
    }
    return answer.events;
  };

  const inline = (request: StepRequest) =>
    backtestDecider.decide({ type: 'StepBacktest', data: { steps: request.steps } }, request.state, {
      now: request.now,
      newId: decisionIds(request.sessionId, request.revision),
      market: request.market,
    });

  return {
    async step(request) {
      const { steps, market } = request;
      if (
        !Number.isInteger(steps) ||
        steps < 1 ||
        steps > MAX_BATCH_STEPS ||
        (Math.min(steps, request.state.config?.totalSteps ?? 0) * market.series.length <= inlineUpTo &&
          !readsStoreOffThread(market))
      ) {
        return inline(request);
      }
      return (await offThread('backtest', request.sessionId, request, market)) as SteppedEvent[];
    },
    battles: {
      async step(request) {
        const { steps, market } = request;
        const total = request.state.config?.backtest_config?.total_steps ?? 0;
        if (
          !Number.isInteger(steps) ||
          steps < 1 ||
          steps > MAX_BATCH_STEPS ||
          Math.min(steps, total) * market.series.length * Math.max(1, request.state.participants.length) <=
            inlineUpTo
        ) {
          return battleDecider.decide({ type: 'StepBattle', data: { steps } }, request.state, {
            now: request.now,
            newId: decisionIds(request.battleId, request.revision),
            market,
          });
        }
        return (await offThread('battle', request.battleId, request, market)) as BattleEvent[];
      },
    },
    warm: () => runner.warm(),
    threadsStarted: () => runner.started(),
    processIds: () => runner.pids(),
    tasksRun: () => tasksRun,
    close: () => runner.close(),
  };
};
