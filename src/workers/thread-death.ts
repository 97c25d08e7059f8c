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
 * level, so an error of the module's own loading — the thread failing at start-up — is not marked: that one is
 * no death to run the task again for. A thrown primitive cannot be marked (nor a frozen error). Does nothing on
 * the main thread (or in a child process).
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
 * Whether `error`, a piscina task's rejection, says the worker thread died under the task, so a deterministic task
 * can be run once more on another: the thread exited (piscina's "worker exited with code: N"), ran out of memory
 * (Node's `ERR_WORKER_OUT_OF_MEMORY`), or threw an error it did not catch while running
 * ({@link markUncaughtErrors}'s mark). Anything else is no death and would fail again: the task's value could not
 * be posted (a `DataCloneError`), the task's module failed to load (piscina rejects the task with that error;
 * one failing while the thread starts is emitted on the pool instead, and the task waits), the pool was destroyed
 * ("Terminating worker thread"), the task itself rejected. Pure.
 * Source: piscina 5's `dist/index.js` (`onWorkerExit`, `_onError`, `destroy`) and `dist/worker_pool` (`postTask`).
 */
export const threadDied = (error: unknown): boolean => {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { message?: unknown; code?: unknown; [UNCAUGHT_IN_THREAD]?: unknown };
  return (
    e.code === 'ERR_WORKER_OUT_OF_MEMORY' ||
    e[UNCAUGHT_IN_THREAD] === true ||
    (error instanceof Error && /^worker exited with code: /.test(error.message))
  );
};
