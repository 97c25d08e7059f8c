/**
 * What a batch's `BacktestStepped` costs the request thread, version 1 (a string per step) against version 2 (one
 * packed text, `packUnits`): the JSON sizes and the time (ms, mean of 20) of packing (stepping thread), structured
 * clone (the worker's answer), `JSON.stringify` (append), SHA-256 (hash chain), `JSON.parse` (read back) and the
 * projection's fold, for 100,000 steps of a wallet holding positions. `npx tsx bench/stepped-event.ts`
 * (docs/benchmarks.md, "BacktestStepped version 2").
 */
import { createHash } from 'node:crypto';
import { mulberry32 } from '../domain/market/random';
import { maxOfPacked, normalize8, packUnits } from '../domain/metrics/equity-points';

// A batch of 100,000 minutes of a wallet holding BTC and ETH: equity ~985,000 USDT moving a few USDT a step.
let u = 98_522_374_392_330;
const rnd = mulberry32(42);
const equity: string[] = [];
for (let i = 0; i < 100_000; i++) {
  u += Math.round((rnd() - 0.5) * 2e9);
  const s = String(u);
  equity.push(`${s.slice(0, -8)}.${s.slice(-8)}`);
}
const base = { session_id: 'bt_x', from_step: 0, to_step: 100000, from_time: 'a', to_time: 'b', fills: 0 };
const time = (label: string, f: () => unknown, n = 20) => {
  f();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  console.log(label, (Number(process.hrtime.bigint() - t0) / 1e6 / n).toFixed(2), 'ms');
};
const v1 = { ...base, equity };
const packed = packUnits(equity);
const v2 = { ...base, equity_units: packed };
const j1 = JSON.stringify(v1);
const j2 = JSON.stringify(v2);
console.log('JSON bytes v1', j1.length, 'v2', j2.length);
time('pack in worker (v2 only)', () => packUnits(equity));
time('stringify v1', () => JSON.stringify(v1));
time('stringify v2', () => JSON.stringify(v2));
time('sha256 v1', () => createHash('sha256').update(j1).digest('hex'));
time('sha256 v2', () => createHash('sha256').update(j2).digest('hex'));
time('parse v1', () => JSON.parse(j1));
time('parse v2', () => JSON.parse(j2));
time('structuredClone v1', () => structuredClone(v1));
time('structuredClone v2', () => structuredClone(v2));
// The old fold: normalize, max, join; the new: the peak of the packed text.
time('fold v1 (normalize, max, join)', () => {
  const n = equity.map(normalize8);
  let best = n[0]!;
  for (const v of n) if (v.length > best.length || (v.length === best.length && v > best)) best = v;
  return n.join(',').length + best.length;
});
time('fold v2 (maxOfPacked)', () => maxOfPacked(packed));
