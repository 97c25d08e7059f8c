import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from '../../domain/shared/backoff';

describe('backoffDelayMs', () => {
  it('doubles from the base up to the bound without jitter', () => {
    const b = { baseMs: 100, maxMs: 1_000 };
    expect([0, 1, 2, 3, 4, 10].map((n) => backoffDelayMs(n, b))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(backoffDelayMs(-3, b)).toBe(100);
  });

  it('keeps every jittered delay inside its band', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (n, baseMs, maxMs, u, share) => {
          const d = Math.min(maxMs, baseMs * 2 ** n);
          const random = () => u;
          const full = backoffDelayMs(n, { baseMs, maxMs, jitter: 'full' }, random);
          const equal = backoffDelayMs(n, { baseMs, maxMs, jitter: 'equal' }, random);
          const around = backoffDelayMs(n, { baseMs, maxMs, jitter: share }, random);
          expect(full).toBeGreaterThanOrEqual(0);
          expect(full).toBeLessThanOrEqual(d);
          expect(equal).toBeGreaterThanOrEqual(d / 2);
          expect(equal).toBeLessThanOrEqual(d);
          expect(around).toBeGreaterThanOrEqual(d * (1 - share) - 1e-9);
          expect(around).toBeLessThanOrEqual(d * (1 + share) + 1e-9);
        },
      ),
    );
  });

  it('spreads ±share around the delay: the extremes of random give the ends of the band', () => {
    const b = { baseMs: 200, maxMs: 5_000, jitter: 0.25 };
    expect(backoffDelayMs(1, b, () => 0)).toBe(300);
    expect(backoffDelayMs(1, b, () => 0.5)).toBe(400);
    expect(backoffDelayMs(1, b, () => 1)).toBe(500);
  });
});
