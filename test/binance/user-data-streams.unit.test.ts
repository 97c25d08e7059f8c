import { describe, expect, it } from 'vitest';
import { DomainError } from '../../domain/shared/errors';
import type { Call } from '../../src/application/call';
import {
  closeUserDataStream,
  keepAliveUserDataStream,
  LISTEN_KEY_TTL_MS,
  onUserDataStreamEnd,
  openUserDataStream,
  userDataStreamOf,
} from '../../src/application/user-data-streams';
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
});
