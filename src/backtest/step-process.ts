import { type SideChannel, serveProcessTasks } from '../workers/process-child';
import { type ChunkPort, type StepTask, stepTask, type WarmTask } from './step-worker';

/**
 * The backtest stepping process (`BACKTEST_STEPPING=process`; `stepper.ts`): the same task as a stepping worker
 * thread (`step-worker.ts`'s `stepTask`: the deciders' sliced steps, chunks read from the candle store here),
 * run in a child process of the venue at nice 19, so its garbage is collected by its own V8's helper threads at its
 * own priority and its memory is not the request isolate's. Several batches run at once, slice by slice, as on a
 * thread. A chunked market's pairs the request thread must read (`StepTask.remote`) are asked for as the task's
 * side messages.
 */
const portOf = (side: SideChannel): ChunkPort => ({
  // The listener is registered as it is, so `off` finds it: a side message is a chunk reply (`ChunkReply`).
  on: (_event, listener) => side.on(listener as (data: unknown) => void),
  off: (_event, listener) => side.off(listener as (data: unknown) => void),
  postMessage: (m) => side.send(m),
  // The venue abandoning the task (`cancel`) ends its wait for a chunk (`fetchChunk`).
  signal: side.signal,
});

serveProcessTasks(async (task, side) => {
  const t = task as StepTask | WarmTask;
  if (t.kind !== 'warm' && t.remote?.length) t.port = portOf(side);
  return stepTask(t);
});
