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
  /** `listener` receives every side message the venue sends to this task until `off`. */
  on(listener: (data: unknown) => void): void;
  off(listener: (data: unknown) => void): void;
}

/**
 * The child's half of `process-pool.ts`: renices this process's threads (`PTV_CHILD_NICE`), then runs each `run`
 * message's task with `handle` — several at once, interleaved at their awaits — and answers `done` with its
 * result or the message and stack of what it threw. The process exits when the venue's IPC channel closes (the
 * venue ended or was killed), so it never outlives it.
 */
export const serveProcessTasks = (handle: (task: unknown, side: SideChannel) => Promise<unknown>): void => {
  if (!process.send) throw new Error('a task process is started by the venue, with an IPC channel');
  const send = (message: ProcessMessage): void => {
    process.send?.(message);
  };
  const listeners = new Map<number, Set<(data: unknown) => void>>();
  process.on('disconnect', () => process.exit(0));
  // The venue may have gone while this process was still loading its modules.
  if (!process.connected) process.exit(0);
  const nice = Number(process.env.PTV_CHILD_NICE ?? 0);
  if (nice) reniceAllThreads(nice);
  process.on('message', (message: ProcessMessage) => {
    if (message.kind === 'side') {
      for (const l of listeners.get(message.id) ?? []) l(message.data);
      return;
    }
    if (message.kind !== 'run') return;
    const { id } = message;
    const own = new Set<(data: unknown) => void>();
    listeners.set(id, own);
    const side: SideChannel = {
      send: (data) => send({ kind: 'side', id, data }),
      on: (l) => own.add(l),
      off: (l) => own.delete(l),
    };
    handle(message.task, side).then(
      (result) => {
        listeners.delete(id);
        try {
          send({ kind: 'done', id, result });
        } catch (error) {
          // A result the structured clone refuses (e.g. a SharedArrayBuffer): the task fails, not the process.
          send({ kind: 'done', id, error: { message: `its result could not be sent: ${errorText(error)}` } });
        }
      },
      (error: unknown) => {
        listeners.delete(id);
        const stack = error instanceof Error ? error.stack : undefined;
        send({ kind: 'done', id, error: { message: errorText(error), ...(stack ? { stack } : {}) } });
      },
    );
  });
};
