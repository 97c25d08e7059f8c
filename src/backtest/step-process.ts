import { valueSymbol } from 'piscina';
import { type SideChannel, serveProcessTasks } from '../workers/process-child';
import step, { type ChunkPort, type ChunkReply, type StepTask, type WarmTask } from './step-worker';

/**
 * The backtest stepping process (`BACKTEST_STEPPING=process`; `stepper.ts`): the same task as a stepping worker
 * thread (`step-worker.ts`'s default export: the deciders' sliced steps, chunks read from the candle store here),
 * run in a child process of the venue at nice 19, so its garbage is collected by its own V8's helper threads at its
 * own priority and its memory is not the request isolate's. Several batches run at once, slice by slice, as on a
 * thread. A chunked market's pairs the request thread must read (`StepTask.remote`) are asked for as the task's
 * side messages.
 */
const portOf = (side: SideChannel): ChunkPort => {
  const wrapped = new Map<(m: ChunkReply) => void, (data: unknown) => void>();
  return {
    on(_event, listener) {
      const l = (data: unknown) => listener(data as ChunkReply);
      wrapped.set(listener, l);
      side.on(l);
    },
    off(_event, listener) {
      const l = wrapped.get(listener);
      if (l) side.off(l);
      wrapped.delete(listener);
    },
    postMessage: (m) => side.send(m),
  };
};

serveProcessTasks(async (task, side) => {
  const t = task as StepTask | WarmTask;
  if (t.kind !== 'warm' && t.remote?.length) t.port = portOf(side);
  const answer: unknown = await step(t);
  // A worker thread's answer moves its buffers (piscina's `move`): here the structured clone copies them.
  return answer !== null && typeof answer === 'object' && valueSymbol in answer
    ? (answer as Record<typeof valueSymbol, unknown>)[valueSymbol]
    : answer;
});
