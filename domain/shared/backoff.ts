/**
 * How a retry delay `d` is spread: none, full (uniform in [0, d]), equal (uniform in [d/2, d]) or ±`r` around it
 * (uniform in [d(1−r), d(1+r)]).
 */
export type Jitter = 'none' | 'full' | 'equal' | number;

/** An exponential back-off: `baseMs × 2^n`, at most `maxMs`, spread by `jitter`. */
export interface Backoff {
  baseMs: number;
  /** Upper bound of the delay before jitter (ms); `Infinity` for none. */
  maxMs: number;
  jitter?: Jitter;
}

/**
 * The delay (ms) before the next try after `n` earlier back-offs (`n` = 0 for the first): `min(maxMs, baseMs ×
 * 2^n)`, then spread by the jitter (AWS Architecture Blog, "Exponential Backoff And Jitter", 2015: full jitter
 * for many clients contending for one resource, equal jitter where a floor matters, a ±share where a predictable
 * order of magnitude does).
 * `random` is injectable so schedules can be tested; it returns a number in [0, 1).
 */
export const backoffDelayMs = (n: number, backoff: Backoff, random: () => number = Math.random): number => {
  const delay = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, n));
  const jitter = backoff.jitter ?? 'none';
  if (jitter === 'none') return delay;
  if (jitter === 'full') return delay * random();
  if (jitter === 'equal') return delay / 2 + (delay / 2) * random();
  return delay * (1 - jitter + 2 * jitter * random());
};
