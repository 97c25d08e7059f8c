import { type Kysely, type Selectable, sql } from 'kysely';
import type { AgentStatus } from '../domain/agent/state';
import type { RiskProfile } from '../domain/shared/risk-profile';
import type { AgentsTable } from '../projections/agents';
import type { ReadModels } from '../projections/read-models';
import { decimal8, iso } from './format';

/** An agent as the read side shows it (spec "Agent (AgentResponse)"). */
export interface AgentView {
  agentId: string;
  accountId: string;
  displayName: string;
  apiKeyPreview: string;
  /** USDT, 8 decimal places. */
  startingBalance: string;
  llmModel: string | null;
  framework: string | null;
  strategyTags: string[];
  riskProfile: RiskProfile;
  avatarUrl: string | null;
  color: string | null;
  status: AgentStatus;
  sessionId: string;
  sessionStartedAt: string;
  clonedFrom: string | null;
  archivedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

const toView = (row: Selectable<AgentsTable>): AgentView => ({
  agentId: row.agent_id,
  accountId: row.account_id,
  displayName: row.display_name,
  apiKeyPreview: row.api_key_preview,
  startingBalance: decimal8(row.starting_balance),
  llmModel: row.llm_model,
  framework: row.framework,
  strategyTags: Array.isArray(row.strategy_tags) ? row.strategy_tags : JSON.parse(String(row.strategy_tags)),
  riskProfile: {
    max_position_size_pct: row.max_position_size_pct,
    daily_loss_limit_pct: row.daily_loss_limit_pct,
    max_open_orders: row.max_open_orders,
    max_order_size_pct: row.max_order_size_pct,
  },
  avatarUrl: row.avatar_url,
  color: row.color,
  status: row.status,
  sessionId: row.session_id,
  sessionStartedAt: iso(row.session_started_at),
  clonedFrom: row.cloned_from,
  archivedAt: row.archived_at ? iso(row.archived_at) : null,
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at),
});

/** One agent from the `agents` read model (any account), or `undefined`. */
export const getAgent = async (db: Kysely<ReadModels>, agentId: string): Promise<AgentView | undefined> => {
  const row = await db.selectFrom('agents').selectAll().where('agent_id', '=', agentId).executeTakeFirst();
  return row ? toView(row) : undefined;
};

/** Options of {@link listAgents}. */
export interface ListAgentsOptions {
  /** Include archived agents (default false). */
  includeArchived?: boolean;
  /** Page size (the route bounds it to 1–500). */
  limit: number;
  offset: number;
}

/**
 * A page of an account's agents, oldest first (creation time, then id), and the total matching the filter
 * (spec `GET /agents`: `agents`, `total`).
 */
export const listAgents = async (
  db: Kysely<ReadModels>,
  accountId: string,
  options: ListAgentsOptions,
): Promise<{ agents: AgentView[]; total: number }> => {
  let base = db.selectFrom('agents').where('account_id', '=', accountId);
  if (!options.includeArchived) base = base.where('status', '=', 'active');
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at')
      .orderBy('agent_id')
      .limit(options.limit)
      .offset(options.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { agents: rows.map(toView), total: Number(count.n) };
};

/** Agents of an account that still exist (active or archived): the input of the 100-agent limit. */
export const countAgents = async (db: Kysely<ReadModels>, accountId: string): Promise<number> => {
  const row = await db
    .selectFrom('agents')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
};

/** Owner and status of an agent (cheap: used by the `X-Agent-Id` check and agent-key requests). */
export const getAgentOwnership = async (
  db: Kysely<ReadModels>,
  agentId: string,
): Promise<{ accountId: string; status: AgentStatus } | undefined> => {
  const row = await db
    .selectFrom('agents')
    .select(['account_id', 'status'])
    .where('agent_id', '=', agentId)
    .executeTakeFirst();
  return row ? { accountId: row.account_id, status: row.status } : undefined;
};

/**
 * {@link getAgentOwnership} of many agents in one statement (`agent_id = any($1)`): each agent found, by id; an id
 * without a row is absent. What a heartbeat's check of every open socket reads (`AuthService.prefetch`).
 */
export const getAgentsOwnership = async (
  db: Kysely<ReadModels>,
  agentIds: readonly string[],
): Promise<Map<string, { accountId: string; status: AgentStatus }>> => {
  const found = new Map<string, { accountId: string; status: AgentStatus }>();
  if (agentIds.length === 0) return found;
  const rows = await db
    .selectFrom('agents')
    .select(['agent_id', 'account_id', 'status'])
    .where(sql<boolean>`agent_id = any(${[...agentIds]}::uuid[])`)
    .execute();
  for (const r of rows) found.set(r.agent_id, { accountId: r.account_id, status: r.status });
  return found;
};
