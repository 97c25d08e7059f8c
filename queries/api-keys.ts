import type { Kysely } from 'kysely';
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
