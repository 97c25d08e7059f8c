import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MarketData } from '../../src/market/market-data';
import { ColumnStore } from '../../src/market/store/column-store';

/** The shared real Binance data set (never copied into the repository). */
export const MARKET_DATA = path.resolve(import.meta.dirname, '../../../shared/market-data');
/** Its `binance/` folder. */
export const BINANCE = path.join(MARKET_DATA, 'binance');

/** Reads a file of the data set as text. */
export const readData = (relative: string): string => fs.readFileSync(path.join(BINANCE, relative), 'utf8');

/** A temporary directory removed by the returned function. */
export const tempDir = (prefix = 'ptv-market-'): { dir: string; remove: () => void } => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
};

/**
 * A data directory of Binance's layout holding symbolic links to some of the real files (no copy): `files` are
 * paths relative to `binance/`. Extra files can then be written next to them.
 */
export const linkedDataDir = (files: string[]): { dir: string; remove: () => void } => {
  const t = tempDir();
  for (const relative of files) {
    const target = path.join(t.dir, relative);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.symlinkSync(path.join(BINANCE, relative), target);
  }
  return t;
};

/** Writes a file (creating folders) inside `dir`. */
export const writeFile = (dir: string, relative: string, text: string): void => {
  const target = path.join(dir, relative);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, text);
};

/** Parses an hourly CSV of the data set independently of the code under test: rows of strings. */
export const csvRows = (relative: string): string[][] =>
  readData(relative)
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(','));

/** Market data over an empty candle store in a temporary directory (removed when the test process exits). */
export const tempMarketData = (): MarketData => {
  const { dir, remove } = tempDir('ptv-store-');
  process.once('exit', remove);
  return new MarketData(new ColumnStore(dir));
};
