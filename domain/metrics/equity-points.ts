/**
 * Equity points packed (issue 24): a run of a backtest's points as one text — `BacktestStepped` (version 2) carries
 * a batch's points so, and the `backtest_equity` read model stores that text as it is — so a batch of 100,000 steps
 * is one string, not 100,000 strings, rows or objects. The text is integer 1e-8 units, each point's difference from
 * the one before ({@link packUnits}); every point read back is an 8-place decimal in the form PostgreSQL prints a
 * `numeric(38, 8)` in (`-?digits.8 digits`, {@link normalize8}).
 */

const NORMAL = /^-?(?:0|[1-9]\d*)\.\d{8}$/;
const SCALE = 100_000_000n;

/**
 * `value` (a decimal string) in the form of PostgreSQL's `numeric(38, 8)` text: exactly 8 places, rounded half away
 * from zero as PostgreSQL rounds on the cast (the row-per-step table stored the events' strings through that cast).
 * Throws `RangeError` for a string that is not a decimal.
 */
export const normalize8 = (value: string): string => {
  if (NORMAL.test(value) && value !== '-0.00000000') return value;
  const match = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(value.trim());
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) {
    throw new RangeError(`not a decimal: ${JSON.stringify(value)}`);
  }
  const negative = match[1] === '-';
  const fraction = match[3] ?? '';
  let units = BigInt((match[2] || '0') + fraction.slice(0, 8).padEnd(8, '0'));
  if (fraction.length > 8 && fraction.charCodeAt(8) >= 53 /* '5' */) units += 1n;
  const int = units / SCALE;
  const frac = (units % SCALE).toString().padStart(8, '0');
  return `${negative && units !== 0n ? '-' : ''}${int}.${frac}`;
};

/**
 * Integer 1e-8 units of a normalized 8-place decimal as a number, or `undefined` when it is beyond
 * `Number.MAX_SAFE_INTEGER` (over ~90 million): the caller then takes the exact decimal way.
 */
export const unitsOf8 = (value: string): number | undefined => {
  const u = Number(value.slice(0, -9) + value.slice(-8));
  return Number.isSafeInteger(u) ? u : undefined;
};

/** Compares two normalized 8-place decimals exactly: −1, 0 or 1. */
export const compare8 = (a: string, b: string): number => {
  const na = a.charCodeAt(0) === 45;
  const nb = b.charCodeAt(0) === 45;
  if (na !== nb) return na ? -1 : 1;
  const sign = na ? -1 : 1;
  if (a.length !== b.length) return (a.length < b.length ? -1 : 1) * sign;
  return a === b ? 0 : (a < b ? -1 : 1) * sign;
};

// ---------------------------------------------------------------------------------------------------------
// Packed units: the form of `BacktestStepped` (version 2) and of the `backtest_equity` rows
// ---------------------------------------------------------------------------------------------------------

/** Beyond this many units (in absolute value, ~45 million USDT) a point is summed as a `bigint`. */
const SAFE = 2 ** 52;

/** A run of `count` equal differences `delta` as its token (`d`, or `d*count` for two or more). */
const token = (delta: string, count: number): string => (count > 1 ? `${delta}*${count}` : delta);

/**
 * Equity points (8-place decimal strings, each normalized by {@link normalize8}) packed as integer 1e-8 units,
 * each point written as its difference from the one before (the first's from 0) in decimal, the differences joined
 * by commas, and a run of `count` ≥ 2 equal differences `d` written `d*count`: `["1000.00000000",
 * "1000.00000000", "1000.00000000", "999.99999999"]` → `"100000000000,0*2,-1"`. Exact for any value (the
 * differences of values beyond 2⁵² units are computed as `bigint`); the same points always give the same text,
 * so a version-1 event upcast and a version-2 event of the same steps give the same row. No points: `""`. Each
 * point's units go through one {@link UnitsPacker}, the stepping loop's packer: one implementation of the rule.
 */
