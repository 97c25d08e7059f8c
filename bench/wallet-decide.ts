/**
 * The wallet decider alone (issue 23): CPU and allocation per market buy decided and folded, in process, no I/O —
 * the `realistic` fill model walking its book, a price that moves every 15 orders (a wallet's orders on one tick
 * walk on past what its earlier ones took), the state carried from one decision to the next as the command handler
 * does. Prints `{ n, us_cpu_per_order, us_wall_per_order }`; with `--heap` also the bytes allocated per order
 * (a sampling heap profile that counts collected objects too) and writes the profile to `--heap-out`.
 *
 *   npx tsx bench/wallet-decide.ts [--orders 20000] [--heap] [--heap-out /tmp/decide.heapprofile]
 *
 * The profiles read best from a bundle (tsx's compiled functions are unnamed):
 * `npx esbuild bench/wallet-decide.ts --bundle --packages=external --platform=node --format=esm
 * --outfile=bench/.wd.mjs && node --cpu-prof bench/.wd.mjs` (inside the repository, so the packages resolve).
 * Results: docs/benchmarks.md, "Trading".
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import { Command } from 'commander';
import { foldEvents } from '../domain/shared/decider';
import { walletDecider } from '../domain/wallet/decide';
import type { WalletEvent } from '../domain/wallet/events';
import { context, market, opened, place } from '../test/trading/support';
import { positiveInt } from './options';

const options = new Command()
  .option('--orders <n>', 'market buys measured (after 3,000 of warm-up)', positiveInt, 20_000)
  .option('--heap', 'also count the bytes allocated per order (sampling heap profile)')
  .option('--heap-out <file>', 'where the heap profile goes', '/tmp/wallet-decide.heapprofile')
  .parse()
  .opts<{ orders: number; heap?: boolean; heapOut: string }>();

const base = context(market({ BTCUSDT: '40000' }));
let tick = 0;
let decided = 0;
const T0 = Date.parse('2024-01-05T09:00:00.000Z');
const ctx = {
  ...base,
  prices: (symbol: string) =>
    symbol === 'BTCUSDT'
      ? {
          price: (40000 + (tick % 7) * 0.37).toFixed(2),
          timestamp: new Date(T0 + tick * 1000).toISOString(),
          source: 'files',
        }
      : undefined,
};
const given = opened('1000000.00000000').map((e) =>
  e.type === 'WalletOpened' ? { ...e, data: { ...e.data, fill_model: 'realistic' } } : e,
) as WalletEvent[];
let state = foldEvents(walletDecider, given);
const order = place({ quantity: '0.0002' }, { fillModel: 'realistic', startingBalance: '1000000.00000000' });
const step = () => {
  if (++decided % 15 === 0) tick++;
  state = walletDecider.decideWithState(order, state, ctx).state;
};

for (let i = 0; i < 3_000; i++) step();
const session = new inspector.Session();
const post = (method: string, params?: object) =>
  new Promise<any>((resolve, reject) =>
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  );
if (options.heap) {
  session.connect();
  await post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}
const n = options.orders;
const cpu0 = process.cpuUsage();
const wall0 = performance.now();
for (let i = 0; i < n; i++) step();
const cpu = process.cpuUsage(cpu0);
const wall = performance.now() - wall0;
const out: Record<string, number> = {
  n,
  us_cpu_per_order: Number(((cpu.user + cpu.system) / n).toFixed(2)),
  us_wall_per_order: Number(((wall * 1000) / n).toFixed(2)),
};
if (options.heap) {
  const { profile } = await post('HeapProfiler.stopSampling');
  let bytes = 0;
  const walk = (node: { selfSize: number; children: unknown[] }) => {
    bytes += node.selfSize;
    for (const child of node.children) walk(child as typeof node);
  };
  walk(profile.head);
  out.bytes_per_order = Math.round(bytes / n);
  fs.writeFileSync(options.heapOut, JSON.stringify(profile));
}
console.log(JSON.stringify(out));
