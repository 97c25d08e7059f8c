import type { Performance } from '../../domain/metrics/performance';
import { createBacktestsProjection, type PerformanceComputer } from '../../projections/backtests';
import type { EquityRowsText, SessionPerformanceInput } from '../../projections/equity-rows-text';
import type { Projection } from '../../projections/projection';
import { createWorkerPool, type WorkerPool, type WorkerPoolLog } from '../workers/pool';

/**
 * Backtest results computed off the request thread (issue 24, item 4): the `backtests` projection's
 * `performance` (see `createBacktestsProjection`) run on one piscina worker thread at nice 19. A whole-range session
 * ends with tens of thousands of equity points (23,976 for the 16 hourly pairs over 2021-04 → 2023-12, 525,600
 * for a year of minutes); `computePerformance` over them held the event loop 238 ms at the hourly size. The
 * thread starts on the first session that ends and stops after a minute idle; `close` stops it. `log`: where a
 * thread failing outside any task (its module failing to load) is logged (the venue's logger; `createWorkerPool`).
 */
export const createMetricsPool = (
  log?: WorkerPoolLog,
): {
  /**
   * The performance of `input`, computed on the thread. A packed equity's `times`, or an {@link EquityRowsText}'s
   * `rows` parts, are transferred, not copied: their buffers (the whole of each: the caller gives arrays that own
   * their buffers) are detached here once the task is sent (the caller builds them for this call and reads them no
   * more).
   */
  performance(input: SessionPerformanceInput): Promise<Performance>;
  /**
   * Starts the thread without waiting for it (a session was created: its results will be computed), so the
   * session's end does not wait for the thread to start and load its modules. A started thread stops after a
   * minute idle, as any.
   */
  warm(): void;
  close(): Promise<void>;
} => {
  let pool: WorkerPool | undefined;
  const poolOf = (): WorkerPool => {
    pool ??= createWorkerPool(new URL('./metrics-worker.ts', import.meta.url), {
      maxThreads: 1,
      niceIncrement: 19,
      idleTimeoutMs: 60_000,
      ...(log ? { log } : {}),
    });
    return pool;
  };
  return {
    performance(input) {
      // A packed curve's point times (4.2 MB for a year of minutes), or a session's rows as bytes (~4.4 MB), move
      // to the thread instead of being copied.
      const e = input.equity;
      const moved = 'times' in e ? [e.times.buffer] : 'rows' in e ? e.rows.map((part) => part.buffer) : [];
      const transferList = [...new Set(moved)].filter((b) => b instanceof ArrayBuffer);
      return poolOf().run(input, transferList.length ? { transferList } : {}) as Promise<Performance>;
    },
    warm() {
      const p = poolOf();
      if (p.threads() > 0) return;
      // The performance of nothing: the thread starts, loads its modules and answers at once.
      const nothing: SessionPerformanceInput = { startingBalance: '0', equity: [], intervalMs: 1, fills: [] };
      p.run(nothing).catch(() => {
        // Nothing to do: a thread that cannot start fails the session's results with its error.
      });
    },
    async close() {
      const p = pool;
      pool = undefined;
      await p?.destroy();
    },
  };
};

/** `projections` with the `backtests` projection computing its results through `performance`. */
export const withResultsOffThread = (
  projections: readonly Projection[],
  performance: PerformanceComputer,
): Projection[] =>
  projections.map((p) => (p.name === 'backtests' ? createBacktestsProjection({ performance }) : p));
