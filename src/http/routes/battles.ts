import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  addParticipantBody,
  battleAgentParams,
  battleOcoBody,
  battleOrderBody,
  battleOrderParams,
  battleParams,
  createBattleBody,
  listBattlesQuery,
  replayBody,
  stepBatchBody,
  updateBattleBody,
} from '../../contract/battle';
import { errorResponses } from '../../contract/common';
import { battleEndpoints as ep } from '../../endpoints/battles';
import { callOf } from '../call';
import { routeGroup } from './route-options';

/** Every battle endpoint: JWT only (spec "Authentication" rule 3), rate group `management` (600/min, §14b). */
const route = routeGroup('battles', { auth: 'jwt', rateLimitGroup: 'management' });

/**
 * The 20 battle endpoints (spec "Battle endpoints"; ARCHITECTURE §10, §14b; `docs/battles.md`). Battles are
 * event-sourced (`battle-{id}` streams, `commands/battle.ts`); commands and the detail answer from the battle's
 * state, the list and the snapshots from the `battles` read models. Ownership: an unknown id is
 * `BATTLE_NOT_FOUND` 404, another account's battle `PERMISSION_DENIED` 403 (nothing of it is shown). Each serves
 * its endpoint of `src/endpoints/battles.ts`.
 */
export const battleRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/battles',
    route('Create a draft battle', {
      description:
        'Defaults: battle_mode `live`, starting_balance "10000.00", ranking_metric `roi_pct`, duration_minutes null. ' +
        'A historical battle needs backtest_config (start_time < end_time inside the stored data, candle_interval ' +
        '1m 5m 1h 1d, pairs or null). Errors: `VALIDATION_ERROR` 422, `INVALID_SYMBOL` 400.',
      body: createBattleBody,
      response: { 201: ep.create.output, ...errorResponses(400, 401, 403, 422, 429) },
    }),
    async (request, reply) => reply.status(201).send(await ep.create.run(callOf(request), request.body)),
  );

  app.get(
    '/battles',
    route("The caller's battles, newest first", {
      querystring: listBattlesQuery,
      response: { 200: ep.list.output, ...errorResponses(401, 422, 429) },
    }),
    async (request) => ep.list.run(callOf(request), request.query),
  );

  app.get(
    '/battles/presets',
    route('Built-in presets (spec table)', {
      response: { 200: ep.presets.output, ...errorResponses(401, 429) },
    }),
    async (request) => ep.presets.run(callOf(request), {}),
  );

  app.get(
    '/battles/:id',
    route('A battle with its participants', {
      params: battleParams,
      response: { 200: ep.get.output, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => ep.get.run(callOf(request), request.params),
  );

  app.put(
    '/battles/:id',
    route('Update the configuration (draft only)', {
      description: 'Absent fields keep their value; switching to `live` drops backtest_config.',
      params: battleParams,
      body: updateBattleBody,
      response: { 200: ep.update.output, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
    }),
    async (request) => ep.update.run(callOf(request), { ...request.params, ...request.body }),
  );

  app.delete(
    '/battles/:id',
    route('Delete a draft, or cancel an active or paused battle', {
      description: 'Completed or cancelled battles: `BATTLE_INVALID_STATE` 409.',
      params: battleParams,
      response: { 200: ep.delete.output, ...errorResponses(401, 403, 404, 409, 429) },
    }),
    async (request) => ep.delete.run(callOf(request), request.params),
  );

  app.post(
    '/battles/:id/participants',
    route('Add an agent of the caller (draft only)', {
      params: battleParams,
      body: addParticipantBody,
      response: { 201: ep.addParticipant.output, ...errorResponses(401, 403, 404, 409, 422, 429) },
    }),
    async (request, reply) =>
      reply
        .status(201)
        .send(await ep.addParticipant.run(callOf(request), { ...request.params, ...request.body })),
  );

  app.delete(
    '/battles/:id/participants/:agent_id',
    route('Remove an agent (draft only); answers the battle', {
      params: battleAgentParams,
      response: { 200: ep.removeParticipant.output, ...errorResponses(401, 403, 404, 409, 422, 429) },
    }),
    async (request) => ep.removeParticipant.run(callOf(request), request.params),
  );

  app.post(
    '/battles/:id/start',
    route('Lock the configuration and begin (at least 2 participants)', {
      description:
        'Live: every participant’s wallet starts a fresh session with the starting balance (positions closed, ' +
        'orders cancelled, history kept). Historical: the virtual clock starts at start_time, one sandbox ' +
        'wallet per participant. Fewer than 2 participants or not a draft: `BATTLE_INVALID_STATE` 409.',
      params: battleParams,
      response: { 200: ep.start.output, ...errorResponses(401, 403, 404, 409, 429, 503) },
    }),
    async (request) => ep.start.run(callOf(request), request.params),
  );

  for (const action of ['pause', 'resume'] as const) {
    app.post(
      `/battles/:id/${action}/:agent_id`,
      route(
        action === 'pause'
          ? 'Pause one agent: it cannot place orders in this battle until resumed (battle `paused`)'
          : 'Resume a paused agent (battle `active` once no agent is paused)',
        {
          params: battleAgentParams,
          response: { 200: ep[action].output, ...errorResponses(401, 403, 404, 409, 422, 429) },
        },
      ),
      async (request) => ep[action].run(callOf(request), request.params),
    );
  }

  app.post(
    '/battles/:id/stop',
    route('Rank and complete an active or paused battle (`final_rankings`)', {
      params: battleParams,
      response: { 200: ep.stop.output, ...errorResponses(401, 403, 404, 409, 429) },
    }),
    async (request) => ep.stop.run(callOf(request), request.params),
  );

  app.post(
    '/battles/:id/replay',
    route('A new draft from a completed battle', {
      params: battleParams,
      body: replayBody,
      response: { 201: ep.replay.output, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
    }),
    async (request, reply) =>
      reply.status(201).send(await ep.replay.run(callOf(request), { ...request.params, ...request.body })),
  );

  app.get(
    '/battles/:id/live',
    route('Rankings now (active or paused; a completed battle: its final rankings)', {
      description:
        'Live: equity at live prices, activity inside the battle window only. Historical: at virtual time; ' +
        '`elapsed_seconds` is then the virtual time elapsed.',
      params: battleParams,
      response: { 200: ep.live.output, ...errorResponses(401, 403, 404, 409, 429) },
    }),
    async (request) => ep.live.run(callOf(request), request.params),
  );

  app.get(
    '/battles/:id/results',
    route('Final results of a completed battle', {
      params: battleParams,
      response: { 200: ep.results.output, ...errorResponses(401, 403, 404, 409, 429) },
    }),
    async (request) => ep.results.run(callOf(request), request.params),
  );

  app.get(
    '/battles/:id/replay',
    route('Equity snapshots, oldest first', {
      description: 'Live: every 5 s while active. Historical: at every step of the virtual clock.',
      params: battleParams,
      response: { 200: ep.snapshots.output, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => ep.snapshots.run(callOf(request), request.params),
  );

  app.post(
    '/battles/:id/step',
    route('Advance a historical battle one candle', {
      description:
        'Every participant’s pending orders are checked along the candle’s path (O→L→H→C when close ≥ open, ' +
        'else O→H→L→C). The last step ranks and completes the battle.',
      params: battleParams,
      response: { 200: ep.step.output, ...errorResponses(401, 403, 404, 409, 429, 503) },
    }),
    async (request) => ep.step.run(callOf(request), request.params),
  );

  app.post(
    '/battles/:id/step/batch',
    route('Advance a historical battle N candles (1 to 100,000; clamped at the last step)', {
      params: battleParams,
      body: stepBatchBody,
      response: { 200: ep.step.output, ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
    }),
    async (request) => ep.step.run(callOf(request), { ...request.params, ...request.body }),
  );

  app.post(
    '/battles/:id/trade/order',
    route("Order of a participant's sandbox in a historical battle (live order rules at virtual time)", {
      description:
        'Same body as `POST /trade/order` plus `agent_id`, same response. A paused agent: ' +
        '`BATTLE_INVALID_STATE` 409; a rejection is recorded and answered with the rule’s error.',
      params: battleParams,
      body: battleOrderBody,
      response: { 201: ep.placeOrder.output, ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503) },
    }),
    async (request, reply) =>
      reply
        .status(201)
        .send(await ep.placeOrder.run(callOf(request), { ...request.params, ...request.body })),
  );

  app.post(
    '/battles/:id/trade/order/oco',
    route(
      "OCO of a participant's sandbox in a historical battle: a take-profit and a stop-loss, the first to fill cancels the other",
      {
        description:
          'Same body as `POST /trade/order/oco` plus `agent_id`, same response; the legs are matched on the ' +
          'candles of later steps (docs/trading-rules.md, "Order lists: OCO and bracket"). Cancel either leg ' +
          'with `DELETE /battles/{id}/trade/order/{order_id}`: both are cancelled. A paused agent: ' +
          '`BATTLE_INVALID_STATE` 409; a rejection is recorded and answered with the rule’s error.',
        params: battleParams,
        body: battleOcoBody,
        response: { 201: ep.placeOco.output, ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503) },
      },
    ),
    async (request, reply) =>
      reply.status(201).send(await ep.placeOco.run(callOf(request), { ...request.params, ...request.body })),
  );

  app.delete(
    '/battles/:id/trade/order/:order_id',
    route("Cancel an open order of a participant's sandbox in a historical battle; its lock is released", {
      description:
        'The order is found in whichever participant sandbox holds it open (a paused agent’s too). Unknown, ' +
        'filled or cancelled: `ORDER_NOT_FOUND` 404; a live battle: `BATTLE_INVALID_STATE` 409.',
      params: battleOrderParams,
      response: { 200: ep.cancelOrder.output, ...errorResponses(401, 403, 404, 409, 429, 503) },
    }),
    async (request) => ep.cancelOrder.run(callOf(request), request.params),
  );

  app.get(
    '/battles/:id/market/prices',
    route('Prices of a historical battle at its virtual time (no look-ahead)', {
      params: battleParams,
      response: { 200: ep.prices.output, ...errorResponses(401, 403, 404, 409, 429) },
    }),
    async (request) => ep.prices.run(callOf(request), request.params),
  );
};
