import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compare8,
  maxOfPacked,
  normalize8,
  packUnits,
  UnitsPacker,
  unitsOf8,
  unitsOfPacked,
  unpackUnits,
} from '../../domain/metrics/equity-points';
import { computePerformance, type PerformanceInput } from '../../domain/metrics/performance';
import { packedEquityOfRows, sessionPerformance } from '../../projections/equity-rows-text';

/**
 * Issue 24: the equity curve's metrics over integer units (`domain/metrics/unit-series.ts`) are the decimal
 * functions' to the last printed digit — on random curves here (small and large returns, flat stretches, ruin,
 * values near the 2⁵² bound), and on a long session over the real data in `metrics-units.int.test.ts`.
 */

const M = 60_000;
const T0 = Date.parse('2022-01-01T00:00:00Z');

const units8 = (u: bigint): string => {
  const neg = u < 0n;
  const a = neg ? -u : u;
  return `${neg ? '-' : ''}${a / 100_000_000n}.${(a % 100_000_000n).toString().padStart(8, '0')}`;
};

/** A curve from a start and steps: each step multiplies by (1 + r) with r drawn from a few regimes. */
const curve = fc
  .tuple(
    fc.bigInt({ min: 1n, max: 2n ** 51n }),
    fc.array(
      fc.oneof(
        fc.constant(0),
        fc.double({ min: -1e-6, max: 1e-6, noNaN: true }),
        fc.double({ min: -0.01, max: 0.01, noNaN: true }),
        fc.double({ min: -1, max: 0.5, noNaN: true }),
      ),
      { minLength: 0, maxLength: 200 },
    ),
  )
  .map(([start, steps]) => {
    const out = [start];
    let e = start;
    for (const r of steps) {
      e = BigInt(Math.round(Number(e) * (1 + r)));
      if (e > 2n ** 51n) e = 2n ** 51n;
      out.push(e);
    }
    return out.map(units8);
  });

const inputOf = (values: string[]): PerformanceInput => ({
  startingBalance: values[0] ?? '1000',
  equity: values.map((equity, i) => ({ time: T0 + i * M, equity })),
  intervalMs: M,
  fills: [],
});

/**
 * The packing rule written out on decimal strings, as `packUnits` computed it before it fed a `UnitsPacker`
 * (9cb6a50): the oracle both are compared with (differences under 2⁵² units as numbers, beyond as `bigint`s,
 * runs of equal differences as `d*count`).
 */
const referencePackUnits = (values: readonly string[]): string => {
  const parts: string[] = [];
  let prev = 0;
  let prevBig: bigint | undefined;
  let run = '';
  let count = 0;
  for (const raw of values) {
    const v = normalize8(raw);
    const u = unitsOf8(v);
    let delta: string;
    if (u !== undefined && Math.abs(u) < 2 ** 52 && prevBig === undefined) {
      delta = String(u - prev);
      prev = u;
    } else {
      const big = BigInt(v.slice(0, -9) + v.slice(-8));
      delta = (big - (prevBig ?? BigInt(prev))).toString();
      if (u !== undefined && Math.abs(u) < 2 ** 52) {
        prev = u;
        prevBig = undefined;
      } else prevBig = big;
    }
    if (delta === run) count++;
    else {
      if (count > 0) parts.push(count > 1 ? `${run}*${count}` : run);
      run = delta;
      count = 1;
    }
  }
  if (count > 0) parts.push(count > 1 ? `${run}*${count}` : run);
  return parts.join(',');
};

