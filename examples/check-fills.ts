/**
 * An independent check of backtest fills against the raw Binance candle files: for a sample of the trades written
 * by `sma-crossover.ts --out`, recompute from the CSV alone (exact integer arithmetic, no code of the venue) the
 * reference price (the close of the candle that closed at the fill's virtual time), the 24h quote volume (volume ×
 * close of the 24 candles closed in the 24 hours up to it), the participation and slippage of ARCHITECTURE §8, the
 * executed price, notional and fee (0.1 %), and compare them with what the venue recorded.
 *
 *   npx tsx examples/check-fills.ts --results docs/backtest-sma-crossover.json --data ../shared/market-data [--count 12]
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    results: { type: 'string' },
    data: { type: 'string', default: '../shared/market-data' },
    count: { type: 'string', default: '12' },
  },
  strict: true,
  allowPositionals: false,
});
if (args.results === undefined) throw new Error('--results is required');
const resultsFile = args.results;
const dataDir = args.data;
const count = Number(args.count);

// Decimals as bigint units of 1e-8 (and 1e-16 for products).
const S = 10n ** 8n;
const units = (text: string): bigint => {
  const [i, f = ''] = text.split('.');
  return BigInt(i!) * S + BigInt(f.padEnd(8, '0').slice(0, 8)) * (i!.startsWith('-') ? -1n : 1n);
};
const show = (u: bigint): string => {
  const neg = u < 0n;
  const a = neg ? -u : u;
  return `${neg ? '-' : ''}${a / S}.${(a % S).toString().padStart(8, '0')}`;
};
/** a / b rounded half to even, for non-negative values. */
const divHalfEven = (a: bigint, b: bigint): bigint => {
  const q = a / b;
  const r = a % b;
  return r * 2n > b || (r * 2n === b && q % 2n === 1n) ? q + 1n : q;
};
const divUp = (a: bigint, b: bigint) => (a + b - 1n) / b;

/** Slippage % (units) for a participation % (units), ARCHITECTURE §8. */
const slippageFor = (p: bigint): bigint => {
  const pct = (x: string) => units(x);
  if (p <= pct('0.01')) return pct('0.01');
  if (p <= pct('0.1')) return pct('0.05') + divHalfEven((p - pct('0.01')) * pct('0.05'), pct('0.09'));
  if (p <= pct('1')) return pct('0.1') + divHalfEven((p - pct('0.1')) * pct('0.4'), pct('0.9'));
  return pct('0.5');
};

const H = 3_600_000;
const candleFiles = new Map<string, Map<number, { close: string; volume: string }>>();
const candles = (symbol: string) => {
  let map = candleFiles.get(symbol);
  if (!map) {
    map = new Map();
    const file = path.join(dataDir, 'binance', 'klines', '1h', `${symbol}-1h.csv`);
    for (const line of fs.readFileSync(file, 'utf8').trim().split('\n').slice(1)) {
      const c = line.split(',');
      map.set(Number(c[0]), { close: c[4]!, volume: c[5]! });
    }
    candleFiles.set(symbol, map);
  }
  return map;
};

interface Trade {
  trade_id: string;
  symbol: string;
  side: 'buy' | 'sell';
  type: string;
  quantity: string;
  price: string;
  notional: string;
  fee: string;
  slippage_pct: string;
  reference_price: string;
  executed_at: string;
}
const { trades } = JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as { trades: Trade[] };
const picks = [
  ...new Set(Array.from({ length: count }, (_, i) => Math.round((i * (trades.length - 1)) / (count - 1)))),
];
const rows: string[] = [];
let failures = 0;
for (const index of picks) {
  const t = trades[index]!;
  const at = Date.parse(t.executed_at);
  const series = candles(t.symbol);
  const closing = series.get(at - H);
  const checks: string[] = [];
  const expect = (name: string, got: string, want: string) => {
    const ok = units(got) === units(want);
    if (!ok) failures++;
    checks.push(ok ? `${name} ✓` : `${name} ✗ (${want})`);
  };
  if (!closing) {
    failures++;
    rows.push(
      `| ${index + 1} | ${t.executed_at} | ${t.symbol} | ${t.side} | – | no candle closing at this time in the file | ✗ |`,
    );
    continue;
  }
  expect('reference', t.reference_price, closing.close);
  // 24h quote volume: candles opened in [T − 24h, T − 1h], each volume × close.
  let quote16 = 0n;
  for (let open = at - 24 * H; open <= at - H; open += H) {
    const c = series.get(open);
    if (c) quote16 += units(c.volume) * units(c.close);
  }
  const reference = units(closing.close);
  const quantity = units(t.quantity);
  const notionalAtRef16 = quantity * reference;
  const participation = divHalfEven(notionalAtRef16 * 100n * S, quote16); // units of %
  const slippage = slippageFor(participation);
  const factor = S * 100n; // reference × (1 ± s/100): units × (100·1e8 ± s) / (100·1e8)
  const executed =
    t.side === 'buy'
      ? divUp(reference * (factor + slippage), factor)
      : (reference * (factor - slippage)) / factor;
  const notional = divHalfEven(quantity * executed, S);
  const fee = (notional * 1_000_000n) / 1_000_000_000n; // 0.1 %, rounded down
  expect('slippage', t.slippage_pct, show(slippage));
  expect('price', t.price, show(executed));
  expect('notional', t.notional, show(notional));
  expect('fee', t.fee, show(fee));
  rows.push(
    `| ${index + 1} | ${t.executed_at} | ${t.symbol} | ${t.side} ${t.quantity} | ${closing.close} (${new Date(at - H).toISOString().slice(0, 16)}) | ${show(participation)} % → ${show(slippage)} %, ${show(executed)}, fee ${show(fee)} | ${checks.join(', ')} |`,
  );
}
console.log(`Checked ${picks.length} of ${trades.length} fills of ${resultsFile} against ${dataDir}:\n`);
console.log(
  '| # | filled at (virtual) | pair | side, quantity | close of the candle that closed then (its open) | recomputed: participation → slippage, price, fee | venue vs recomputed |',
);
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
console.log(
  failures === 0 ? '\nAll recomputed values equal the recorded ones.' : `\n${failures} mismatches.`,
);
process.exit(failures === 0 ? 0 : 1);
