import type { TransferListItem } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { errorText } from './error-text';
import { WorkerPoolFailed } from './thread-death';

/**
 * `execArgv` with tsx's loader added (`--import tsx`) when `file` is TypeScript and no option of `execArgv` names
 * tsx (the venue runs from its sources through `tsx`, which a thread or child process needs too); otherwise
 * `execArgv` itself, the same array. Pure.
 */
export const withTsxLoader = (file: URL, execArgv: string[]): string[] =>
  file.pathname.endsWith('.ts') && !execArgv.some((a) => a.includes('tsx'))
    ? [...execArgv, '--import', 'tsx']
    : execArgv;

/** Where a worker pool logs a thread's failure outside any task (the venue's pino logger fits). */
export interface WorkerPoolLog {
  error(fields: Record<string, unknown>, message: string): void;
}

/** Options of {@link createWorkerPool}. */
export interface WorkerPoolOptions {
  maxThreads: number;
  minThreads?: number;
  niceIncrement?: number;
  idleTimeoutMs?: number;
  /** Tasks one thread runs at once (async tasks interleave at their awaits; default 1). */
  concurrentTasksPerWorker?: number;
  /** Logs a failure of the pool's threads outside any task (see {@link createWorkerPool}); absent: not logged. */
  log?: WorkerPoolLog;
}

/** The pool of {@link createWorkerPool}. */
export interface WorkerPool {
  /**
   * Runs `task` on a thread; resolves with what the module's default export answers. Rejects with the task's
   * rejection (piscina's: the thread's end under it, a value that cannot be posted, …), or with a
   * {@link WorkerPoolFailed} when a thread fails outside any task while the task waits or runs (see
   * {@link createWorkerPool}), or after `destroy`.
   */
  run(task: unknown, options?: { transferList?: TransferListItem[] }): Promise<unknown>;
  /** Threads started (or starting) now. */
  threads(): number;
  /** Ends the threads; the tasks running then reject (piscina's "Terminating worker thread"). */
  destroy(): Promise<void>;
}

/**
 * A pool of worker threads (piscina) running the default export of `file`. The venue runs from TypeScript sources
 * through `tsx`; a worker thread inherits the parent's `execArgv`, which carries tsx's loader when the process was
 * started by `tsx` but not under another runner (vitest), so the loader is added when it is missing.
 * `niceIncrement` lowers the threads' CPU priority (Linux, through piscina's optional `@napi-rs/nice`), so the
 * request thread wins the CPU when both want it.
 *
 * A thread that fails outside any task — its module fails to load as it starts — is no task's rejection: piscina
 * emits it as the pool's `error` event (piscina 5, `_onError`), which unheard is thrown as an uncaught exception
 * (the venue would end), and after it starts no thread again for the tasks already waiting (they would wait
 * forever). So that piscina pool is done with: the failure is logged (`log.error`, with the thread's error), every
 * task it holds, waiting or running, rejects with a {@link WorkerPoolFailed} (a thread's death, `threadDied`: a
 * caller may run a deterministic task once more), the pool is destroyed, and the next task starts a fresh one.
 */
export const createWorkerPool = (file: URL, options: WorkerPoolOptions): WorkerPool => {
  const execArgv = withTsxLoader(file, process.execArgv);
  let current: { piscina: Piscina; tasks: Set<(error: Error) => void> } | undefined;
  let destroyed = false;

  const start = (): NonNullable<typeof current> => {
    const piscina = new Piscina({
      filename: file.href,
      maxThreads: options.maxThreads,
      minThreads: options.minThreads ?? 0,
      idleTimeout: options.idleTimeoutMs ?? 30_000,
      concurrentTasksPerWorker: options.concurrentTasksPerWorker ?? 1,
      ...(options.niceIncrement ? { niceIncrement: options.niceIncrement } : {}),
      // Only when the loader is added: a thread given no `execArgv` inherits the parent's.
      ...(execArgv === process.execArgv ? {} : { execArgv }),
    });
    const own = { piscina, tasks: new Set<(error: Error) => void>() };
    piscina.on('error', (error: unknown) => {
      if (current === own) current = undefined;
      options.log?.error(
        { err: error, module: file.pathname, failing: own.tasks.size },
        'a worker thread failed outside any task (its tasks fail as a death; the next starts a fresh pool)',
      );
      const failed = new WorkerPoolFailed(errorText(error), { cause: error });
      for (const fail of own.tasks) fail(failed);
      own.tasks.clear();
      // Its other threads' tasks were failed above: what they answer now is no one's.
      piscina.destroy().catch(() => {});
    });
    return own;
  };

  return {
    run(task, runOptions) {
      if (destroyed) return Promise.reject(new Error('the worker pool is destroyed'));
      current ??= start();
      const { piscina, tasks } = current;
      return new Promise((resolve, reject) => {
        tasks.add(reject);
        piscina
          .run(task, runOptions ?? {})
          .then(resolve, reject)
          .finally(() => tasks.delete(reject));
      });
    },
    threads: () => current?.piscina.threads.length ?? 0,
    async destroy() {
      destroyed = true;
      const c = current;
      current = undefined;
      await c?.piscina.destroy();
    },
  };
};
