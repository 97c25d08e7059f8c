import { z } from 'zod';
import {
  addParticipant,
  battlePresets,
  battlePrices,
  battleReplay,
  battleResults,
  cancelBattleOrder,
  createBattle,
  deleteBattle,
  getBattle,
  listBattles,
  liveRankings,
  pauseOrResumeAgent,
  placeBattleOco,
  placeBattleOrder,
  removeParticipant,
  replayBattle,
  startBattle,
  stepBattle,
  stopBattle,
  updateBattle,
} from '../application/battles';
import type { Call } from '../application/call';
import {
  addParticipantBody,
  battleAgentParams,
  battleBodyObject,
  battleChangesOf,
  battleListResponse,
  battleOcoBody,
  battleOrderBody,
  battleOrderParams,
  battleParams,
  battleRequestOf,
  battleResponse,
  createBattleBody,
  deleteBattleResponse,
  listBattlesQuery,
  liveResponse,
  presetsResponse,
  pricesResponse,
  replayFields,
  replayRequestOf,
  replaySnapshotsResponse,
  resultsResponse,
  stepBatchBody,
  stepResponse,
} from '../contract/battle';
import {
  cancelResponse,
  ocoInputOf,
  ocoResponse,
  orderInputOf,
  placedOrderResponse,
} from '../contract/trading';
import { cancelOut } from '../trading/present';
import { endpoint } from './endpoint';

/** An endpoint on one battle (`/battles/{id}/...`) whose use case takes only the battle id. */
const onBattle = <O extends z.ZodType>(output: O, useCase: (call: Call, id: string) => Promise<z.input<O>>) =>
  endpoint({ input: battleParams, output, run: (call, a) => useCase(call, a.id) });

/** Pausing or resuming one participant (`/battles/{id}/{action}/{agent_id}`). */
const onAgent = (action: 'pause' | 'resume') =>
  endpoint({
    input: battleAgentParams,
    output: battleResponse,
    run: (call, a) => pauseOrResumeAgent(call, a.id, a.agent_id, action),
  });

/**
 * The battle endpoints (spec "Battle endpoints"; ARCHITECTURE §10, §14b; docs/battles.md): `/battles/*` and the
 * battle MCP toolset serve these, each its use case of `src/application/battles.ts`. The REST door reaches `step`
 * twice (one candle; `/step/batch` with `steps`), the MCP tool once with `steps` optional.
 */
export const battleEndpoints = {
  create: endpoint({
    input: createBattleBody,
    output: battleResponse,
    run: (call, b) => createBattle(call, battleRequestOf(b)),
  }),
  list: endpoint({
    input: listBattlesQuery,
    output: battleListResponse,
    run: (call, q) => listBattles(call, q),
  }),
  presets: endpoint({ input: z.object({}), output: presetsResponse, run: async () => battlePresets() }),
  get: onBattle(battleResponse, getBattle),
  /** The battle id and any of the create fields (absent: unchanged), at least one. */
  update: endpoint({
    input: battleParams
      .extend(battleBodyObject.shape)
      .strict()
      .refine(({ id: _id, ...b }) => Object.values(b).some((v) => v !== undefined), {
        message: 'give at least one field to change',
      }),
    output: battleResponse,
    run: (call, { id, ...b }) => updateBattle(call, id, battleChangesOf(b)),
  }),
  delete: onBattle(deleteBattleResponse, deleteBattle),
  addParticipant: endpoint({
    input: battleParams.extend(addParticipantBody.shape),
    output: battleResponse,
    run: (call, a) => addParticipant(call, a.id, a.agent_id),
  }),
  removeParticipant: endpoint({
    input: battleAgentParams,
    output: battleResponse,
    run: (call, a) => removeParticipant(call, a.id, a.agent_id),
  }),
  start: onBattle(battleResponse, startBattle),
  pause: onAgent('pause'),
  resume: onAgent('resume'),
  stop: onBattle(battleResponse, stopBattle),
  replay: endpoint({
    input: battleParams.extend(replayFields.shape).strict(),
    output: battleResponse,
    run: (call, { id, ...body }) => {
      const { overrides, agentIds } = replayRequestOf(body);
      return replayBattle(call, id, overrides, agentIds);
    },
  }),
  live: onBattle(liveResponse, liveRankings),
  results: onBattle(resultsResponse, battleResults),
  snapshots: onBattle(replaySnapshotsResponse, battleReplay),
  step: endpoint({
    input: battleParams.extend({ steps: stepBatchBody.shape.steps.optional() }),
    output: stepResponse,
    run: (call, a) => stepBattle(call, a.id, a.steps ?? 1),
  }),
  placeOrder: endpoint({
    input: battleParams.extend(battleOrderBody.shape).strict(),
    output: placedOrderResponse,
    run: (call, { id, agent_id, ...order }) => placeBattleOrder(call, id, agent_id, orderInputOf(order)),
  }),
  placeOco: endpoint({
    input: battleParams.extend(battleOcoBody.shape).strict(),
    output: ocoResponse,
    run: (call, { id, agent_id, ...oco }) => placeBattleOco(call, id, agent_id, ocoInputOf(oco)),
  }),
  cancelOrder: endpoint({
    input: battleOrderParams,
    output: cancelResponse,
    run: async (call, a) => cancelOut(await cancelBattleOrder(call, a.id, a.order_id)),
  }),
  prices: onBattle(pricesResponse, battlePrices),
};
