import { isMainThread } from 'node:worker_threads';

/**
 * The property {@link markUncaughtErrors} sets on an error a running worker thread did not catch. Node sends the
 * error's own properties with it to the request thread (the `Worker`'s `error` event, which piscina hands to the
 * thread's tasks as their rejection), so the request thread can tell it from an error that is no thread's end.
 */
export const UNCAUGHT_IN_THREAD = 'uncaughtInThread';

/**
 * Marks (`UNCAUGHT_IN_THREAD`: true) every error this worker thread does not catch, as it ends the thread
 * (`process`'s `uncaughtExceptionMonitor`: the error still ends it). Called by a thread's task module at its top
 * level, so an error of the module's own loading — the thread failing at start-up — is not marked: no task is
 * on the thread then, and piscina reports it on the pool (`createWorkerPool` fails the waiting tasks with a
 * {@link WorkerPoolFailed}). A thrown primitive cannot be marked (nor a frozen error). Does nothing on the main
 * thread (or in a child process).
 */
export const markUncaughtErrors = (): void => {
  if (isMainThread) return;
  process.on('uncaughtExceptionMonitor', (error) => {
    try {
      if (typeof error === 'object' && error !== null) {
        (error as unknown as Record<string, unknown>)[UNCAUGHT_IN_THREAD] = true;
      }
    } catch {
      // A frozen error: unmarked, it counts as no death (500, not retried).
    }
  });
};

/**
 * A task's rejection because a thread of its pool failed outside any task — its module failed to load as it
 * started (piscina's pool `error` event; `createWorkerPool`): the task did not run to its end, and a deterministic
 * task may be run once more, on the fresh pool the next task starts. `message`: the thread's error's.
 */
export class WorkerPoolFailed extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`a worker thread failed: ${message}`, options);
    this.name = 'WorkerPoolFailed';
  }
}

/**
 * Whether `error`, a piscina task's rejection, says the worker thread died under the task, so a deterministic task
 * can be run once more on another: the thread exited (piscina's "worker exited with code: N"), ran out of memory
 * (Node's `ERR_WORKER_OUT_OF_MEMORY`), threw an error it did not catch while running
 * ({@link markUncaughtErrors}'s mark), or a thread of its pool failed outside any task, e.g. its module failing to
 * load as it starts ({@link WorkerPoolFailed}). Anything else is no death and would fail again: the task's value
 * could not be posted (a `DataCloneError`), the task's handler could not be found once the thread ran (piscina
 * rejects the task with that error), the pool was destroyed ("Terminating worker thread"), the task itself
 * rejected. Pure.
 * Source: piscina 5's `dist/index.js` (`onWorkerExit`, `_onError`, `destroy`) and `dist/worker_pool` (`postTask`).
 */
export const threadDied = (error: unknown): boolean => {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { message?: unknown; code?: unknown; [UNCAUGHT_IN_THREAD]?: unknown };
  return (
    e.code === 'ERR_WORKER_OUT_OF_MEMORY' ||
    e[UNCAUGHT_IN_THREAD] === true ||
    error instanceof WorkerPoolFailed ||
    (error instanceof Error && /^worker exited with code: /.test(error.message))
  );
};
