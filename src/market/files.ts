import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Interval, isInterval } from '../../domain/market/intervals';

/**
 * Finds market-data files in a directory laid out in Binance's own formats (ARCHITECTURE §7):
 * `exchangeInfo.json`, `ticker_24hr.json`, and kline files anywhere under `klines/`, named like Binance's
 * (`{SYMBOL}-{interval}[-...].csv|json|zip`, e.g. `BTCUSDT-1m-2020-01.zip` from data.binance.vision, with its
 * `.CHECKSUM` beside it, or `BTCUSDT-1h.csv`). The directory may also be a parent holding a `binance/` folder of that shape.
 */
export type FoundFile =
  | { kind: 'exchange_info' | 'ticker_24hr'; file: string; relative: string }
  | {
      kind: 'klines';
      file: string;
      relative: string;
      symbol: string;
      interval: Interval;
      format: 'csv' | 'json' | 'zip';
    }
  | { kind: 'skipped'; file: string; relative: string; reason: string };

/** The directory holding the files: `dir` itself, or `dir/binance` when `dir` has no data of its own. */
export const dataRoot = (dir: string): string => {
  const own = ['exchangeInfo.json', 'klines', 'ticker_24hr.json'].some((f) =>
    fs.existsSync(path.join(dir, f)),
  );
  const nested = path.join(dir, 'binance');
  return !own && fs.existsSync(nested) && fs.statSync(nested).isDirectory() ? nested : dir;
};

const KLINE_NAME = /^([A-Za-z0-9]+)-([0-9]+[a-zA-Z])(?:-.*)?\.(csv|json|zip)$/i;
const EXCHANGE_INFO = /^exchange_?info\.json$/i;
const TICKER = /^(ticker[_-]?)?24hr\.json$/i;

const walk = (dir: string): string[] => {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const stat = entry.isSymbolicLink() ? fs.statSync(full, { throwIfNoEntry: false }) : entry;
    if (stat?.isDirectory()) out.push(...walk(full));
    else if (stat?.isFile()) out.push(full);
  }
  return out.sort();
};

/** Lists the data files of `dir` (see {@link dataRoot}), exchangeInfo first, then tickers, then klines. */
export const scanDirectory = (dir: string): { root: string; files: FoundFile[] } => {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new Error(`market data directory not found: ${dir}`);
  }
  const root = dataRoot(dir);
  const files: FoundFile[] = [];
  for (const name of fs.readdirSync(root).sort()) {
    const file = path.join(root, name);
    if (!fs.statSync(file).isFile()) continue;
    if (EXCHANGE_INFO.test(name)) files.push({ kind: 'exchange_info', file, relative: name });
    else if (TICKER.test(name)) files.push({ kind: 'ticker_24hr', file, relative: name });
  }
  for (const file of walk(path.join(root, 'klines'))) {
    const relative = path.relative(root, file);
    const name = path.basename(file);
    if (name.startsWith('.')) continue;
    if (/\.(checksum|sha256|md5)$/i.test(name)) continue;
    const m = KLINE_NAME.exec(name);
    if (!m) {
      files.push({
        kind: 'skipped',
        file,
        relative,
        reason: 'name is not {SYMBOL}-{interval}[-...].csv|json|zip',
      });
      continue;
    }
    const interval = m[2]!;
    if (!isInterval(interval)) {
      files.push({
        kind: 'skipped',
        file,
        relative,
        reason: `interval ${interval} is not stored (1m, 5m, 15m, 1h, 4h, 1d)`,
      });
      continue;
    }
    files.push({
      kind: 'klines',
      file,
      relative,
      symbol: m[1]!.toUpperCase(),
      interval,
      format: m[3]!.toLowerCase() as 'csv' | 'json' | 'zip',
    });
  }
  return { root, files };
};

/** SHA-256 (hex) of a file's bytes and the bytes themselves. */
export const readWithChecksum = (file: string): { bytes: Buffer; checksum: string } => {
  const bytes = fs.readFileSync(file);
  return { bytes, checksum: createHash('sha256').update(bytes).digest('hex') };
};

/** SHA-256 (hex) of a file, read as a stream (never whole in memory). */
export const sha256OfFile = async (file: string): Promise<string> => {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
};

/**
 * The SHA-256 a `.CHECKSUM` sibling publishes for `file` (Binance: `<hex>  <name>`), `undefined` without one, or
 * `null` when the sibling exists but says nothing readable.
 */
export const publishedChecksum = (file: string): string | null | undefined => {
  const sibling = [`${file}.CHECKSUM`, `${file}.checksum`].find((f) => fs.existsSync(f));
  if (!sibling) return undefined;
  const m = /^([0-9a-fA-F]{64})\b/.exec(fs.readFileSync(sibling, 'utf8').trim());
  return m ? m[1]!.toLowerCase() : null;
};
