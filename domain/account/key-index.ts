import type { BaseContext, Decider, DomainEvent } from '../shared/decider';
import { DomainError } from '../shared/errors';

/**
 * The write side's index of API keys: one stream per key, `apikey-{sha256(api key)}` (the key itself is not in the
 * stream name), naming the account the key was issued to and, for an agent's key, the agent. The command that
 * issues a key records it before the owner's stream (registration for an account key; an agent's creation, clone or
 * key regeneration for an agent key), so from the moment that command answers the key is found from the event store
 * itself, however far the `api_keys` read model lags (read your writes for credentials; the read model stays the
 * fast path). A key is issued once, so the stream holds one event. The index only says who a key was issued to:
 * whether it is still in force (a regenerated agent key, a deleted agent) is the owner's stream's word, whose
 * `api_key_hash` must be this key's (`commands/key-index.ts`).
 */
export type ApiKeyIndexEvent =
  | DomainEvent<'AccountKeyIssued', { key_hash: string; account_id: string; issued_at: string }>
  | DomainEvent<
      'AgentKeyIssued',
      { key_hash: string; account_id: string; agent_id: string; issued_at: string }
    >;

/** Who a key was issued to: an account's own key (`agentId` null) or an agent's key. */
export interface ApiKeyHolder {
  accountId: string;
  agentId: string | null;
}

/** The one command of the key's stream. */
export interface IssueApiKey {
  type: 'IssueApiKey';
  data: ApiKeyHolder & { keyHash: string };
}

/** Who holds the key, if anyone. */
export interface ApiKeyIndexState {
  holder: ApiKeyHolder | null;
}

/**
 * Issue: free → `AccountKeyIssued` (an account's key) or `AgentKeyIssued` (an agent's key); already the same
 * holder's → nothing; another holder's → `CONFLICT` (two 256-bit random keys colliding: the command fails rather
 * than share a key).
 */
export const apiKeyIndexDecider: Decider<ApiKeyIndexState, IssueApiKey, ApiKeyIndexEvent, BaseContext> = {
  initialState: () => ({ holder: null }),
  evolve: (_state, event) => ({
    holder: {
      accountId: event.data.account_id,
      agentId: event.type === 'AgentKeyIssued' ? event.data.agent_id : null,
    },
  }),
  decide: (command, state, context) => {
    const { keyHash, accountId, agentId } = command.data;
    if (state.holder?.accountId === accountId && state.holder.agentId === agentId) return [];
    if (state.holder !== null) throw new DomainError('CONFLICT', 'this API key is already issued');
    const issued_at = context.now.toISOString();
    return [
      agentId === null
        ? { type: 'AccountKeyIssued', data: { key_hash: keyHash, account_id: accountId, issued_at } }
        : {
            type: 'AgentKeyIssued',
            data: { key_hash: keyHash, account_id: accountId, agent_id: agentId, issued_at },
          },
    ];
  },
};

/** Stream of an API key (an account's or an agent's), given the SHA-256 (hex) of the key. */
export const apiKeyStreamId = (keyHash: string): string => `apikey-${keyHash}`;
