import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { computePerformance } from '../../domain/metrics/performance';
import type { MetricsFill } from '../../domain/metrics/trades';

/**
 * Recomputes every worked example of `docs/metrics.md`: each fenced block tagged `json metrics-example NAME` holds
 * an `input` (equity values with a start time and the interval; fills with their hour after `fillsStart`) and the
 * `expected` output, which must be exactly what `computePerformance` returns for those fields.
 */
const DOC = path.resolve(import.meta.dirname, '../../docs/metrics.md');

interface DocExample {
  name: string;
  input: {
    startingBalance: string;
    intervalMs: number;
    equityStart: string;
    equity: string[];
    fillsStart?: string;
    fills: (Omit<MetricsFill, 'time'> & { hour: number })[];
    marks?: Record<string, string>;
  };
  expected: Record<string, unknown>;
}

const examples = (): DocExample[] => {
  const text = fs.readFileSync(DOC, 'utf8');
  const out: DocExample[] = [];
  const re = /```json metrics-example ([^\n]+)\n([\s\S]*?)```/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push({ name: m[1]!.trim(), ...JSON.parse(m[2]!) });
  }
  return out;
};

describe('docs/metrics.md worked examples', () => {
  const all = examples();

  it('has the three documented examples', () => {
    expect(all.map((e) => e.name)).toEqual(['cycle', 'drawdown', 'trades']);
  });

  for (const example of all) {
    it(`recomputes example "${example.name}"`, () => {
      const { input } = example;
      const t0 = Date.parse(input.equityStart);
      const f0 = Date.parse(input.fillsStart ?? input.equityStart);
      const result = computePerformance({
        startingBalance: input.startingBalance,
        intervalMs: input.intervalMs,
        equity: input.equity.map((equity, i) => ({ time: t0 + i * input.intervalMs, equity })),
        fills: input.fills.map(({ hour, ...f }) => ({ ...f, time: f0 + hour * 3_600_000 })),
        ...(input.marks ? { marks: input.marks } : {}),
      });
      expect(result).toMatchObject(example.expected);
    });
  }
});
