import { Piscina } from 'piscina';
import { describe, expect, it } from 'vitest';
import { createWorkerPool } from '../../src/workers/pool';
import { threadDied } from '../../src/workers/thread-death';

/**
 * `threadDied` over the rejections piscina really gives (issue: on threads every rejection counted as a dead
 * thread, so a permanent failure was run again and answered 503): the thread's end — it exited, threw outside its
 * task, ran out of memory — is a death; a task that cannot be posted, a destroyed pool, a task that rejects are
 * not. (A thread whose module fails to load while it starts is not here: piscina emits that on the pool, and
 * `createWorkerPool` fails the tasks with a `WorkerPoolFailed`: `pool-error.int.test.ts`.)
 */

const rejectionOf = async (
  pool: { run(task: unknown): Promise<unknown> },
  task: unknown,
): Promise<unknown> => {
  try {
    await pool.run(task);
  } catch (error) {
    return error;
  }
  throw new Error(`the task ${String(task)} did not fail`);
};

const dying = new URL('./fixtures/dying-thread.ts', import.meta.url);

describe('threadDied: which rejections of a piscina task are the thread dying', () => {
  it('a thread that exits, throws outside its task or runs out of memory: dead', async () => {
    const pool = createWorkerPool(dying, { maxThreads: 1 });
    try {
      const exited = await rejectionOf(pool, 'exit');
      expect((exited as Error).message).toMatch(/worker exited with code: 3/);
      expect(threadDied(exited)).toBe(true);
      const uncaught = await rejectionOf(pool, 'uncaught');
      expect((uncaught as Error).message).toBe('thrown outside the task');
      expect(threadDied(uncaught)).toBe(true);
    } finally {
      await pool.destroy();
    }
    const small = new Piscina({
      filename: dying.href,
      maxThreads: 1,
      execArgv: [...process.execArgv, '--import', 'tsx'],
      resourceLimits: { maxOldGenerationSizeMb: 32 },
    });
    try {
      const oom = await rejectionOf(small, 'oom');
      expect((oom as { code?: string }).code).toBe('ERR_WORKER_OUT_OF_MEMORY');
      expect(threadDied(oom)).toBe(true);
    } finally {
      await small.destroy();
    }
  }, 120_000);

  it('a task that cannot be posted, rejects, or meets a destroyed pool: not dead', async () => {
    const pool = createWorkerPool(dying, { maxThreads: 1 });
    try {
      const unclonable = await rejectionOf(pool, { f: () => 0 });
      expect((unclonable as Error).name).toBe('DataCloneError');
      expect(threadDied(unclonable)).toBe(false);
      const rejected = await rejectionOf(pool, 'reject');
      expect(threadDied(rejected)).toBe(false);
      const destroyed = rejectionOf(pool, 'slow');
      await new Promise((resolve) => setTimeout(resolve, 50));
      await pool.destroy();
      expect(await destroyed).toHaveProperty('message', 'Terminating worker thread');
      expect(threadDied(await destroyed)).toBe(false);
    } finally {
      await pool.destroy();
    }
  }, 120_000);
});
