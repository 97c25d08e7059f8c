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
  replayBody,
  replayFields,
  replayRequestOf,
  replaySnapshotsResponse,
  resultsResponse,
  stepBatchBody,
  stepResponse,
  updateBattleBody,
} from '../contract/battle';
import {
  cancelResponse,
  ocoInputOf,
  ocoResponse,
  orderInputOf,
  placedOrderResponse,
} from '../contract/trading';
import { cancelOut } from '../trading/present';
import { endpoint, onResource, served } from './endpoint';

/** An endpoint on one battle (`method /battles/{id}{what}`) whose use case takes only the battle id. */
const onBattle = onResource(battleParams, '/battles/:id');

/** Pausing or resuming one participant (`POST /battles/{id}/{action}/{agent_id}`). */
const onAgent = (action: 'pause' | 'resume') =>
  served(
    { method: 'POST', path: `/battles/:id/${action}/:agent_id`, params: battleAgentParams },
    battleResponse,
    (call, a) => pauseOrResumeAgent(call, a.id, a.agent_id, action),
  );

/**
 * Stepping a historical battle: one candle (`POST /battles/{id}/step`), or `steps` (`stepBatch`, the same endpoint
 * at `POST /battles/{id}/step/batch` with a body); the MCP tool serves both with `steps` optional.
 */
const step = endpoint({
  route: { method: 'POST', path: '/battles/:id/step', params: battleParams },
  input: battleParams.extend({ steps: stepBatchBody.shape.steps.optional() }).strict(),
  output: stepResponse,
  run: (call, a) => stepBattle(call, a.id, a.steps ?? 1),
});

/**
 * The battle endpoints (spec "Battle endpoints"; ARCHITECTURE §10, §14b; docs/battles.md): `/battles/*` and the
 * battle MCP toolset serve these, each its use case of `src/application/battles.ts`. The REST door reaches `step`
 * twice (one candle; `/step/batch` with `steps`), the MCP tool once with `steps` optional.
 */
export const battleEndpoints = {
  create: served(
    { method: 'POST', path: '/battles', status: 201, body: createBattleBody },
    battleResponse,
    (call, b) => createBattle(call, battleRequestOf(b)),
  ),
  list: served(
    { method: 'GET', path: '/battles', querystring: listBattlesQuery },
    battleListResponse,
    listBattles,
  ),
  presets: served({ method: 'GET', path: '/battles/presets' }, presetsResponse, async () => battlePresets()),
  get: onBattle('GET', '', battleResponse, getBattle),
  /** The battle id and any of the create fields (absent: unchanged), at least one. */
  update: endpoint({
    route: { method: 'PUT', path: '/battles/:id', params: battleParams, body: updateBattleBody },
    input: battleParams
      .extend(battleBodyObject.shape)
      .strict()
      .refine(({ id: _id, ...b }) => Object.values(b).some((v) => v !== undefined), {
        message: 'give at least one field to change',
      }),
    output: battleResponse,
    run: (call, { id, ...b }) => updateBattle(call, id, battleChangesOf(b)),
  }),
  delete: onBattle('DELETE', '', deleteBattleResponse, deleteBattle),
  addParticipant: served(
    {
      method: 'POST',
      path: '/battles/:id/participants',
      status: 201,
      params: battleParams,
      body: addParticipantBody,
    },
    battleResponse,
    (call, a) => addParticipant(call, a.id, a.agent_id),
  ),
  removeParticipant: served(
    { method: 'DELETE', path: '/battles/:id/participants/:agent_id', params: battleAgentParams },
    battleResponse,
    (call, a) => removeParticipant(call, a.id, a.agent_id),
  ),
  start: onBattle('POST', '/start', battleResponse, startBattle),
  pause: onAgent('pause'),
  resume: onAgent('resume'),
  stop: onBattle('POST', '/stop', battleResponse, stopBattle),
  replay: endpoint({
    route: {
      method: 'POST',
      path: '/battles/:id/replay',
      status: 201,
      params: battleParams,
      body: replayBody,
    },
    input: battleParams.extend(replayFields.shape).strict(),
    output: battleResponse,
    run: (call, { id, ...body }) => {
      const { overrides, agentIds } = replayRequestOf(body);
      return replayBattle(call, id, overrides, agentIds);
    },
  }),
  live: onBattle('GET', '/live', liveResponse, liveRankings),
  results: onBattle('GET', '/results', resultsResponse, battleResults),
  snapshots: onBattle('GET', '/replay', replaySnapshotsResponse, battleReplay),
  step,
  stepBatch: endpoint({
    ...step,
    route: { method: 'POST', path: '/battles/:id/step/batch', params: battleParams, body: stepBatchBody },
  }),
  placeOrder: served(
    {
      method: 'POST',
      path: '/battles/:id/trade/order',
      status: 201,
      params: battleParams,
      body: battleOrderBody,
    },
    placedOrderResponse,
    (call, { id, agent_id, ...order }) => placeBattleOrder(call, id, agent_id, orderInputOf(order)),
    { strict: true },
  ),
  placeOco: served(
    {
      method: 'POST',
      path: '/battles/:id/trade/order/oco',
      status: 201,
      params: battleParams,
      body: battleOcoBody,
    },
    ocoResponse,
    (call, { id, agent_id, ...oco }) => placeBattleOco(call, id, agent_id, ocoInputOf(oco)),
    { strict: true },
  ),
  cancelOrder: served(
    { method: 'DELETE', path: '/battles/:id/trade/order/:order_id', params: battleOrderParams },
    cancelResponse,
    async (call, a) => cancelOut(await cancelBattleOrder(call, a.id, a.order_id)),
  ),
  prices: onBattle('GET', '/market/prices', pricesResponse, battlePrices),
};
