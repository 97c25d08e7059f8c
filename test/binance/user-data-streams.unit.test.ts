import { afterEach, describe, expect, it, vi } from 'vitest';
import { DomainError } from '../../domain/shared/errors';
import type { Call } from '../../src/application/call';
import {
  closeUserDataStream,
  keepAliveUserDataStream,
  LISTEN_KEY_SWEEP_MS,
  LISTEN_KEY_TTL_MS,
  onUserDataStreamEnd,
  openUserDataStream,
  userDataStreamOf,
} from '../../src/application/user-data-streams';
import { createCredentialWatcher } from '../../src/auth/credential-watch';
import type { Services } from '../../src/services';

/**
 * The listen-key rules of the user data stream use cases (Binance Spot "User Data Stream"): one key per wallet
 * owner, valid 60 minutes after it was opened or kept alive, usable only by its owner. The registry needs nothing of
 * the services but their identity (it is kept per application instance), so a bare object stands for them.
 */
const services = {} as Services;
const callOf = (accountId: string, agentId?: string): Call =>
  ({ services, caller: { accountId, ...(agentId ? { agentId } : {}), via: 'api_key' } }) as unknown as Call;

describe('user data streams (listen keys)', () => {
  it('gives an owner one key, kept alive by opening again or PUT, expired 60 minutes after the last', () => {
    const t0 = 1_000_000;
    const account = callOf('acc-1');
    const key = openUserDataStream(account, t0).listenKey;
    expect(key).toMatch(/^[0-9a-f]{60}$/);
    expect(openUserDataStream(account, t0 + 1_000).listenKey).toBe(key);
    // An agent of the account is another wallet owner: another key.
    expect(openUserDataStream(callOf('acc-1', 'agent-1'), t0).listenKey).not.toBe(key);

    keepAliveUserDataStream(account, key, t0 + 30 * 60_000);
    const due = t0 + 30 * 60_000 + LISTEN_KEY_TTL_MS;
    expect(userDataStreamOf(services, key, due - 1)?.ownerId).toBe('acc-1');
    let ended = 0;
    onUserDataStreamEnd(services, key, () => ended++);
    expect(userDataStreamOf(services, key, due)).toBeUndefined();
    expect(ended).toBe(1);
    expect(() => keepAliveUserDataStream(account, key, due)).toThrow(DomainError);
    expect(openUserDataStream(account, due).listenKey).not.toBe(key);
  });

  it('refuses another owner’s key and ends the key on close', () => {
    const owner = callOf('acc-2');
    const key = openUserDataStream(owner).listenKey;
    expect(() => keepAliveUserDataStream(callOf('acc-3'), key)).toThrow(/listenKey does not exist/);
    expect(() => closeUserDataStream(callOf('acc-3'), key)).toThrow(DomainError);
    let ended = 0;
    onUserDataStreamEnd(services, key, () => ended++);
    closeUserDataStream(owner, key);
    expect(ended).toBe(1);
    expect(userDataStreamOf(services, key)).toBeUndefined();
  });

  describe('abandoned keys', () => {
    afterEach(() => {
      vi.useRealTimers();
    });
    /** Services whose auth counts its change listeners (each key opened with a credential adds one watch). */
    const watched = () => {
      const listeners = new Set<unknown>();
      const resolved: string[] = [];
      const auth = {
        onChange: (l: unknown) => {
          listeners.add(l);
          return () => listeners.delete(l);
        },
        resolveCredential: async (credential: string) => {
          resolved.push(credential);
          return { accountId: 'acc-9', via: 'api_key' };
        },
        prefetch: async () => {},
      };
      // The process's shared watcher, over that auth (its heartbeat round never comes in these tests).
      const credentialWatcher = createCredentialWatcher(auth, 30_000);
      const svc = { auth, credentialWatcher } as unknown as Services;
      const call = { services: svc, caller: { accountId: 'acc-9', via: 'api_key' } } as unknown as Call;
      return { svc, call, listeners, resolved };
    };

    it('an expired key nobody looks up is ended by the sweep: its watch (auth listener) and entry go', () => {
      vi.useFakeTimers();
      const { svc, call, listeners } = watched();
      const key = openUserDataStream(call, Date.now(), 'ak_live_one').listenKey;
      let ended = 0;
      onUserDataStreamEnd(svc, key, () => ended++);
      expect(listeners.size).toBe(1);
      vi.advanceTimersByTime(LISTEN_KEY_TTL_MS + LISTEN_KEY_SWEEP_MS);
      expect(listeners.size).toBe(0);
      expect(ended).toBe(1);
      // The sweep stopped with the last key: no timer left behind.
      expect(vi.getTimerCount()).toBe(0);
    });

    it("a key returned to a new credential of its owner is watched with that credential, not the old one's", async () => {
      const { call, listeners, resolved } = watched();
      const key = openUserDataStream(call, Date.now(), 'ak_live_old').listenKey;
      expect(openUserDataStream(call, Date.now(), 'ak_live_new').listenKey).toBe(key);
      expect(listeners.size).toBe(1);
      for (const l of listeners) (l as (c: object) => void)({ accountId: 'acc-9' });
      await new Promise((r) => setTimeout(r, 0));
      expect(resolved.at(-1)).toBe('ak_live_new');
      closeUserDataStream(call, key);
      expect(listeners.size).toBe(0);
    });
  });
});