export const packUnits = (values: readonly string[]): string => {
  const packer = new UnitsPacker();
  for (const raw of values) {
    const v = normalize8(raw);
    const u = unitsOf8(v);
    packer.push(u !== undefined && Math.abs(u) < SAFE ? u : BigInt(v.slice(0, -9) + v.slice(-8)));
  }
  return packer.text();
};

/** 2⁵² as a `bigint`: {@link UnitsPacker}'s bound between its number and `bigint` differences (`SAFE`). */
const SAFE_BIG = 2n ** 52n;
const MAX_SAFE_BIG = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * {@link packUnits}'s rule one point at a time, from each point's integer 1e-8 units (a number when it is a safe
 * integer, else a `bigint`, as `EquityMeter.atUnits` gives them): `text()` after pushing the units of `values` is
 * `packUnits(values)`, which is built on it (test/backtest/metrics-units.unit.test.ts compares both with the rule
 * written out on decimal strings). A run's
 * difference is kept as a number (or a `bigint` beyond 2⁵³) and written once when the run ends, so a step whose
 * equity did not move allocates no string — a backtest's stepping loop packs its 100,000 points without holding
 * 100,000 strings (issue 24: the stepping isolate's young-generation survivors).
 */
export class UnitsPacker {
  private readonly parts: string[] = [];
  /** The previous point while it is under 2⁵² in absolute value (`prevBig` undefined), else `prevBig`. */
  private prev = 0;
  private prevBig: bigint | undefined;
  /**
   * The current run's difference — `runBig` when it is beyond the safe integers, else `run` — and its length. Numbers
   * and `bigint`s in fields of their own: a field that only ever holds numbers is updated in place, where one that
   * may hold either boxes every number stored (garbage per step).
   */
  private run = 0;
  private runBig: bigint | undefined;
  private count = 0;
  /** The last point (`lastBig` when it was pushed as a `bigint`, else `lastNumber`). */
  private lastNumber = 0;
  private lastBig: bigint | undefined;
  /** Points pushed. */
  points = 0;

  /** The last point pushed (units, as pushed), or undefined before the first. */
  get last(): bigint | number | undefined {
    return this.points === 0 ? undefined : (this.lastBig ?? this.lastNumber);
  }

  /** Appends the point of `points` 1e-8 units (a number only when it is a safe integer). */
  push(points: bigint | number): void {
    this.points++;
    if (typeof points === 'number') {
      this.lastNumber = points;
      this.lastBig = undefined;
      if (this.prevBig === undefined && points < SAFE && points > -SAFE) {
        const delta = points - this.prev;
        this.prev = points;
        this.pushNumber(delta);
        return;
      }
    } else this.lastBig = points;
    const units = typeof points === 'bigint' ? points : BigInt(points);
    if (this.prevBig === undefined && units < SAFE_BIG && units > -SAFE_BIG) {
      const u = Number(units);
      const delta = u - this.prev;
      this.prev = u;
      this.pushNumber(delta);
      return;
    }
    const d = units - (this.prevBig ?? BigInt(this.prev));
    if (units < SAFE_BIG && units > -SAFE_BIG) {
      this.prev = Number(units);
      this.prevBig = undefined;
    } else this.prevBig = units;
    if (d <= MAX_SAFE_BIG && d >= -MAX_SAFE_BIG) this.pushNumber(Number(d));
    else if (this.count > 0 && this.runBig === d) this.count++;
    else {
      this.flush();
      this.runBig = d;
      this.count = 1;
    }
  }

  /** Extends the current run with the safe-integer difference `delta`, or starts a new one. */
  private pushNumber(delta: number): void {
    if (this.count > 0 && this.runBig === undefined && this.run === delta) this.count++;
    else {
      this.flush();
      this.run = delta;
      this.runBig = undefined;
      this.count = 1;
    }
  }

  /** Writes the current run's token (none before the first point). */
  private flush(): void {
    if (this.count > 0) this.parts.push(token((this.runBig ?? this.run).toString(), this.count));
  }

  /** The packed text of the points pushed so far ({@link packUnits}'s). */
  text(): string {
    if (this.count === 0) return '';
    this.flush();
    const text = this.parts.join(',');
    this.parts.pop();
    return text;
  }
}

/** An integer number of 1e-8 units as the 8-place decimal {@link normalize8} gives. */
export const decimalOfUnits = (u: number | bigint): string => {
  const negative = u < 0;
  const digits = (negative ? -u : u).toString().padStart(9, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -8)}.${digits.slice(-8)}`;
};

/**
 * Walks the points of a {@link packUnits} text, oldest first: `visit(units)` gets each as a number while every
 * point and difference stays under 2⁵² units, else `visitBig` (when given) gets it as a `bigint`; without
 * `visitBig`, the walk stops and answers false at the first such point. Throws `RangeError` on a malformed text.
 */
const walkUnits = (
  packed: string,
  visit: (units: number) => void,
  visitBig?: (units: bigint) => void,
): boolean => {
  const n = packed.length;
  const bad = (at: number) => new RangeError(`not packed equity units at character ${at}`);
  let value = 0;
  let big: bigint | undefined;
  let i = 0;
  while (i < n) {
    const first = i;
    const negative = packed.charCodeAt(i) === 45;
    if (negative) i++;
    const digitsAt = i;
    let delta = 0;
    for (let c = packed.charCodeAt(i); c >= 48 && c <= 57; c = packed.charCodeAt(++i))
      delta = delta * 10 + c - 48;
    // Up to 15 digits the number is exact (< 10¹⁵ < 2⁵²); a longer one is read as a bigint below.
    const digits = i - digitsAt;
    if (digits === 0) throw bad(i);
    if (negative) delta = -delta;
    let count = 1;
    if (packed.charCodeAt(i) === 42) {
      const countAt = ++i;
      count = 0;
      for (let c = packed.charCodeAt(i); c >= 48 && c <= 57; c = packed.charCodeAt(++i))
        count = count * 10 + c - 48;
      if (i === countAt || count < 2) throw bad(countAt);
    }
    if (i < n) {
      if (packed.charCodeAt(i) !== 44 || i === n - 1) throw bad(i);
      i++;
    }
    for (let k = 0; k < count; k++) {
      if (big === undefined && digits <= 15) {
        const next = value + delta;
        if (next < SAFE && next > -SAFE) {
          value = next;
          visit(value);
          continue;
        }
      }
      if (!visitBig) return false;
      big = (big ?? BigInt(value)) + BigInt(packed.slice(first, digitsAt + digits));
      if (big < BigInt(SAFE) && big > -BigInt(SAFE)) {
        value = Number(big);
        big = undefined;
        visit(value);
      } else visitBig(big);
    }
  }
  return true;
};

/** The points of a {@link packUnits} text as 8-place decimals (the text {@link normalize8} gives), oldest first. */
export const unpackUnits = (packed: string): string[] => {
  const out: string[] = [];
  const push = (u: number | bigint) => {
    out.push(decimalOfUnits(u));
  };
  walkUnits(packed, push, push);
  return out;
};

/**
 * The points of a {@link packUnits} text as integer units written into `into` from `at` (the number written), or
 * `undefined` when a point is 2⁵² units or more or a difference 10¹⁵ or more (the caller takes the exact decimal
 * way).
 */
export const unitsOfPacked = (packed: string, into: Float64Array, at: number): number | undefined => {
  let k = at;
  const ok = walkUnits(packed, (u) => {
    into[k++] = u;
  });
  return ok ? k - at : undefined;
};

/** The highest point of a {@link packUnits} text as an 8-place decimal, or null for none. */
export const maxOfPacked = (packed: string): string | null => {
  let best: number | undefined;
  let bestBig: bigint | undefined;
  walkUnits(
    packed,
    (u) => {
      if (best === undefined || u > best) best = u;
    },
    (u) => {
      if (bestBig === undefined || u > bestBig) bestBig = u;
    },
  );
  if (bestBig !== undefined && (best === undefined || bestBig > BigInt(best))) return decimalOfUnits(bestBig);
  return best === undefined ? null : decimalOfUnits(best);
};
