import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { answerMarkedStatements } from '../../src/db/marked-statements';
import { PREPARED } from '../../src/db/prepared';

/** A stand-in for a `pg` client that records what `query` was given. */
const fakeClient = () => {
  const calls: unknown[][] = [];
  const client = {
    query: (...args: unknown[]) => {
      calls.push(args);
      return Promise.resolve({ rows: [] });
    },
  };
  answerMarkedStatements(client as unknown as pg.ClientBase);
  return { client, calls };
};

describe('answerMarkedStatements: PREPARED texts', () => {
  it('sends a marked text as a named statement, one name per text on every connection, and the rest as it came', async () => {
    const a = fakeClient();
    const b = fakeClient();
    const first = `${PREPARED} select $1::int`;
    const second = `${PREPARED} select $1::text`;
    await a.client.query(first, [1]);
    await a.client.query(second, ['x']);
    await b.client.query(first, [2]);
    await a.client.query('select 1', []);
    await a.client.query(`select 2 ${PREPARED}`);
    const [c1, c2, c4, c5] = a.calls;
    const n1 = (c1![0] as { name: string }).name;
    const n2 = (c2![0] as { name: string }).name;
    expect(c1).toEqual([{ name: n1, text: first, values: [1] }]);
    expect(c2).toEqual([{ name: n2, text: second, values: ['x'] }]);
    expect(n1).not.toBe(n2);
    expect(b.calls[0]).toEqual([{ name: n1, text: first, values: [2] }]);
    expect(c4).toEqual(['select 1', []]);
    expect(c5).toEqual([`select 2 ${PREPARED}`]);
  });
});
