import type { BaseContext, Decider, DomainEvent } from '../shared/decider';
import { DomainError } from '../shared/errors';

/**
 * The write side's index of account keys: one stream per key, `apikey-{sha256(api key)}` (the key itself is
 * not in the stream name), naming the account the key was issued to. Registration records it before the account,
 * so from the moment `POST /auth/register` answers, `POST /auth/login` finds the account from the event store
 * itself, however far the `api_keys` read model lags (read your writes for a new user's first two calls; the read
 * model stays the fast path). An account key is never re-issued, so the stream holds one event.
 */
export type AccountKeyEvent = DomainEvent<
  'AccountKeyIssued',
  { key_hash: string; account_id: string; issued_at: string }
>;

/** The one command of the key's stream. */
export interface IssueAccountKey {
  type: 'IssueAccountKey';
  data: { keyHash: string; accountId: string };
}

/** Which account holds the key, if any. */
export interface AccountKeyState {
  holder: string | null;
}

/**
 * Issue: free → `AccountKeyIssued`; already the account's → nothing; another account's → `CONFLICT` (two
 * 256-bit random keys colliding: the registration fails rather than share a key).
 */
export const accountKeyDecider: Decider<AccountKeyState, IssueAccountKey, AccountKeyEvent, BaseContext> = {
  initialState: () => ({ holder: null }),
  evolve: (_state, event) => ({ holder: event.data.account_id }),
  decide: (command, state, context) => {
    const { keyHash, accountId } = command.data;
    if (state.holder === accountId) return [];
    if (state.holder !== null) throw new DomainError('CONFLICT', 'this API key is already issued');
    return [
      {
        type: 'AccountKeyIssued',
        data: { key_hash: keyHash, account_id: accountId, issued_at: context.now.toISOString() },
      },
    ];
  },
};

/** Stream of an account key, given the SHA-256 (hex) of the key. */
export const accountKeyStreamId = (keyHash: string): string => `apikey-${keyHash}`;
