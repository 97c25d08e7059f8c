import type { ColumnType, Kysely } from 'kysely';
import type { AccountRegisteredData } from '../domain/account/events';
import type { AgentCreatedData, AgentKeyRegeneratedData } from '../domain/agent/events';
import type { RecordedEvent } from '../ports/event-store';
import { deletedIdOf } from './columns';
import { declareTables, type TableDefinitions } from './ddl';
import type { Projection } from './projection';

/**
 * Row of the `api_keys` read model: the lookup from a key's SHA-256 to its owner (ARCHITECTURE §6, §12). Only
 * valid keys have a row: a regenerated key's row is replaced, a deleted agent's row removed. The owner's status
 * (suspended account, archived agent) lives in `accounts` / `agents`.
 */
export interface ApiKeysTable {
  /** SHA-256 (hex) of the key. */
  key_hash: string;
  owner_type: 'account' | 'agent';
  account_id: string;
  /** Null for an account key. */
  agent_id: string | null;
  key_preview: string;
  created_at: ColumnType<Date, string, string>;
}

/** The DDL of its read-model tables. */
const API_KEYS_TABLES: TableDefinitions = {
  api_keys: {
    columns: {
      key_hash: 'text primary key',
      owner_type: 'text not null',
      account_id: 'uuid not null',
      agent_id: 'uuid',
      key_preview: 'text not null',
      created_at: 'timestamptz not null',
    },
    indexes: {
      api_keys_agent: ['agent_id'],
      api_keys_account: ['account_id'],
    },
  },
};

/** `api_keys`: key hash → owner. Deterministic: values from event data. */
export const apiKeysProjection: Projection = {
  name: 'api_keys',
  version: 1,
  ...declareTables(API_KEYS_TABLES),
  eventTypes: ['AccountRegistered', 'AgentCreated', 'AgentKeyRegenerated', 'StreamDeleted'],
  async apply(db: Kysely<{ api_keys: ApiKeysTable }>, events: readonly RecordedEvent[]) {
    for (const e of events) {
      switch (e.type) {
        case 'StreamDeleted': {
          const agentId = deletedIdOf(e, 'agent-');
          const accountId = deletedIdOf(e, 'account-');
          if (agentId !== undefined) {
            await db.deleteFrom('api_keys').where('agent_id', '=', agentId).execute();
          } else if (accountId !== undefined) {
            await db.deleteFrom('api_keys').where('account_id', '=', accountId).execute();
          }
          break;
        }
        case 'AccountRegistered': {
          if (!e.streamId.startsWith('account-')) break;
          const d = e.data as AccountRegisteredData;
          await insertKey(db, d, d.registered_at, d.account_id, null);
          break;
        }
        case 'AgentCreated': {
          if (!e.streamId.startsWith('agent-')) break;
          const d = e.data as AgentCreatedData;
          await insertKey(db, d, d.created_at, d.account_id, d.agent_id);
          break;
        }
        case 'AgentKeyRegenerated': {
          if (!e.streamId.startsWith('agent-')) break;
          const d = e.data as AgentKeyRegeneratedData;
          // One valid key per agent: drop every key of the agent (the previous one), keep its owner.
          const removed = await db
            .deleteFrom('api_keys')
            .where('agent_id', '=', d.agent_id)
            .returning(['account_id'])
            .execute();
          const accountId = removed[0]?.account_id;
          if (!accountId) break;
          await insertKey(db, d, d.regenerated_at, accountId, d.agent_id);
          break;
        }
      }
    }
  },
};

/**
 * Inserts the row of the key an event issued (`api_key_hash`, `api_key_preview`) at `at`: an account's key when
 * `agentId` is null, else the agent's.
 */
const insertKey = (
  db: Kysely<{ api_keys: ApiKeysTable }>,
  key: { api_key_hash: string; api_key_preview: string },
  at: string,
  accountId: string,
  agentId: string | null,
) =>
  db
    .insertInto('api_keys')
    .values({
      key_hash: key.api_key_hash,
      owner_type: agentId === null ? 'account' : 'agent',
      account_id: accountId,
      agent_id: agentId,
      key_preview: key.api_key_preview,
      created_at: at,
    })
    .execute();
