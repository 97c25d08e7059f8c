import { InvalidArgumentError } from 'commander';

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
