import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
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
} from '../../application/battles';
import {
  addParticipantBody,
  battleAgentParams,
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
  replayRequestOf,
  replaySnapshotsResponse,
  resultsResponse,
  stepBatchBody,
  stepResponse,
  updateBattleBody,
} from '../../contract/battle';
import { errorResponses } from '../../contract/common';
import {
  ocoInputOf,
  ocoResponse,
  orderInputOf,
  placedOrderResponse,
  cancelResponse as sandboxCancelResponse,
} from '../../contract/trading';
import { cancelOut } from '../../trading/present';
import { callOf } from '../call';

/** Every battle endpoint: JWT only (spec "Authentication" rule 3), rate group `management` (600/min, §14b). */
const config = { auth: 'jwt', rateLimitGroup: 'management' } as const;
const security = [{ bearer: [] }];
const tags = ['battles'];

/**
 * The 20 battle endpoints (spec "Battle endpoints"; ARCHITECTURE §10, §14b; `docs/battles.md`). Battles are
 * event-sourced (`battle-{id}` streams, `commands/battle.ts`); commands and the detail answer from the battle's
 * state, the list and the snapshots from the `battles` read models. Ownership: an unknown id is
 * `BATTLE_NOT_FOUND` 404, another account's battle `PERMISSION_DENIED` 403 (nothing of it is shown). Each parses,
 * calls its use case in `src/application/battles.ts` and presents.
 */
