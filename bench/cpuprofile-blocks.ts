/**
 * Where a thread's time went, from a V8 `.cpuprofile` (`market-scale.ts --cpu-prof DIR` writes one per thread; the
 * request thread's is `CPU.*.<pid>.0.*.cpuprofile`): (a) self and inclusive time by function over a window, and
 * (b) the thread's long synchronous blocks — runs of consecutive samples that are not `(idle)` lasting at least
 * `--min` ms — with the frames present in them and, for the longest, their self and inclusive frames.
 *
 *   npx tsx bench/cpuprofile-blocks.ts FILE.cpuprofile [--min 10] [--from 38] [--to 73] [--show 10]
 *
 * `--from`/`--to`: seconds after the profile's start. Times are the profile's (wall clock between samples): on a
 * loaded machine a block includes time the thread waited for a core, so compare blocks only at similar load, and
 * take on-core figures from `market-scale.ts --stalls`. Results: docs/benchmarks.md (issue 24, 2026-11-30).
 */
import fs from 'node:fs';
import { Command } from 'commander';
import { nonNegativeNumber, positiveInt, positiveNumber } from './options';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const cli = new Command()
  .argument('<file>', 'a .cpuprofile')
  .option('--min <ms>', 'shortest block reported (ms)', positiveNumber, 10)
  .option('--from <s>', 'window start, seconds after the profile start', nonNegativeNumber)
  .option('--to <s>', 'window end, seconds after the profile start', nonNegativeNumber)
  .option('--show <n>', 'longest blocks shown in detail', positiveInt, 10)
  .parse();
const opts = cli.opts<{ min: number; from?: number; to?: number; show: number }>();
const profile = JSON.parse(fs.readFileSync(cli.args[0]!, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n: ProfileNode): string => {
  const f = n.callFrame;
  const file = f.url.split('/').slice(-2).join('/');
  return `${f.functionName || '(anon)'} ${file}:${f.lineNumber + 1}`;
};
/** The frames of a sample's node, leaf first, each once (recursion counted once); built once per node. */
const framesByNode = new Map<number, string[]>();
const framesOf = (id: number): string[] => {
  let known = framesByNode.get(id);
  if (!known) {
    const out = new Set<string>();
    for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) out.add(label(byId.get(x)!));
    known = [...out];
    framesByNode.set(id, known);
  }
  return known;
};
const isIdle = (id: number) => byId.get(id)!.callFrame.functionName === '(idle)';

// Sample i lasts until the next one (µs).
const times: number[] = [];
let t = profile.startTime;
for (const d of profile.timeDeltas) {
  t += d;
  times.push(t);
}
const from = opts.from !== undefined ? profile.startTime + opts.from * 1e6 : -Infinity;
const to = opts.to !== undefined ? profile.startTime + opts.to * 1e6 : Infinity;
const ms = (i: number) => (i + 1 < times.length ? times[i + 1]! - times[i]! : 0) / 1000;
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const top = (m: Map<string, number>, k: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k);

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const blocks: { start: number; ms: number; samples: number[] }[] = [];
let block: (typeof blocks)[number] | undefined;
let window = 0;
let busy = 0;
for (let i = 0; i < profile.samples.length; i++) {
  if (times[i]! < from || times[i]! > to) continue;
  const id = profile.samples[i]!;
  window += ms(i);
  if (isIdle(id)) {
    if (block) blocks.push(block);
    block = undefined;
    continue;
  }
  busy += ms(i);
  const frames = framesOf(id);
  add(self, frames[0]!, ms(i));
  for (const f of frames) add(inclusive, f, ms(i));
  block ??= { start: times[i]!, ms: 0, samples: [] };
  block.ms += ms(i);
  block.samples.push(i);
}
if (block) blocks.push(block);

console.log(`window ${(window / 1000).toFixed(2)} s, busy ${(busy / 1000).toFixed(2)} s`);
console.log('--- self (ms)');
for (const [l, v] of top(self, 35)) console.log(v.toFixed(0).padStart(7), l);
console.log('--- inclusive (ms)');
for (const [l, v] of top(inclusive, 70)) console.log(v.toFixed(0).padStart(7), l);
const min = opts.min;
const long = blocks.filter((b) => b.ms >= min);
const counts = [10, 20, 30, 50, 100].map((x) => `${x} ms: ${blocks.filter((b) => b.ms >= x).length}`);
console.log(`--- blocks: ${blocks.length}; at least ${counts.join(', ')}`);
console.log(`time in blocks >= ${min} ms: ${long.reduce((s, b) => s + b.ms, 0).toFixed(0)} ms`);
const present = new Map<string, number>();
for (const b of long) {
  const frames = new Set<string>();
  for (const i of b.samples) for (const f of framesOf(profile.samples[i]!)) frames.add(f);
  for (const f of frames) add(present, f, 1);
}
console.log('--- frames present in how many long blocks');
for (const [l, v] of top(present, 40)) console.log(String(v).padStart(5), l);
for (const b of [...long].sort((x, y) => y.ms - x.ms).slice(0, opts.show)) {
  const bSelf = new Map<string, number>();
  const bIncl = new Map<string, number>();
  for (const i of b.samples) {
    const frames = framesOf(profile.samples[i]!);
    add(bSelf, frames[0]!, ms(i));
    for (const f of frames) if (!/^\((root|program)\)/.test(f)) add(bIncl, f, ms(i));
  }
  console.log(`=== block ${b.ms.toFixed(1)} ms at +${((b.start - profile.startTime) / 1e6).toFixed(2)} s`);
  console.log(
    '  self:',
    top(bSelf, 5)
      .map(([l, v]) => `${v.toFixed(1)} ${l}`)
      .join(' | '),
  );
  for (const [l, v] of top(bIncl, 14)) console.log('   ', v.toFixed(1).padStart(6), l);
}
