import { type Kysely, sql } from 'kysely';
import type { AccountStatus } from '../domain/account/state';
import type { AgentStatus } from '../domain/agent/state';
import type { ReadModels } from '../projections/read-models';

/** The owner of a valid API key. */
export interface ApiKeyOwner {
  ownerType: 'account' | 'agent';
  accountId: string;
  /** Set for an agent key. */
  agentId: string | null;
}

/**
 * Looks up the owner of a key by the key's SHA-256 (hex) in the `api_keys` read model (ARCHITECTURE §12).
 * `undefined` for an unknown, replaced or deleted key.
 */
export const findApiKeyOwner = async (
  db: Kysely<ReadModels>,
  keyHash: string,
): Promise<ApiKeyOwner | undefined> => {
  const row = await db
    .selectFrom('api_keys')
    .select(['owner_type', 'account_id', 'agent_id'])
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
  return row ? { ownerType: row.owner_type, accountId: row.account_id, agentId: row.agent_id } : undefined;
};

/** What authenticating an API key needs: its owner, its account's and (agent key) its agent's state. */
export interface ApiKeyAuth {
  owner: ApiKeyOwner;
  /** Null when the account's row is missing. */
  account: { status: AccountStatus; credentialsVersion: number } | null;
  /** Null for an account key, or when the agent's row is missing. */
  agent: { accountId: string; status: AgentStatus } | null;
}

/**
 * What authenticating an API key needs, in one statement (ARCHITECTURE §12): the key's owner, its account's status
 * and credentials version, and for an agent key the agent's account and status (`undefined` when the key is unknown;
 * `account`/`agent` null when their row is missing). The same rows {@link findApiKeyOwner},
 * `getAccountAuthState` and `getAgentOwnership` read one by one.
 */
export const findApiKeyAuth = async (
  db: Kysely<ReadModels>,
  keyHash: string,
): Promise<ApiKeyAuth | undefined> => (await findApiKeysAuth(db, [keyHash])).get(keyHash);

/**
 * {@link findApiKeyAuth} for many keys in one statement (the auth cache's refresh of the keys in use): a map from
 * each known key hash to what authenticating it needs; unknown hashes are absent.
 */
export const findApiKeysAuth = async (
  db: Kysely<ReadModels>,
  keyHashes: readonly string[],
): Promise<Map<string, ApiKeyAuth>> => {
  const found = new Map<string, ApiKeyAuth>();
  if (keyHashes.length === 0) return found;
  const rows = await db
    .selectFrom('api_keys as k')
    .leftJoin('accounts as a', 'a.account_id', 'k.account_id')
    .leftJoin('agents as g', 'g.agent_id', 'k.agent_id')
    .select([
      'k.key_hash',
      'k.owner_type',
      'k.account_id',
      'k.agent_id',
      'a.status as account_status',
      'a.credentials_version',
      'g.account_id as agent_account_id',
      'g.status as agent_status',
    ])
    .where(sql<boolean>`k.key_hash = any(${[...keyHashes]}::text[])`)
    .execute();
  for (const row of rows) {
    found.set(row.key_hash, {
      owner: { ownerType: row.owner_type, accountId: row.account_id, agentId: row.agent_id },
      account:
        row.account_status == null || row.credentials_version == null
          ? null
          : { status: row.account_status, credentialsVersion: row.credentials_version },
      agent:
        row.agent_status == null || row.agent_account_id == null
          ? null
          : { accountId: row.agent_account_id, status: row.agent_status },
    });
  }
  return found;
};
