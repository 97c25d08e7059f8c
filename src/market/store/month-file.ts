import fs from 'node:fs';
import path from 'node:path';
import type { Interval } from '../../../domain/market/intervals';
import { type CandleColumns, decodeBlock, encodeBlock } from './block-codec';
import { sliceColumns } from './columns';

/**
 * One file per pair and calendar month (UTC) of the candle store: every series of that pair in that month, each cut
 * into blocks (a day each for 1m, 5m and 15m, the whole month for coarser intervals) so a range read decodes only
 * the blocks of its window. A file is written whole under a temporary name and renamed, so a reader sees the old
 * file or the new one, never a mix. It is not flushed to disk here: the store flushes the files it wrote, all at
 * once, before the manifest that names them (`ColumnStore.flush`).
 *
 * ```
 * "PTVC" | u32 format=1 | u32 directory length | directory (JSON, UTF-8) | blocks (block-codec.ts)
 * ```
 *
 * The directory lists the sections — `native` (candles as imported, per interval) and `served` (a coarser interval
 * made from finer native candles, where no native series alone gives it) — and for each block its first and last
 * open time, its candle count and its byte range.
 */
export interface BlockEntry {
  first: number;
  last: number;
  count: number;
  /** Byte offset from the start of the blocks, and length. */
  offset: number;
  length: number;
}

export interface Section {
  interval: Interval;
  kind: 'native' | 'served';
  count: number;
  blocks: BlockEntry[];
}

export interface MonthDirectory {
  symbol: string;
  /** `YYYY-MM`. */
  month: string;
  sections: Section[];
  /** Byte offset of the blocks in the file. */
  dataOffset: number;
}

const MAGIC = 'PTVC';
const FORMAT = 1;
const DAY = 86_400_000;
/** Intervals stored in day blocks; coarser ones in one block per month. */
const DAILY_BLOCKS = new Set<Interval>(['1m', '5m', '15m']);

/** `YYYY-MM` of an epoch time (UTC). */
export const monthOf = (ms: number): string => new Date(ms).toISOString().slice(0, 7);

/** The [start, end) epoch ms of a `YYYY-MM` month. */
export const monthBounds = (month: string): [number, number] => {
  const y = Number(month.slice(0, 4));
  const m = Number(month.slice(5, 7)) - 1;
  return [Date.UTC(y, m, 1), Date.UTC(y, m + 1, 1)];
};

/** A section to write: its series for the month. */
export interface SectionData {
  interval: Interval;
  kind: 'native' | 'served';
  columns: CandleColumns;
}

/** Writes the file of `symbol` and `month` at `file` (atomically). Sections with no candles are left out. */
export const writeMonthFile = (
  file: string,
  symbol: string,
  month: string,
  sections: readonly SectionData[],
) => {
  const blocks: Uint8Array[] = [];
  let offset = 0;
  const directory: MonthDirectory = { symbol, month, sections: [], dataOffset: 0 };
  for (const s of sections) {
    const c = s.columns;
    if (c.length === 0) continue;
    const entries: BlockEntry[] = [];
    let from = 0;
    while (from < c.length) {
      let to = c.length;
      if (DAILY_BLOCKS.has(s.interval)) {
        const dayEnd = (Math.floor(c.openTime[from]! / DAY) + 1) * DAY;
        to = from;
        while (to < c.length && c.openTime[to]! < dayEnd) to++;
      }
      const bytes = encodeBlock(from === 0 && to === c.length ? c : sliceColumns(c, from, to));
      entries.push({
        first: c.openTime[from]!,
        last: c.openTime[to - 1]!,
        count: to - from,
        offset,
        length: bytes.length,
      });
      blocks.push(bytes);
      offset += bytes.length;
      from = to;
    }
    directory.sections.push({ interval: s.interval, kind: s.kind, count: c.length, blocks: entries });
  }
  const json = Buffer.from(JSON.stringify(directory), 'utf8');
  const head = Buffer.alloc(12);
  head.write(MAGIC, 0, 'latin1');
  head.writeUInt32LE(FORMAT, 4);
  head.writeUInt32LE(json.length, 8);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.partial`;
  const fd = fs.openSync(temporary, 'w');
  try {
    fs.writeSync(fd, head);
    fs.writeSync(fd, json);
    for (const b of blocks) fs.writeSync(fd, b);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, file);
  return { ...directory, dataOffset: 12 + json.length };
};

/** Reads the directory of an open month file. */
export const readDirectory = (fd: number): MonthDirectory => {
  const head = Buffer.alloc(12);
  fs.readSync(fd, head, 0, 12, 0);
  if (head.toString('latin1', 0, 4) !== MAGIC) throw new Error('not a candle store month file');
  const format = head.readUInt32LE(4);
  if (format !== FORMAT) throw new Error(`unknown candle store file format ${format}`);
  const length = head.readUInt32LE(8);
  const json = Buffer.alloc(length);
  fs.readSync(fd, json, 0, length, 12);
  const directory = JSON.parse(json.toString('utf8')) as MonthDirectory;
  return { ...directory, dataOffset: 12 + length };
};

/** Reads and decodes one block of an open month file. */
export const readBlock = (fd: number, directory: MonthDirectory, block: BlockEntry): CandleColumns => {
  const bytes = Buffer.alloc(block.length);
  fs.readSync(fd, bytes, 0, block.length, directory.dataOffset + block.offset);
  return decodeBlock(bytes);
};

/** The buffer {@link readBlockBytes} reads into (grown as needed). */
let blockBytes = Buffer.allocUnsafeSlow(64 * 1024);

/**
 * The encoded bytes of one block of an open month file, in a buffer reused by the next call (valid until then):
 * for a decode that keeps nothing of them ({@link decodeBlockWindow}).
 */
export const readBlockBytes = (fd: number, directory: MonthDirectory, block: BlockEntry): Uint8Array => {
  if (blockBytes.length < block.length)
    blockBytes = Buffer.allocUnsafeSlow(Math.max(block.length, 2 * blockBytes.length));
  fs.readSync(fd, blockBytes, 0, block.length, directory.dataOffset + block.offset);
  return blockBytes.subarray(0, block.length);
};

/** The section of `interval` and `kind`, if the file has it. */
export const sectionOf = (
  directory: MonthDirectory,
  interval: Interval,
  kind: 'native' | 'served',
): Section | undefined => directory.sections.find((s) => s.interval === interval && s.kind === kind);
