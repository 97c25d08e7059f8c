import type { Pair } from './contract';
import { pairs } from './venue';

let cache: Promise<Map<string, Pair>> | null = null;

/** Every pair of the venue by symbol, read once per page load (the pair list is the venue's exchange info). */
export const pairMap = (): Promise<Map<string, Pair>> => {
  cache ??= pairs().then(
    (r) => new Map(r.pairs.map((p) => [p.symbol, p])),
    (e: unknown) => {
      cache = null;
      throw e;
    },
  );
  return cache;
};
