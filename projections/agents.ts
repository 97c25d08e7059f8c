import type { ColumnType, Kysely } from 'kysely';
import { AGENT_EVENT_TYPES, type AgentEvent, type AgentProfileFields } from '../domain/agent/events';
import type { RecordedEvent } from '../ports/event-store';
import { type NullableTimestamp, RISK_COLUMNS, riskColumns, type Timestamp } from './columns';
import { declareTables, type TableDefinitions } from './ddl';
import { entityRows, foldEntityEvents } from './entity-rows';
import type { Projection } from './projection';

/** Row of the `agents` read model: one per agent that has not been deleted (spec "Agent" resource). */
export interface AgentsTable {
  agent_id: string;
  account_id: string;
  display_name: string;
  api_key_preview: string;
  /** numeric(38, 8), read as a string. */
  starting_balance: string;
  llm_model: string | null;
  framework: string | null;
  /** jsonb array of strings. */
  strategy_tags: ColumnType<string[], string, string>;
  max_position_size_pct: number;
  daily_loss_limit_pct: number;
  max_open_orders: number;
  max_order_size_pct: number;
  avatar_url: string | null;
  color: string | null;
  status: 'active' | 'archived';
  session_id: string;
  session_started_at: Timestamp;
  cloned_from: string | null;
  archived_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

const profileColumns = (changes: Partial<AgentProfileFields>) => {
  const { strategy_tags, ...rest } = changes;
  return {
    ...rest,
    ...(strategy_tags !== undefined ? { strategy_tags: JSON.stringify(strategy_tags) } : {}),
  };
};

/** The DDL of its read-model tables. */
const AGENTS_TABLES: TableDefinitions = {
  agents: {
    columns: {
      agent_id: 'uuid primary key',
      account_id: 'uuid not null',
      display_name: 'text not null',
      api_key_preview: 'text not null',
      starting_balance: 'numeric(38, 8) not null',
      llm_model: 'text',
      framework: 'text',
      strategy_tags: 'jsonb not null',
      ...RISK_COLUMNS,
      avatar_url: 'text',
      color: 'text',
      status: 'text not null',
      session_id: 'uuid not null',
      session_started_at: 'timestamptz not null',
      cloned_from: 'uuid',
      archived_at: 'timestamptz',
      created_at: 'timestamptz not null',
      updated_at: 'timestamptz not null',
    },
    indexes: {
      agents_account_created: ['account_id', 'created_at', 'agent_id'],
    },
  },
};

/**
 * `agents` (ARCHITECTURE §6): the Agent resource for the `/agents` endpoints and the trading capability.
 * A `StreamDeleted` of `agent-{id}` (agent deletion) removes the row. Deterministic: values from event data.
 */
export const agentsProjection: Projection = {
  name: 'agents',
  version: 1,
  ...declareTables(AGENTS_TABLES),
  eventTypes: [...AGENT_EVENT_TYPES, 'StreamDeleted'],
  async apply(db: Kysely<{ agents: AgentsTable }>, events: readonly RecordedEvent[]) {
    const rows = entityRows<AgentsTable>(db, 'agents', 'agent_id');
    await foldEntityEvents<AgentEvent>(events, 'agent-', rows, async (event) => {
      switch (event.type) {
        case 'AgentCreated': {
          const d = event.data;
          await rows.insert({
            agent_id: d.agent_id,
            account_id: d.account_id,
            display_name: d.display_name,
            api_key_preview: d.api_key_preview,
            starting_balance: d.starting_balance,
            llm_model: d.llm_model,
            framework: d.framework,
            strategy_tags: JSON.stringify(d.strategy_tags),
            ...riskColumns(d.risk_profile),
            avatar_url: d.avatar_url,
            color: d.color,
            status: 'active',
            session_id: d.session_id,
            session_started_at: d.created_at,
            cloned_from: d.cloned_from,
            archived_at: null,
            created_at: d.created_at,
            updated_at: d.created_at,
          });
          break;
        }
        case 'AgentProfileUpdated':
          await rows.update(event.data.agent_id, {
            ...profileColumns(event.data.changes),
            updated_at: event.data.updated_at,
          });
          break;
        case 'AgentRiskProfileUpdated':
          await rows.update(event.data.agent_id, {
            ...riskColumns(event.data.risk_profile),
            updated_at: event.data.updated_at,
          });
          break;
        case 'AgentKeyRegenerated':
          await rows.update(event.data.agent_id, {
            api_key_preview: event.data.api_key_preview,
            updated_at: event.data.regenerated_at,
          });
          break;
        case 'AgentReset': {
          const { session_id, reset_at } = event.data;
          await rows.update(event.data.agent_id, {
            status: 'active',
            archived_at: null,
            session_id,
            session_started_at: reset_at,
            updated_at: reset_at,
          });
          break;
        }
        case 'AgentArchived': {
          const { archived_at } = event.data;
          await rows.update(event.data.agent_id, {
            status: 'archived',
            archived_at,
            updated_at: archived_at,
          });
          break;
        }
      }
    });
  },
};
