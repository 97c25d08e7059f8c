import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalCopy, canonicalJson } from '../../src/eventstore/hash-chain';

/** Values an event's data may hold, plus what JSON cannot hold as it is (dates, -0, NaN, undefined, instances). */
const awkward = fc.oneof(
  fc.constant(-0),
  fc.constant(Number.NaN),
  fc.constant(Number.POSITIVE_INFINITY),
  fc.constant(undefined),
  fc.date({ noInvalidDate: true }),
  fc.constant(
    new (class Money {
      amount = '1.00000000';
    })(),
  ),
  fc.constant({ toJSON: () => 'x' }),
);
const value = fc.letrec((tie) => ({
  any: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 2 }),
    awkward,
    fc.array(tie('any'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('any'), { maxKeys: 5 }),
  ),
})).any;

/** The canonical text as first written: every object's keys by `Array.prototype.sort()`, then `JSON.stringify`. */
const reference = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(reference);
  if (v === null || typeof v !== 'object' || v instanceof Date || 'toJSON' in v) return v;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v).sort()) {
    if (key === '__proto__') continue;
    out[key] = reference((v as Record<string, unknown>)[key]);
  }
  return out;
};

describe('canonicalCopy (src/eventstore/hash-chain.ts): the canonical text and, when exact, its parse', () => {
  it('orders keys as Array.prototype.sort() does, for few keys (sorted by insertion) and many', () => {
    const keyText = fc.string({ unit: 'binary', maxLength: 6 });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.dictionary(keyText, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 40 }),
          fc.dictionary(keyText, fc.dictionary(keyText, fc.integer(), { maxKeys: 40 }), { maxKeys: 5 }),
        ),
        (v) => {
          expect(canonicalJson(v)).toBe(JSON.stringify(reference(v)));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('makes the text canonicalJson makes, and a copy equal to parsing that text, same key order, or none', () => {
    fc.assert(
      fc.property(value, (v) => {
        let expected: string;
        try {
          expected = canonicalJson(v);
        } catch {
          return; // what JSON cannot write at all (a BigInt) throws in both
        }
        const { text, copy } = canonicalCopy(v);
        expect(text).toBe(expected);
        if (copy !== undefined && text !== undefined) {
          const parsed = JSON.parse(text);
          expect(copy).toStrictEqual(parsed);
          expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed));
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('gives a copy for plain event data and none for what only a parse reads back', () => {
    const data = { b: [1, 'x', null, { d: true, c: 2.5 }], a: 'é "q"', skipped: undefined };
    expect(canonicalCopy(data).copy).toStrictEqual({ a: 'é "q"', b: [1, 'x', null, { c: 2.5, d: true }] });
    expect(canonicalCopy({ at: new Date(0) }).copy).toBeUndefined();
    expect(canonicalCopy({ n: -0 }).copy).toBeUndefined();
    expect(canonicalCopy([undefined]).copy).toBeUndefined();
    expect(canonicalCopy({ f: () => 1 }).copy).toBeUndefined();
    expect(canonicalCopy(null)).toEqual({ text: 'null', copy: null });
    expect(canonicalCopy(JSON.parse('{"__proto__":{"a":1}}')).copy).toBeUndefined();
  });

  it('shares nothing with its input: changing the input afterwards leaves the copy as the text says', () => {
    const data = { list: [{ x: 1 }], nested: { y: 'z' } };
    const { text, copy } = canonicalCopy(data);
    data.list[0]!.x = 2;
    data.nested.y = 'changed';
    expect(copy).toStrictEqual(JSON.parse(text));
  });
});
