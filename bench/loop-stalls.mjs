/**
 * Event-loop stalls of the main thread of the process it is preloaded into (`node --import ./bench/loop-stalls.mjs
 * …`; plain JavaScript, since worker threads inherit the flag and load it before any TypeScript loader), for the
 * benchmarks: a timer due every `LOOP_STALLS_EVERY_MS` (default 5) measures how late it fires; every lateness of
 * at least `LOOP_STALLS_MIN_MS` (default 10) is appended to `LOOP_STALLS_FILE` as `end epoch ms,stall ms`. A stall
 * is time the request thread ran something else to its end while every request waited: unlike a latency probe it
 * does not depend on how loaded the machine's other processes keep the cores (what the thread computes, not when
 * the scheduler lets it run, except for the share of the stall that is waiting for a core). Does nothing without
 * `LOOP_STALLS_FILE`.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const file = process.env.LOOP_STALLS_FILE;
if (file && isMainThread) {
  const every = Number(process.env.LOOP_STALLS_EVERY_MS ?? 5);
  const minimum = Number(process.env.LOOP_STALLS_MIN_MS ?? 10);
  const fd = fs.openSync(file, 'a');
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const late = now - last - every;
    last = now;
    if (late >= minimum) fs.writeSync(fd, `${Date.now()},${late.toFixed(1)}\n`);
  }, every);
  timer.unref();
}
