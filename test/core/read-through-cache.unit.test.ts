import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../ports/event-store';
import { ReadThroughCache } from '../../projections/read-through-cache';

const event = (streamId: string) => ({ streamId, type: 'X' }) as RecordedEvent;
const affectsAccounts = (e: RecordedEvent) => e.streamId.startsWith('account-');

describe('read-through cache', () => {
  it('answers from memory until a page touches what it caches', async () => {
    const cache = new ReadThroughCache<number>(10, affectsAccounts);
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.get('a', load)).toBe(1);
    expect(await cache.get('a', load)).toBe(1);
    cache.observe([event('wallet-1')]);
    expect(await cache.get('a', load)).toBe(1);
    cache.observe([event('wallet-1'), event('account-1')]);
    expect(await cache.get('a', load)).toBe(2);
  });

  it('never remembers a value whose load was running when a change committed', async () => {
    const cache = new ReadThroughCache<string>(10, affectsAccounts);
    let release: (v: string) => void = () => {};
    const slow = cache.get('a', () => new Promise<string>((r) => (release = r)));
    cache.observe([event('account-1')]); // committed while the old value was being read
    release('old');
    expect(await slow).toBe('old');
    expect(await cache.get('a', async () => 'new')).toBe('new');
  });

  it('keeps at most its capacity, dropping the least recently used, and does not cache undefined', async () => {
    const cache = new ReadThroughCache<string>(2, affectsAccounts);
    await cache.get('a', async () => 'a1');
    await cache.get('b', async () => 'b1');
    await cache.get('a', async () => 'a2'); // a is now the most recent
    await cache.get('c', async () => 'c1'); // evicts b
    expect(await cache.get('a', async () => 'a3')).toBe('a1');
    expect(await cache.get('b', async () => 'b2')).toBe('b2');
    let calls = 0;
    const missing = async () => {
      calls++;
      return undefined;
    };
    await cache.get('missing', missing);
    await cache.get('missing', missing);
    expect(calls).toBe(2);
  });
});
