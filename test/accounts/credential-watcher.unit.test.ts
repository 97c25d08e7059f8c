import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCredentialWatcher } from '../../src/auth/credential-watch';
import type { Principal } from '../../src/auth/principal';
import type { WatchedCredential } from '../../src/auth/service';

/**
 * The `CredentialWatcher`'s own life (src/auth/credential-watch.ts), over a stand-in auth service: its rounds run
 * on its timer only until it is closed (the app's `onClose`), so none reads a database closed after the app.
 */
const principal: Principal = { accountId: '00000000-0000-4000-8000-000000000001', via: 'account_key' };
const credential: WatchedCredential = { apiKey: `ak_live_${'a'.repeat(40)}`, principal };

/** A stand-in auth service counting prefetches; `prefetch` replaced per test. */
const fakeAuth = (prefetch: (c: readonly WatchedCredential[]) => Promise<void> = async () => undefined) => {
  const calls = { prefetch: 0 };
  return {
    calls,
    auth: {
      onChange: () => () => undefined,
      prefetch: (c: readonly WatchedCredential[]) => {
        calls.prefetch++;
        return prefetch(c);
      },
    },
  };
};

afterEach(() => {
  vi.useRealTimers();
});

describe('CredentialWatcher.close', () => {
  it('stops the timer and drops every watch: no round runs afterwards, by the timer or by hand', async () => {
    vi.useFakeTimers();
    const { auth, calls } = fakeAuth();
    const watcher = createCredentialWatcher(auth, 1_000);
    const resolve = vi.fn(async () => principal);
    const revoked = vi.fn();
    watcher.watch(credential, resolve, revoked);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.prefetch).toBe(1);
    expect(resolve).toHaveBeenCalledTimes(1);

    watcher.close();
    expect(watcher.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    await watcher.checkAll();
    // A socket opened while the app closes is not watched (nor does it start the timer again).
    watcher.watch(credential, resolve, revoked);
    await vi.advanceTimersByTimeAsync(10_000);
    expect([calls.prefetch, resolve.mock.calls.length, watcher.size, vi.getTimerCount()]).toEqual([
      1, 1, 0, 0,
    ]);
    expect(revoked).not.toHaveBeenCalled();
  });
});

describe('a round whose prefetch fails or hangs', () => {
  const run = async (prefetch: () => Promise<void>) => {
    const { auth, calls } = fakeAuth(prefetch);
    const warn = vi.fn();
    const watcher = createCredentialWatcher(auth, 1_000, { logger: { warn } as never });
    const resolve = vi.fn(async () => principal);
    watcher.watch(credential, resolve, vi.fn());
    return { watcher, warn, resolve, calls };
  };

  it('after a failure that is not an outage: logged once, each socket checked on its own', async () => {
    const { watcher, warn, resolve } = await run(() => Promise.reject(new TypeError('bad array parameter')));
    await watcher.checkAll();
    await watcher.checkAll();
    expect(resolve).toHaveBeenCalledTimes(2);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatchObject({ err: expect.any(TypeError) });
    watcher.close();
  });

  it('while the database is away: logged once, nothing checked', async () => {
    const { watcher, warn, resolve } = await run(() =>
      Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
    );
    await watcher.checkAll();
    await watcher.checkAll();
    expect([resolve.mock.calls.length, warn.mock.calls.length]).toEqual([0, 1]);
    watcher.close();
  });

  it('a prefetch that never answers holds the next round one interval at most', async () => {
    vi.useFakeTimers();
    const { watcher, calls, resolve } = await run(() => new Promise<void>(() => undefined));
    const first = watcher.checkAll();
    expect(watcher.checkAll()).toBe(first);
    let ended = false;
    void first.then(() => {
      ended = true;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(ended).toBe(true);
    // The stuck round no longer holds the next: a new prefetch, whose checks are the only ones to run.
    const before = calls.prefetch;
    void watcher.checkAll();
    expect([calls.prefetch - before, resolve.mock.calls.length]).toEqual([1, 0]);
    watcher.close();
  });
});
