/**
 * Event-loop stalls of the main thread of the process it is preloaded into (`node --import ./bench/loop-stalls.mjs
 * …`; plain JavaScript, since worker threads inherit the flag and load it before any TypeScript loader), for the
 * benchmarks: a timer due every `LOOP_STALLS_EVERY_MS` (default 5) measures how late it fires; every lateness of
 * at least `LOOP_STALLS_MIN_MS` (default 10) is appended to `LOOP_STALLS_FILE` as `end epoch ms,stall ms,on-core ms,
 * run-queue ms` (the last two: the thread's own time on a core and waiting for one over the timer's interval, from
 * `/proc/thread-self/schedstat`; 0 where it is not readable). A stall
 * is time the request thread ran something else to its end while every request waited: unlike a latency probe it
 * does not depend on how loaded the machine's other processes keep the cores (what the thread computes, not when
 * the scheduler lets it run, except for the share of the stall that is waiting for a core). Does nothing without
 * `LOOP_STALLS_FILE`, and nothing in a process forked with an IPC channel (the venue's stepping processes).
 *
 * Beside it, `LOOP_STALLS_FILE.gc` gets the main thread's garbage collections of at least `LOOP_STALLS_GC_MIN_MS`
 * (default 1) as `end epoch ms,duration ms,kind` (kind: minor, major, incremental, weakcb; from `perf_hooks`' `gc`
 * entries), so a stall can be told from a collection that ended inside it.
 */
import fs from 'node:fs';
import { constants, PerformanceObserver, performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const file = process.env.LOOP_STALLS_FILE;
// A process forked with an IPC channel (the venue's stepping processes, `BACKTEST_STEPPING=process`, which inherit
// the flag and the environment) is not the request thread: it records nothing.
if (file && isMainThread && !process.channel) {
  const every = Number(process.env.LOOP_STALLS_EVERY_MS ?? 5);
  const minimum = Number(process.env.LOOP_STALLS_MIN_MS ?? 10);
  const fd = fs.openSync(file, 'a');
  // The thread's time on a core and waiting in the run queue (ns, /proc/thread-self/schedstat; zeros elsewhere).
  const sched = () => {
    try {
      const [cpu, wait] = fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
      return { cpu, wait };
    } catch {
      return { cpu: 0, wait: 0 };
    }
  };
  let last = performance.now();
  let lastSched = sched();
  const timer = setInterval(() => {
    const now = performance.now();
    const late = now - last - every;
    const s = sched();
    last = now;
    if (late >= minimum) {
      const cpu = (s.cpu - lastSched.cpu) / 1e6;
      const wait = (s.wait - lastSched.wait) / 1e6;
      fs.writeSync(fd, `${Date.now()},${late.toFixed(1)},${cpu.toFixed(1)},${wait.toFixed(1)}\n`);
    }
    lastSched = s;
  }, every);
  timer.unref();
  const gcMinimum = Number(process.env.LOOP_STALLS_GC_MIN_MS ?? 1);
  const gcFd = fs.openSync(`${file}.gc`, 'a');
  const kinds = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
  };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration < gcMinimum) continue;
      const end = performance.timeOrigin + entry.startTime + entry.duration;
      fs.writeSync(
        gcFd,
        `${end.toFixed(0)},${entry.duration.toFixed(1)},${kinds[entry.detail?.kind] ?? '?'}\n`,
      );
    }
  }).observe({ entryTypes: ['gc'] });
}
