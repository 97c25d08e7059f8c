// Diagnostics preload for a benchmark's server (`BENCH_NODE_FLAGS="--require ./bench/gc-monitor.cjs"`): per wall-clock
// second, the HTTP requests that started (`diagnostics_channel` `http.server.request.start`), the garbage
// collections (`PerformanceObserver` `gc` entries: scavenges as minorN/minorMs, the others as majorN/majorMs, the
// longest as gcMax, in ms), the event loop's delay (max and p99, ms, 1 ms resolution), the RSS (MB), and for each
// scavenge the new space's used size when the observer ran (newUsedMB, summed; allocation has resumed by then, so it
// is no survivor count). Written at exit as a JSON array to `$GC_MONITOR_DIR/gc-$GC_TAG-<pid>.json` (default: the
// OS's temporary directory). docs/benchmarks.md, "Trading", 2026-11-30 07:33.
const { PerformanceObserver, monitorEventLoopDelay } = require('node:perf_hooks');
const diagnostics = require('node:diagnostics_channel');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const v8 = require('node:v8');

const buckets = new Map();
const bucket = () => {
  const t = Math.floor(Date.now() / 1000);
  let b = buckets.get(t);
  if (!b) {
    b = {
      t,
      req: 0,
      gcN: 0,
      gcMs: 0,
      gcMax: 0,
      minorN: 0,
      minorMs: 0,
      majorN: 0,
      majorMs: 0,
      elMax: 0,
      elP99: 0,
    };
    buckets.set(t, b);
  }
  return b;
};
diagnostics.subscribe('http.server.request.start', () => {
  bucket().req++;
});
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const b = bucket();
    const ms = entry.duration;
    b.gcN++;
    b.gcMs += ms;
    b.gcMax = Math.max(b.gcMax, ms);
    if (entry.detail?.kind === 1) {
      b.minorN++;
      b.minorMs += ms;
      const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
      b.newUsedMB = (b.newUsedMB ?? 0) + (young ? young.space_used_size / 1048576 : 0);
    } else {
      b.majorN++;
      b.majorMs += ms;
    }
  }
}).observe({ entryTypes: ['gc'] });
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
setInterval(() => {
  const b = bucket();
  b.elMax = delay.max / 1e6;
  b.elP99 = delay.percentile(99) / 1e6;
  b.rss = process.memoryUsage.rss() / 1048576;
  delay.reset();
}, 1000).unref();
process.on('exit', () => {
  const dir = process.env.GC_MONITOR_DIR || os.tmpdir();
  const file = path.join(dir, `gc-${process.env.GC_TAG || 'run'}-${process.pid}.json`);
  try {
    fs.writeFileSync(file, JSON.stringify([...buckets.values()]));
  } catch {}
});
