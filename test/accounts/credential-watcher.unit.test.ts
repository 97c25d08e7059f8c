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