describe('metrics over integer units', () => {
  it('equal the decimal way on random curves, as objects and packed', () => {
    fc.assert(
      fc.property(curve, (values) => {
        const input = inputOf(values);
        const reference = computePerformance(input, { decimal: true });
        expect(computePerformance(input)).toEqual(reference);
        const half = Math.floor(values.length / 2);
        const packed: PerformanceInput = {
          ...input,
          equity: {
            times: Float64Array.from(values, (_, i) => T0 + i * M),
            chunks: [packUnits(values.slice(0, half)), packUnits(values.slice(half))].filter((c) => c !== ''),
          },
        };
        expect(computePerformance(packed)).toEqual(reference);
      }),
      { numRuns: 400 },
    );
  });

  it('take the decimal way past 2⁵² units, with the same figures', () => {
    const values = ['90071992.54740992', '90071993.00000000', '1.00000000', '90071994.12345678'];
    expect(computePerformance(inputOf(values))).toEqual(
      computePerformance(inputOf(values), { decimal: true }),
    );
  });

  it('normalize like numeric(38, 8) and compare exactly', () => {
    expect(normalize8('1000')).toBe('1000.00000000');
    expect(normalize8('-0.000000004')).toBe('0.00000000');
    expect(normalize8('1.000000005')).toBe('1.00000001');
    expect(normalize8('-1.000000005')).toBe('-1.00000001');
    expect(normalize8('.5')).toBe('0.50000000');
    expect(() => normalize8('abc')).toThrow(RangeError);
    expect(compare8('-0.50000000', '-0.40000000')).toBe(-1);
    expect(compare8('10.00000000', '9.00000000')).toBe(1);
  });

  it('pack points as units and differences, and read them back exactly', () => {
    const values = ['1000', '1000.00000000', '1000.0', '999.99999999', '-0.5', '-0.5', '0'];
    const packed = packUnits(values);
    expect(packed).toBe('100000000000,0*2,-1,-100049999999,0,50000000');
    expect(unpackUnits(packed)).toEqual(values.map(normalize8));
    expect(maxOfPacked(packed)).toBe('1000.00000000');
    expect(packUnits([])).toBe('');
    expect(unpackUnits('')).toEqual([]);
    expect(maxOfPacked('')).toBeNull();
    expect(() => unpackUnits('1,,2')).toThrow(RangeError);
    expect(() => unpackUnits('1*1')).toThrow(RangeError);
    expect(() => unpackUnits('1,')).toThrow(RangeError);
    expect(() => unpackUnits('x')).toThrow(RangeError);
  });

  it('pack any decimal exactly, beyond 2⁵³ units too', () => {
    const big = fc.oneof(
      fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
      fc.bigInt({ min: -(2n ** 53n) - 5n, max: -(2n ** 53n) + 5n }),
      fc.bigInt({ min: 2n ** 52n - 5n, max: 2n ** 52n + 5n }),
      fc.bigInt({ min: -1000n, max: 1000n }),
    );
    fc.assert(
      fc.property(fc.array(big, { maxLength: 40 }), (units) => {
        const values = units.map(units8);
        const packed = packUnits(values);
        expect(packed).toBe(referencePackUnits(values));
        expect(unpackUnits(packed)).toEqual(values);
        const reference = values.reduce<string | null>(
          (b, v) => (b === null || compare8(v, b) > 0 ? v : b),
          null,
        );
        expect(maxOfPacked(packed)).toBe(reference);
        const into = new Float64Array(values.length);
        const n = unitsOfPacked(packed, into, 0);
        // Numbers while every point and difference is under 10¹⁵ units; else the caller's exact decimal way.
        if (units.every((u) => u < 10n ** 14n && u > -(10n ** 14n))) expect(n).toBe(values.length);
        if (n !== undefined) expect([...into].map((u) => BigInt(u))).toEqual(units);
      }),
      { numRuns: 400 },
    );
  });

  it("pack point by point from units (the stepping loop's UnitsPacker) exactly as packUnits packs the strings", () => {
    // Runs of equal differences across the 2⁵² bound (a small difference between big points joins a run of small
    // ones), repeated points, and values around ±2⁵³.
    const near = (c: bigint) => fc.bigInt({ min: c - 4n, max: c + 4n });
    const point = fc.oneof(
      near(0n),
      near(2n ** 52n),
      near(-(2n ** 52n)),
      near(2n ** 53n),
      near(-(2n ** 53n)),
      fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
    );
    const points = fc
      .array(fc.tuple(point, fc.integer({ min: 1, max: 4 }), fc.bigInt({ min: -3n, max: 3n })), {
        maxLength: 30,
      })
      .map((runs) =>
        runs.flatMap(([start, count, step]) =>
          Array.from({ length: count }, (_, k) => start + step * BigInt(k)),
        ),
      );
    fc.assert(
      // Each point pushed as a bigint or, where it is a safe integer, as a number (the stepping loop's exact
      // number path, EquityMeter.atSmall), as the flags say.
      fc.property(points, fc.array(fc.boolean(), { minLength: 1 }), (units, asNumber) => {
        const packer = new UnitsPacker();
        units.forEach((u, k) => {
          const safe = u >= -BigInt(Number.MAX_SAFE_INTEGER) && u <= BigInt(Number.MAX_SAFE_INTEGER);
          packer.push(safe && asNumber[k % asNumber.length] ? Number(u) : u);
        });
        expect(packer.text()).toBe(referencePackUnits(units.map(units8)));
        expect(packUnits(units.map(units8))).toBe(packer.text());
        expect(packer.points).toBe(units.length);
        expect(packer.last === undefined ? undefined : BigInt(packer.last)).toBe(units.at(-1));
      }),
      { numRuns: 600 },
    );
    const packer = new UnitsPacker();
    for (const u of [100_000_000_000n, 100_000_000_000n, 100_000_000_000n, 99_999_999_999n]) packer.push(u);
    expect(packer.text()).toBe('100000000000,0*2,-1');
    expect(new UnitsPacker().text()).toBe('');
  });
});

