import fs from 'node:fs';
import { type Command, InvalidArgumentError, Option } from 'commander';

/**
 * commander's parser of a positive integer option (`--pending 100000`): the number, or commander's usage error
 * `expected a positive integer` for anything else (0, negatives, fractions, text). Shared by every benchmark.
 */
export const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
};

/**
 * commander's parser of a non-negative integer option (`--port 0`, `--warmup 0`): the number, or commander's usage
 * error `expected a non-negative integer` for anything else (negatives, fractions, text).
 */
export const nonNegativeInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
};

/**
 * commander's parser of a positive number option (`--seconds 2.5`): the number, or commander's usage error
 * `expected a positive number` for anything else (0, negatives, text, infinities).
 */
export const positiveNumber = (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number');
  return n;
};

/**
 * commander's parser of a non-negative number option (`--from 0`, `--from 12.5`): the number, or commander's usage
 * error `expected a non-negative number` for anything else (negatives, text, infinities).
 */
export const nonNegativeNumber = (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a non-negative number');
  return n;
};

/** The local PostgreSQL server the benchmarks use when neither `--url` nor `DATABASE_URL` names one. */
const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * The `--url <url>` option of a benchmark that works on a PostgreSQL server (its scratch databases are made there):
 * `description` in the help, default `DATABASE_URL`, else {@link LOCAL_POSTGRES}. Added with `addOption`.
 */
const serverUrlOption = (description = 'PostgreSQL server'): Option =>
  new Option('--url <url>', description).default(process.env.DATABASE_URL || LOCAL_POSTGRES);

/** The `--json <file>` option of a benchmark: where {@link writeJsonResults} writes its results. */
export const jsonOption = (): Option => new Option('--json <file>', 'also write the results as JSON');

/** Writes `results` to `file` as indented JSON with a final newline; nothing when `file` is absent (no `--json`). */
export const writeJsonResults = (file: string | undefined, results: unknown): void => {
  if (file) fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
};

/**
 * The `--db-prefix <name>` option of a benchmark that creates a scratch database on the server: the name's start (a
 * random tail follows), `fallback` when not given; on a shared server each user keeps to its own prefix.
 */
const dbPrefixOption = (fallback: string): Option =>
  new Option('--db-prefix <name>', 'name prefix of the scratch database (a random tail follows)').default(
    fallback,
  );

/**
 * `command` with the options of a benchmark that makes a scratch database on a PostgreSQL server: `--url`
 * ({@link serverUrlOption}, `description` in the help) and `--db-prefix` ({@link dbPrefixOption}, default `prefix`).
 */
export const withScratchDatabase = (command: Command, prefix: string, description?: string): Command =>
  command.addOption(serverUrlOption(description)).addOption(dbPrefixOption(prefix));
