import { describe, expect, it } from 'vitest';
import { AppendBatcher, type BatcherOptions } from '../../src/eventstore/append-batcher';

interface Item {
  key: string;
  n: number;
  weight?: number;
  bad?: boolean;
}

/** A target whose batches complete only when the test releases them. */
const harness = (options: BatcherOptions, isolatable = true) => {
  const sent: Item[][] = [];
  const releases: (() => void)[] = [];
  let inFlight = 0;
  let maxSeen = 0;
  const batcher = new AppendBatcher<Item, string>(
    {
      send: async (items) => {
        sent.push(items);
        inFlight++;
        maxSeen = Math.max(maxSeen, inFlight);
        await new Promise<void>((resolve) => releases.push(resolve));
        inFlight--;
        if (items.some((i) => i.bad)) throw Object.assign(new Error('bad item'), { code: '22P05' });
        return items.map((i) => `${i.key}:${i.n}`);
      },
      weight: (i) => i.weight ?? 1,
      key: (i) => i.key,
      isolatable: () => isolatable,
    },
    options,
  );
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  /** Completes the oldest unreleased batch and lets the batcher react. */
  const release = async () => {
    releases.shift()?.();
    await tick();
    await tick();
  };
  return { batcher, sent, release, tick, maxInFlight: () => maxSeen };
};

const sizes = (sent: Item[][]) => sent.map((b) => b.map((i) => `${i.key}${i.n}`).join(','));

describe('AppendBatcher', () => {
  it('sends a lone request at once, in its own batch', async () => {
    const h = harness({ maxInFlight: 2 });
    const a = h.batcher.submit({ key: 'a', n: 1 });
    await h.tick();
    expect(sizes(h.sent)).toEqual(['a1']);
    await h.release();
    await expect(a).resolves.toBe('a:1');
    const b = h.batcher.submit({ key: 'b', n: 1 });
    await h.tick();
    await h.release();
    await expect(b).resolves.toBe('b:1');
    expect(sizes(h.sent)).toEqual(['a1', 'b1']);
  });

  it('batches what arrives while maxInFlight batches are running, and never exceeds maxInFlight', async () => {
    const h = harness({ maxInFlight: 2 });
    const results = [h.batcher.submit({ key: 'a', n: 1 })];
    await h.tick();
    results.push(h.batcher.submit({ key: 'b', n: 1 }));
    await h.tick();
    for (const k of ['c', 'd', 'e', 'f']) results.push(h.batcher.submit({ key: k, n: 1 }));
    await h.tick();
    expect(sizes(h.sent)).toEqual(['a1', 'b1']);
    await h.release();
    expect(sizes(h.sent)).toEqual(['a1', 'b1', 'c1,d1,e1,f1']);
    await h.release();
    await h.release();
    expect(await Promise.all(results)).toEqual(['a:1', 'b:1', 'c:1', 'd:1', 'e:1', 'f:1']);
    expect(h.maxInFlight()).toBe(2);
    expect(h.batcher.stats).toMatchObject({ batches: 3, items: 6, largest: 4, isolated: 0 });
  });

  it('bounds a batch by maxItems and maxWeight; an item heavier than maxWeight goes alone', async () => {
    const h = harness({ maxInFlight: 1, maxItems: 3, maxWeight: 10 });
    const all = [h.batcher.submit({ key: 'x', n: 0 })];
    await h.tick();
    for (let n = 1; n <= 4; n++) all.push(h.batcher.submit({ key: `k${n}`, n }));
    all.push(h.batcher.submit({ key: 'heavy', n: 5, weight: 50 }));
    all.push(h.batcher.submit({ key: 'w', n: 6, weight: 6 }));
    all.push(h.batcher.submit({ key: 'v', n: 7, weight: 6 }));
    for (let i = 0; i < 6; i++) await h.release();
    await Promise.all(all);
    expect(sizes(h.sent)).toEqual(['x0', 'k11,k22,k33', 'k44', 'heavy5', 'w6', 'v7']);
  });

  it('keeps the submission order of one key across batches: a key in flight holds back its successors', async () => {
    const h = harness({ maxInFlight: 2 });
    const first = h.batcher.submit({ key: 's', n: 1 });
    await h.tick();
    const second = h.batcher.submit({ key: 's', n: 2 });
    const other = h.batcher.submit({ key: 't', n: 1 });
    const third = h.batcher.submit({ key: 's', n: 3 });
    await h.tick();
    // A slot is free, but s is in flight: only t goes out now.
    expect(sizes(h.sent)).toEqual(['s1', 't1']);
    await h.release();
    expect(sizes(h.sent)).toEqual(['s1', 't1', 's2,s3']);
    await h.release();
    await h.release();
    expect(await Promise.all([first, second, other, third])).toEqual(['s:1', 's:2', 't:1', 's:3']);
  });

  it('resends a failed batch item by item when the failure is isolatable: only the culprit fails', async () => {
    const h = harness({ maxInFlight: 1 });
    const lead = h.batcher.submit({ key: 'lead', n: 0 });
    await h.tick();
    const settled = Promise.allSettled([
      h.batcher.submit({ key: 'a', n: 1 }),
      h.batcher.submit({ key: 'b', n: 1, bad: true }),
      h.batcher.submit({ key: 'c', n: 1 }),
    ]);
    for (let i = 0; i < 5; i++) await h.release();
    await lead;
    const results = await settled;
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(sizes(h.sent)).toEqual(['lead0', 'a1,b1,c1', 'a1', 'b1', 'c1']);
    expect(h.batcher.stats.isolated).toBe(1);
  });

  it('fails the whole batch when the failure is not isolatable (outcome unknown)', async () => {
    const h = harness({ maxInFlight: 1 }, false);
    const lead = h.batcher.submit({ key: 'lead', n: 0 });
    await h.tick();
    const settled = Promise.allSettled([
      h.batcher.submit({ key: 'a', n: 1 }),
      h.batcher.submit({ key: 'b', n: 1, bad: true }),
    ]);
    await h.release();
    await h.release();
    await lead;
    expect((await settled).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(h.sent).toHaveLength(2);
  });

  it('rejects options that are not positive integers', () => {
    const target = { send: async () => [], weight: () => 1, key: () => '', isolatable: () => false };
    expect(() => new AppendBatcher(target, { maxInFlight: 0 })).toThrow(RangeError);
    expect(() => new AppendBatcher(target, { maxItems: 1.5 })).toThrow(RangeError);
  });
});
