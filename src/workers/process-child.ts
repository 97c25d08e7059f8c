import { readdirSync } from 'node:fs';
import os from 'node:os';
import { errorText } from './error-text';
import type { ProcessMessage } from './process-pool';

/**
 * Sets every thread of this process to nice `nice` (Linux: a nice value is a thread's, and V8's platform threads
 * and libuv's are started before any script runs, at the nice the process was started with). Threads started
 * later by one of them inherit it. Elsewhere, or when not permitted, it does what it can and says nothing.
 */
export const reniceAllThreads = (nice: number): void => {
  let tids: string[] = [];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    tids = ['0'];
  }
  for (const tid of tids) {
    try {
      os.setPriority(Number(tid), nice);
    } catch {
      // A thread that has ended, or no permission: nothing to do.
    }
  }
};

/** A task's own conversation with the venue while it runs (see `ProcessMessage`'s `side`). */
export interface SideChannel {
  send(data: unknown): void;
  /** `listener` receives every side message the venue sends to this task until `off` (or `signal` aborts). */
  on(listener: (data: unknown) => void): void;
  off(listener: (data: unknown) => void): void;
  /**
   * Aborted when the venue abandons the task (`ProcessMessage`'s `cancel`: it failed the task alone and answers
   * it no more), its reason an `Error` "the venue abandoned the task: <why>". A task waiting for a side answer
   * rejects with it; one computing may stop at its next pause. Its listeners are dropped then too.
   */
  signal: AbortSignal;
}

/**
 * The child's half of `process-pool.ts`: renices this process's threads (`PTV_CHILD_NICE`), then runs each `run`
 * message's task with `handle` — several at once, interleaved at their awaits — and answers `done` with its
 * result or the message and stack of what it threw. A `cancel` aborts that task's `SideChannel.signal` and drops
 * its side listeners, so a task waiting for an answer ends — or, not listening to the signal, is no longer reachable
 * and its memory is collected — while the others go on; its `done` is sent still, and ignored. The process exits
 * when the venue's IPC channel closes (the venue ended or was killed), so it never outlives it.
 */
export const serveProcessTasks = (handle: (task: unknown, side: SideChannel) => Promise<unknown>): void => {
  if (!process.send) throw new Error('a task process is started by the venue, with an IPC channel');
  const send = (message: ProcessMessage): void => {
    process.send?.(message);
  };
  /** Each running task's side listeners and the controller of its `signal`, by task id. */
  const running = new Map<number, { listeners: Set<(data: unknown) => void>; controller: AbortController }>();
  process.on('disconnect', () => process.exit(0));
  // The venue may have gone while this process was still loading its modules.
  if (!process.connected) process.exit(0);
  const nice = Number(process.env.PTV_CHILD_NICE ?? 0);
  if (nice) reniceAllThreads(nice);
  process.on('message', (message: ProcessMessage) => {
    if (message.kind === 'side') {
      for (const l of running.get(message.id)?.listeners ?? []) l(message.data);
      return;
    }
    if (message.kind === 'cancel') {
      const task = running.get(message.id);
      running.delete(message.id);
      // The listeners go first: an answer the task waits for will not come, and they may hold it.
      task?.listeners.clear();
      task?.controller.abort(new Error(`the venue abandoned the task: ${message.reason}`));
      return;
    }
    if (message.kind !== 'run') return;
    const { id } = message;
    const own = new Set<(data: unknown) => void>();
    const controller = new AbortController();
    running.set(id, { listeners: own, controller });
    const side: SideChannel = {
      send: (data) => send({ kind: 'side', id, data }),
      on: (l) => {
        if (!controller.signal.aborted) own.add(l);
      },
      off: (l) => own.delete(l),
      signal: controller.signal,
    };
    const ended = (): void => {
      running.delete(id);
    };
    handle(message.task, side).then(
      (result) => {
        ended();
        try {
          send({ kind: 'done', id, result });
        } catch (error) {
          // A result the structured clone refuses (e.g. a SharedArrayBuffer): the task fails, not the process.
          send({ kind: 'done', id, error: { message: `its result could not be sent: ${errorText(error)}` } });
        }
      },
      (error: unknown) => {
        ended();
        const stack = error instanceof Error ? error.stack : undefined;
        send({ kind: 'done', id, error: { message: errorText(error), ...(stack ? { stack } : {}) } });
      },
    );
  });
};
