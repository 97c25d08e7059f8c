import type { OrderGuard } from '../../commands/wallet';
import { battleOf } from '../../domain/battle/events';
import { DomainError } from '../../domain/shared/errors';
import type { RecordedEvent } from '../../ports/event-store';
import { pausedLiveParticipants, runningBattlesOfAgent } from '../../queries/battles';
import { addToKeyedSet, deleteFromKeyedSet } from '../core/keyed-sets';
import type { Services } from '../services';

/**
 * Which agents are paused in a running live battle, and the order guard that refuses their new orders
 * (spec "Battle": pause one agent; `docs/battles.md`): `PERMISSION_DENIED` 403 with `details.reason`
 * `agent_paused_in_battle` and the `battle_id`; nothing is recorded in the wallet. Pending orders placed before
 * the pause stay and may fill (a pause stops new decisions, not the market).
 *
 * When this process folds the read models, the set is kept in memory from the folded battle events (a pause
 * answers after its read models are folded, so the next order already sees it); otherwise each agent order asks
 * the `battle_participants` read model.
 */
export const pausedAgentsGuard = (services: Services): { guard: OrderGuard; load(): Promise<void> } => {
  const paused = new Map<string, Set<string>>();
  const folding = services.projections.folding;
  const set = (agentId: string, battleId: string, on: boolean) =>
    on ? addToKeyedSet(paused, agentId, battleId) : deleteFromKeyedSet(paused, agentId, battleId);
  const observe = (events: readonly RecordedEvent[]) => {
    for (const e of events) {
      const battleId = battleOf(e.streamId);
      if (!battleId) continue;
      const data = e.data as { agent_id?: string };
      if (e.type === 'BattleAgentPaused' && data.agent_id) set(data.agent_id, battleId, true);
      else if (e.type === 'BattleAgentResumed' && data.agent_id) set(data.agent_id, battleId, false);
      else if (e.type === 'BattleCompleted' || e.type === 'BattleCancelled') {
        for (const agentId of [...paused.keys()]) set(agentId, battleId, false);
      }
    }
  };
  if (folding) {
    services.projections.onFolded((change) => {
      if (change === 'swapped') void load();
      else observe(change);
    });
  }
  const load = async () => {
    if (!folding) return;
    const rows = await pausedLiveParticipants(services.database.db).catch((error: unknown) => {
      // Without the read model (e.g. its first generation still building) start empty: folds fill the set.
      services.logger.warn({ err: error }, 'paused battle agents could not be loaded');
      return [];
    });
    paused.clear();
    for (const r of rows) set(r.agent_id, r.battle_id, true);
  };
  const refuse = (agentId: string, battleId: string) =>
    new DomainError(
      'PERMISSION_DENIED',
      `agent ${agentId} is paused in battle ${battleId}: resume it to trade`,
      {
        reason: 'agent_paused_in_battle',
        agent_id: agentId,
        battle_id: battleId,
      },
    );
  const guard: OrderGuard = async ({ ownerId, ownerType }) => {
    if (ownerType !== 'agent') return;
    if (folding) {
      const battles = paused.get(ownerId);
      if (battles?.size) throw refuse(ownerId, [...battles][0]!);
      return;
    }
    const rows = await runningBattlesOfAgent(services.database.db, ownerId);
    const hit = rows.find((r) => r.paused);
    if (hit) throw refuse(ownerId, hit.battle_id);
  };
  return { guard, load };
};