/**
 * Issue 24: a finished session's equity reaches the metrics thread as its rows' COPY text (bytes), and that thread
 * builds the points' times; the projection built them before (`start + (from_step + j) × interval`) and handed the
 * texts. Both must give the same curve, so the same results.
 */
describe('equity rows as COPY text', () => {
  /** The rows as the projection read them before: `{ from_step, points, equity }`, and the curve it built. */
  const curveBefore = (
    rows: { from_step: number; points: number; equity: string }[],
    start: number,
    step: number,
  ) => {
    const total = rows.reduce((n, r) => n + r.points, 0);
    const times = new Float64Array(Math.max(total, 1));
    let k = 0;
    for (const r of rows) for (let j = 0; j < r.points; j++) times[k++] = start + (r.from_step + j) * step;
    return total === 0
      ? { times: new Float64Array([start]), chunks: [packUnits(['1000'])] }
      : { times, chunks: rows.map((r) => r.equity) };
  };
  const bytes = (text: string) => [new TextEncoder().encode(text)];
  /** The text in parts as a server sends it: a part per row. */
  const parts = (lines: string[]) => lines.map((line) => new TextEncoder().encode(line));

  it('give the curve the projection built from the rows, and the same figures', () => {
    fc.assert(
      fc.property(
        curve,
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(60_000, 3_600_000, 86_400_000),
        (values, cuts, step) => {
          // The curve cut into rows as the projection writes them: step 0 alone, then batches.
          const rows: { from_step: number; points: number; equity: string }[] = [];
          let at = 0;
          for (const cut of [1, ...cuts]) {
            if (at >= values.length) break;
            const part = values.slice(at, at + cut);
            rows.push({ from_step: at, points: part.length, equity: packUnits(part) });
            at += part.length;
          }
          const start = T0 + 7 * step;
          const lines = rows.map((r) => `${r.from_step}\t${r.points}\t${r.equity}\n`);
          const text = lines.join('');
          const curveOf = packedEquityOfRows({ start, stepMs: step, rows: bytes(text) }, '1000');
          const old = curveBefore(rows, start, step);
          expect(curveOf.times).toEqual(old.times);
          expect(curveOf.chunks).toEqual(old.chunks);
          expect(packedEquityOfRows({ start, stepMs: step, rows: parts(lines) }, '1000')).toEqual(curveOf);
          const input = { ...inputOf(values.slice(0, at)), intervalMs: step };
          expect(
            sessionPerformance({ ...input, equity: { start, stepMs: step, rows: bytes(text) } }),
          ).toEqual(computePerformance({ ...input, equity: old }));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('give the starting balance at the start without rows', () => {
    expect(packedEquityOfRows({ start: T0, stepMs: M, rows: [] }, '1000')).toEqual(curveBefore([], T0, M));
  });

  it('refuse what is not such text, naming the byte', () => {
    for (const [text, at] of [
      ['0\t1\t100', 7],
      ['0\t1\t1 0\n', 5],
      ['0 1\t100\n', 1],
      ['x\t1\t100\n', 0],
      ['0\t\t100\n', 2],
      ['1234567890123456\t1\t1\n', 16],
      ['0\t1\t1\\t\n', 5],
    ] as const) {
      expect(() => packedEquityOfRows({ start: T0, stepMs: M, rows: bytes(text) }, '1000')).toThrow(
        `not equity rows as COPY text at byte ${at}`,
      );
      // Cut anywhere, the same text: the offset counts from the first part.
      const cut = new TextEncoder().encode(text);
      expect(() =>
        packedEquityOfRows({ start: T0, stepMs: M, rows: [cut.slice(0, 3), cut.slice(3)] }, '1000'),
      ).toThrow(`not equity rows as COPY text at byte ${at}`);
    }
  });
});
