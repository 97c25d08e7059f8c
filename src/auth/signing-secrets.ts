import { LRUCache } from 'lru-cache';
import type { AccountCommands } from '../../commands/accounts';
import type { AgentCommands } from '../../commands/agents';
import type { Principal } from './principal';

/**
 * The HMAC signing secrets of API keys (docs/operations.md "Signing secrets"; issue 19): an account key's is the
 * account's registration `api_secret`, an agent key's the secret issued with it or by
 * `POST /agents/{id}/signing-secret`. Both are stored as AES-256-GCM ciphertext under `ENCRYPTION_KEY` in the
 * owner's stream; this decrypts them on demand. Plaintexts stay in memory only (never logged).
 */
export interface SigningSecrets {
  /**
   * The signing secret of the key `principal` authenticated with (`via` `account_key` or `agent_key`), or null
   * when the key has none yet (an account registered before signing secrets existed that has not logged in since;
   * an agent key made before, until a secret is issued). A JWT has none.
   */
  of(principal: Principal): Promise<string | null>;
  /** Drops a cached secret of an account or agent (its key or secret changed). */
  forget(ownerId: string): void;
}

/**
 * Signing secrets over the account and agent commands, with a short cache of decrypted secrets (10 s by default: a
 * miss reads the owner's stream, which cost a signed order about 10 % more CPU at a 2 s lifetime, bench/binance.ts):
 * a secret replaced in this process is dropped at once through {@link forget}; other processes use the new one
 * within the cache's lifetime.
 */
export const createSigningSecrets = (
  deps: { accounts: AccountCommands; agents: AgentCommands },
  cacheTtlMs = 10_000,
): SigningSecrets => {
  const cache =
    cacheTtlMs > 0
      ? new LRUCache<string, { secret: string | null }>({ max: 50_000, ttl: cacheTtlMs })
      : undefined;
  return {
    async of(principal) {
      if (principal.via === 'jwt') return null;
      const ownerId = principal.via === 'agent_key' ? principal.agentId! : principal.accountId;
      const hit = cache?.get(ownerId);
      if (hit) return hit.secret;
      const secret =
        principal.via === 'agent_key'
          ? await deps.agents.signingSecret(ownerId)
          : await deps.accounts.signingSecret(ownerId);
      cache?.set(ownerId, { secret });
      return secret;
    },
    forget(ownerId) {
      cache?.delete(ownerId);
    },
  };
};
