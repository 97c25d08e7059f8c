import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonArrayBytes, jsonArrayText } from '../../src/eventstore/postgres';

describe('jsonArrayText (the append batch’s JSON-array parameter)', () => {
  it('is `[` + the texts joined by `,` + `]`, character for character', () => {
    expect(jsonArrayText([])).toBe('[]');
    expect(jsonArrayText(['{"a":1}'])).toBe('[{"a":1}]');
    expect(jsonArrayText(['1', 'null', '"x,y"'])).toBe('[1,null,"x,y"]');
    fc.assert(
      fc.property(fc.array(fc.jsonValue().map((v) => JSON.stringify(v))), (texts) => {
        const text = jsonArrayText(texts);
        expect(text).toBe(`[${texts.join(',')}]`);
        expect(JSON.parse(text)).toEqual(texts.map((t) => JSON.parse(t)));
      }),
    );
  });

  it('keeps a ~1 MB text (a BacktestStepped’s equity_units) whole, beside small ones', () => {
    const big = JSON.stringify({ equity_units: '12345,-67*3,'.repeat(90_000) });
    const meta = '{"occurred_at":"2026-11-30T01:00:00.000Z"}';
    expect(jsonArrayText([meta, big, meta])).toBe(`[${meta},${big},${meta}]`);
  });
});

describe('jsonArrayBytes (the parameter with texts encoded elsewhere, NewEvent.dataText)', () => {
  it('is jsonArrayText’s text in UTF-8, whichever texts come as bytes', () => {
    const utf8 = (t: string) => new TextEncoder().encode(t);
    expect(jsonArrayBytes([utf8('{"a":"é"}')]).toString('utf8')).toBe('[{"a":"é"}]');
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.jsonValue().map((v) => JSON.stringify(v)),
            fc.boolean(),
          ),
        ),
        (given) => {
          const texts = given.map(([t]) => t);
          const bytes = jsonArrayBytes(given.map(([t, encoded]) => (encoded ? utf8(t) : t)));
          expect(bytes.equals(Buffer.from(jsonArrayText(texts), 'utf8'))).toBe(true);
        },
      ),
    );
  });
});