export const battleRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/battles',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Create a draft battle',
        description:
          'Defaults: battle_mode `live`, starting_balance "10000.00", ranking_metric `roi_pct`, duration_minutes null. ' +
          'A historical battle needs backtest_config (start_time < end_time inside the stored data, candle_interval ' +
          '1m 5m 1h 1d, pairs or null). Errors: `VALIDATION_ERROR` 422, `INVALID_SYMBOL` 400.',
        body: createBattleBody,
        response: { 201: battleResponse, ...errorResponses(400, 401, 403, 422, 429) },
      },
    },
    async (request, reply) => {
      return reply.status(201).send(await createBattle(callOf(request), battleRequestOf(request.body)));
    },
  );

  app.get(
    '/battles',
    {
      config,
      schema: {
        tags,
        security,
        summary: "The caller's battles, newest first",
        querystring: listBattlesQuery,
        response: { 200: battleListResponse, ...errorResponses(401, 422, 429) },
      },
    },
    async (request) => listBattles(callOf(request), request.query),
  );

  app.get(
    '/battles/presets',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Built-in presets (spec table)',
        response: { 200: presetsResponse, ...errorResponses(401, 429) },
      },
    },
    async () => battlePresets(),
  );

  app.get(
    '/battles/:id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'A battle with its participants',
        params: battleParams,
        response: { 200: battleResponse, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => getBattle(callOf(request), request.params.id),
  );

  app.put(
    '/battles/:id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Update the configuration (draft only)',
        description: 'Absent fields keep their value; switching to `live` drops backtest_config.',
        params: battleParams,
        body: updateBattleBody,
        response: { 200: battleResponse, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request) => updateBattle(callOf(request), request.params.id, battleChangesOf(request.body)),
  );

  app.delete(
    '/battles/:id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Delete a draft, or cancel an active or paused battle',
        description: 'Completed or cancelled battles: `BATTLE_INVALID_STATE` 409.',
        params: battleParams,
        response: { 200: deleteBattleResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => deleteBattle(callOf(request), request.params.id),
  );

  app.post(
    '/battles/:id/participants',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Add an agent of the caller (draft only)',
        params: battleParams,
        body: addParticipantBody,
        response: { 201: battleResponse, ...errorResponses(401, 403, 404, 409, 422, 429) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await addParticipant(callOf(request), request.params.id, request.body.agent_id)),
  );

  app.delete(
    '/battles/:id/participants/:agent_id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Remove an agent (draft only); answers the battle',
        params: battleAgentParams,
        response: { 200: battleResponse, ...errorResponses(401, 403, 404, 409, 422, 429) },
      },
    },
    async (request) => removeParticipant(callOf(request), request.params.id, request.params.agent_id),
  );

  app.post(
    '/battles/:id/start',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Lock the configuration and begin (at least 2 participants)',
        description:
          'Live: every participant’s wallet starts a fresh session with the starting balance (positions closed, ' +
          'orders cancelled, history kept). Historical: the virtual clock starts at start_time, one sandbox ' +
          'wallet per participant. Fewer than 2 participants or not a draft: `BATTLE_INVALID_STATE` 409.',
        params: battleParams,
        response: { 200: battleResponse, ...errorResponses(401, 403, 404, 409, 429, 503) },
      },
    },
    async (request) => startBattle(callOf(request), request.params.id),
  );

  for (const action of ['pause', 'resume'] as const) {
    app.post(
      `/battles/:id/${action}/:agent_id`,
      {
        config,
        schema: {
          tags,
          security,
          summary:
            action === 'pause'
              ? 'Pause one agent: it cannot place orders in this battle until resumed (battle `paused`)'
              : 'Resume a paused agent (battle `active` once no agent is paused)',
          params: battleAgentParams,
          response: { 200: battleResponse, ...errorResponses(401, 403, 404, 409, 422, 429) },
        },
      },
      async (request) =>
        pauseOrResumeAgent(callOf(request), request.params.id, request.params.agent_id, action),
    );
  }

  app.post(
    '/battles/:id/stop',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Rank and complete an active or paused battle (`final_rankings`)',
        params: battleParams,
        response: { 200: battleResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => stopBattle(callOf(request), request.params.id),
  );

  app.post(
    '/battles/:id/replay',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'A new draft from a completed battle',
        params: battleParams,
        body: replayBody,
        response: { 201: battleResponse, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request, reply) => {
      const { overrides, agentIds } = replayRequestOf(request.body);
      return reply
        .status(201)
        .send(await replayBattle(callOf(request), request.params.id, overrides, agentIds));
    },
  );

  app.get(
    '/battles/:id/live',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Rankings now (active or paused; a completed battle: its final rankings)',
        description:
          'Live: equity at live prices, activity inside the battle window only. Historical: at virtual time; ' +
          '`elapsed_seconds` is then the virtual time elapsed.',
        params: battleParams,
        response: { 200: liveResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => liveRankings(callOf(request), request.params.id),
  );

  app.get(
    '/battles/:id/results',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Final results of a completed battle',
        params: battleParams,
        response: { 200: resultsResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => battleResults(callOf(request), request.params.id),
  );

  app.get(
    '/battles/:id/replay',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Equity snapshots, oldest first',
        description: 'Live: every 5 s while active. Historical: at every step of the virtual clock.',
        params: battleParams,
        response: { 200: replaySnapshotsResponse, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => battleReplay(callOf(request), request.params.id),
  );

  app.post(
    '/battles/:id/step',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Advance a historical battle one candle',
        description:
          'Every participant’s pending orders are checked along the candle’s path (O→L→H→C when close ≥ open, ' +
          'else O→H→L→C). The last step ranks and completes the battle.',
        params: battleParams,
        response: { 200: stepResponse, ...errorResponses(401, 403, 404, 409, 429, 503) },
      },
    },
    async (request) => stepBattle(callOf(request), request.params.id, 1),
  );

  app.post(
    '/battles/:id/step/batch',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Advance a historical battle N candles (1 to 100,000; clamped at the last step)',
        params: battleParams,
        body: stepBatchBody,
        response: { 200: stepResponse, ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
      },
    },
    async (request) => stepBattle(callOf(request), request.params.id, request.body.steps),
  );

  app.post(
    '/battles/:id/trade/order',
    {
      config,
      schema: {
        tags,
        security,
        summary: "Order of a participant's sandbox in a historical battle (live order rules at virtual time)",
        description:
          'Same body as `POST /trade/order` plus `agent_id`, same response. A paused agent: ' +
          '`BATTLE_INVALID_STATE` 409; a rejection is recorded and answered with the rule’s error.',
        params: battleParams,
        body: battleOrderBody,
        response: {
          201: placedOrderResponse,
          ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const { agent_id: agentId, ...order } = request.body;
      const placed = await placeBattleOrder(callOf(request), request.params.id, agentId, orderInputOf(order));
      return reply.status(201).send(placed);
    },
  );

  app.post(
    '/battles/:id/trade/order/oco',
    {
      config,
      schema: {
        tags,
        security,
        summary:
          "OCO of a participant's sandbox in a historical battle: a take-profit and a stop-loss, the first to fill cancels the other",
        description:
          'Same body as `POST /trade/order/oco` plus `agent_id`, same response; the legs are matched on the ' +
          'candles of later steps (docs/trading-rules.md, "Order lists: OCO and bracket"). Cancel either leg ' +
          'with `DELETE /battles/{id}/trade/order/{order_id}`: both are cancelled. A paused agent: ' +
          '`BATTLE_INVALID_STATE` 409; a rejection is recorded and answered with the rule’s error.',
        params: battleParams,
        body: battleOcoBody,
        response: {
          201: ocoResponse,
          ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const { agent_id: agentId, ...oco } = request.body;
      const placed = await placeBattleOco(callOf(request), request.params.id, agentId, ocoInputOf(oco));
      return reply.status(201).send(placed);
    },
  );

  app.delete(
    '/battles/:id/trade/order/:order_id',
    {
      config,
      schema: {
        tags,
        security,
        summary:
          "Cancel an open order of a participant's sandbox in a historical battle; its lock is released",
        description:
          'The order is found in whichever participant sandbox holds it open (a paused agent’s too). Unknown, ' +
          'filled or cancelled: `ORDER_NOT_FOUND` 404; a live battle: `BATTLE_INVALID_STATE` 409.',
        params: battleOrderParams,
        response: { 200: sandboxCancelResponse, ...errorResponses(401, 403, 404, 409, 429, 503) },
      },
    },
    async (request) =>
      cancelOut(await cancelBattleOrder(callOf(request), request.params.id, request.params.order_id)),
  );

  app.get(
    '/battles/:id/market/prices',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Prices of a historical battle at its virtual time (no look-ahead)',
        params: battleParams,
        response: { 200: pricesResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => battlePrices(callOf(request), request.params.id),
  );
};
