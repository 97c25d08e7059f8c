import { type Kysely, sql } from 'kysely';
import type { ReadModels } from '../projections/read-models';

/**
 * How many backtest sessions of an owner are still open (`created` or `running`) and how many completed, for
 * `GET /account/mode` (`active_backtests`, `total_backtests_completed`). Scope: one agent's sessions with
 * `agentId`, else every session of the account (the account-level view, spec "Authentication" rule 4).
 */
export const backtestCounts = async (
  db: Kysely<ReadModels>,
  scope: { accountId: string; agentId?: string | null },
): Promise<{ active: number; completed: number }> => {
  let q = db
    .selectFrom('backtests')
    .select([
      sql<string>`count(*) filter (where status in ('created', 'running'))::text`.as('active'),
      sql<string>`count(*) filter (where status = 'completed')::text`.as('completed'),
    ])
    .where('account_id', '=', scope.accountId);
  if (scope.agentId) q = q.where('agent_id', '=', scope.agentId);
  const row = await q.executeTakeFirstOrThrow();
  return { active: Number(row.active), completed: Number(row.completed) };
};
