import { accountDecider } from '../domain/account/decide';
import { accountStreamId } from '../domain/account/events';
import { type ApiKeyHolder, apiKeyIndexDecider, apiKeyStreamId } from '../domain/account/key-index';
import type { AccountStatus } from '../domain/account/state';
import { agentDecider } from '../domain/agent/decide';
import { agentStreamId } from '../domain/agent/events';
import type { AgentStatus } from '../domain/agent/state';
import type { EventStore } from '../ports/event-store';
import { createCommandHandler } from './handler';
import { handleLive } from './live';
import type { CommandMeta } from './metadata';

/** A key in force according to the write side: its holder, and the account's (and agent's) standing. */
export interface KeyOnWriteSide {
  holder: ApiKeyHolder;
  /** The holder's account, from its own stream. */
  account: { status: AccountStatus; credentialsVersion: number };
  /** The agent of an agent key, from its own stream (absent for an account key). */
  agent?: { accountId: string; status: AgentStatus };
}

/**
 * The write side's API key index (`apikey-{sha256(key)}` streams, `domain/account/key-index.ts`): one for account
 * keys and agent keys alike, used by registration, the agent commands and authentication.
 */
export interface KeyIndex {
  /**
   * Records that the key whose SHA-256 is `keyHash` is issued to `holder`; to be called before the holder's own
   * stream records the key, so the key is found here from the moment the command answers. `CONFLICT` if another
   * holder has it (two random keys colliding).
   */
  issue(keyHash: string, holder: ApiKeyHolder, meta: CommandMeta): Promise<void>;
  /**
   * The key's holder when the key is in force on the write side: the index names the holder, and the holder's
   * own stream (the account's for an account key, the agent's for an agent key) still exists and records this key
   * as its current one (`api_key_hash`). Undefined otherwise: a key never issued, issued before the index existed
   * (the `api_keys` read model knows those), replaced by a regenerated one, or of a deleted agent, or an entry
   * naming an owner that was never recorded (a command that failed after writing it). Says nothing of statuses:
   * the caller checks `account.status` and `agent.status`.
   */
  inForce(keyHash: string): Promise<KeyOnWriteSide | undefined>;
  /**
   * The key as {@link inForce} gives it, for a holder already known (the `api_keys` read model's row): the
   * holder's own stream (the account's, or the agent's) still exists and records this key as its current one;
   * undefined otherwise (replaced by a regenerated key, or of a deleted agent). The index itself is not read, so a
   * key issued before it existed is answered too. One or two stream reads (the account's state is cached).
   */
  heldBy(keyHash: string, holder: ApiKeyHolder): Promise<KeyOnWriteSide | undefined>;
  /** An agent's account and status from its own stream, read afresh; undefined when it has none (never, or deleted). */
  agent(agentId: string): Promise<{ accountId: string; status: AgentStatus } | undefined>;
}

/** Builds the key index over the event store. */
export const createKeyIndex = (store: EventStore): KeyIndex => {
  // An index entry never changes once written, and accounts are never deleted: their cached states are only read
  // further. Agents are deleted (their stream with it): their state is read afresh every time (no cache), so an
  // agent another process deleted is seen gone, not taken from a cached state its stream no longer has.
  const index = createCommandHandler(store, apiKeyIndexDecider);
  const accounts = createCommandHandler(store, accountDecider);
  const agents = createCommandHandler(store, agentDecider, { cacheSize: 0 });
  const agentState = async (agentId: string) => (await agents.load(agentStreamId(agentId))).state;
  const heldBy = async (keyHash: string, holder: ApiKeyHolder): Promise<KeyOnWriteSide | undefined> => {
    const [{ state: account }, agent] = await Promise.all([
      accounts.load(accountStreamId(holder.accountId)),
      holder.agentId ? agentState(holder.agentId) : undefined,
    ]);
    if (account.status === 'none') return undefined;
    const standing = { status: account.status, credentialsVersion: account.credentialsVersion };
    if (!agent) return account.apiKeyHash === keyHash ? { holder, account: standing } : undefined;
    if (agent.status === 'none' || agent.accountId !== holder.accountId || agent.apiKeyHash !== keyHash) {
      return undefined;
    }
    return { holder, account: standing, agent: { accountId: agent.accountId, status: agent.status } };
  };
  return {
    async issue(keyHash, holder, meta) {
      await handleLive(
        index,
        apiKeyStreamId(keyHash),
        { type: 'IssueApiKey', data: { keyHash, ...holder } },
        meta,
      );
    },

    async inForce(keyHash) {
      const { holder } = (await index.load(apiKeyStreamId(keyHash))).state;
      return holder ? heldBy(keyHash, holder) : undefined;
    },

    heldBy,

    async agent(agentId) {
      const agent = await agentState(agentId);
      return agent.status === 'none' ? undefined : { accountId: agent.accountId, status: agent.status };
    },
  };
};
