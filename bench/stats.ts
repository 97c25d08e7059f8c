import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';

/**
 * What every benchmark measures the same way: percentiles, CPU time of local processes and scratch databases.
 * One convention throughout: percentiles are nearest-rank with `p` in 0–100 (the p99 of 100 values is the 99th
 * smallest), times in the caller's unit.
 */

/** Nearest-rank percentile of `values` (any order; not modified), `p` in 0–100; `NaN` when empty. */
export const percentile = (values: readonly number[], p: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return percentileOfSorted(sorted, p);
};

/** {@link percentile} of values already sorted ascending (no copy: for many percentiles of one large sample). */
export const percentileOfSorted = (sorted: ArrayLike<number>, p: number): number =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

/** A sample's size, mean, p50/p90/p99, min and max (rounded to `places`; `NaN` when empty). */
export interface Summary {
  count: number;
  mean: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Rounds `n` to `places` decimals. */
export const round = (n: number, places = 3): number => Math.round(n * 10 ** places) / 10 ** places;

/** The {@link Summary} of `values`, each figure rounded to `places` decimals. */
export const summarize = (values: readonly number[], places = 3): Summary => {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    count: n,
    mean: n ? round(sum / n, places) : Number.NaN,
    min: n ? round(sorted[0]!, places) : Number.NaN,
    p50: round(percentileOfSorted(sorted, 50), places),
    p90: round(percentileOfSorted(sorted, 90), places),
    p99: round(percentileOfSorted(sorted, 99), places),
    max: n ? round(sorted[n - 1]!, places) : Number.NaN,
  };
};

/**
 * CPU time (user + system, seconds) a local process has used so far, from `/proc/<pid>/stat` (fields 14 and 15,
 * in clock ticks of 1/100 s); `undefined` when the process is gone or not on this machine. With `command`, only a
 * process whose command name (`comm`) is that (e.g. `postgres`: a pid reused by another program is not counted).
 */
export const processCpuSeconds = (pid: number, command?: string): number | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (command !== undefined && stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== command)
      return undefined;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
};

/** A database of a benchmark's own on a PostgreSQL server, dropped (with its connections) by `drop()`. */
export interface ScratchDatabase {
  name: string;
  /** Connection string of the scratch database. */
  url: string;
  drop(): Promise<void>;
}

/**
 * Creates an empty database named `<prefix><random hex>` on the server of `serverUrl` (any database URL of that
 * server: it connects there to create and drop). Throws the server's error when it cannot create it.
 */
export const createScratchDatabase = async (serverUrl: string, prefix: string): Promise<ScratchDatabase> => {
  const name = `${prefix}${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end().catch(() => {});
    }
  };
  await admin(`create database ${pg.escapeIdentifier(name)}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  return {
    name,
    url: url.toString(),
    drop: () => {
      dropped ??= admin(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
      return dropped;
    },
  };
};
