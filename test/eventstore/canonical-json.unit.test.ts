import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/eventstore/hash-chain';

/**
 * `canonicalJson` feeds the hash chain, so its text must never change: the oracle is its first form,
 * `JSON.stringify` of a copy with every object's keys sorted (kept here), against which the direct writer is
 * checked over random JSON values, with the non-JSON values event data can hold (undefined members, Dates).
 */
const oracle = (value: unknown): string => JSON.stringify(sortKeys(value));
const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
};

const leaf = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.date({ noInvalidDate: false }),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('node'), { maxLength: 5 }),
    fc.dictionary(
      fc.oneof(
        fc.string({ unit: 'binary', maxLength: 6 }),
        fc.constantFrom('0', '7', '10', '01', '4294967295'),
      ),
      tie('node'),
      { maxKeys: 6 },
    ),
  ),
})).node;

describe('canonicalJson', () => {
  it('writes exactly the text of JSON.stringify over key-sorted copies (the hash chain depends on it)', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(oracle(v));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(canonicalJson(v)).toBe(oracle(v));
        // And it survives a round trip through JSON (as through PostgreSQL jsonb).
        expect(canonicalJson(JSON.parse(canonicalJson(v)))).toBe(canonicalJson(v));
      }),
      { numRuns: 1000 },
    );
  });

  it('sorts keys at every depth, drops undefined members, writes Dates as ISO strings', () => {
    const at = new Date('2026-11-28T12:00:00.000Z');
    expect(canonicalJson({ b: 1, a: { d: [3, undefined, { z: 1, y: at }], c: undefined } })).toBe(
      '{"a":{"d":[3,null,{"y":"2026-11-28T12:00:00.000Z","z":1}]},"b":1}',
    );
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
    // Quirks of the first form, kept: array-index keys first in numeric order, an own `__proto__` member left out.
    const parsed = JSON.parse('{"b":1,"10":2,"2":3,"__proto__":{"x":1}}');
    expect(canonicalJson(parsed)).toBe(oracle(parsed));
    expect(canonicalJson(parsed)).toBe('{"2":3,"10":2,"b":1}');
  });
});
