import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { BattleCaller, BattleChanges, BattleOutcome, LoadedBattle } from '../../../commands/battle';
import type { CommandMeta } from '../../../commands/metadata';
import { closedAt } from '../../../domain/backtest/advance';
import { progressPct } from '../../../domain/backtest/clock';
import type { BattleRequest } from '../../../domain/battle/config';
import { historicalEquity, historicalRankings } from '../../../domain/battle/decide';
import { BATTLE_PRESETS } from '../../../domain/battle/presets';
import { intervalMsOf } from '../../../domain/battle/state';
import { normalizeSymbol } from '../../../domain/market/pair';
import { parseIsoTime } from '../../../domain/market/time';
import { DomainError } from '../../../domain/shared/errors';
import { dec, fmt } from '../../../domain/trading/decimal';
import { formatPosition } from '../../../ports/event-store';
import { battleSnapshots, listBattles } from '../../../queries/battles';
import { principalOf } from '../../auth/plugin';
import type { Principal } from '../../auth/principal';
import { battle } from '../../battle/install';
import { battleOut, battleRowOut, rankingOut } from '../../battle/present';
import {
  addParticipantBody,
  battleAgentParams,
  battleListResponse,
  battleOrderBody,
  battleParams,
  battleResponse,
  createBattleBody,
  deleteBattleResponse,
  listBattlesQuery,
  liveResponse,
  presetsResponse,
  pricesResponse,
  replayBody,
  replaySnapshotsResponse,
  resultsResponse,
  stepBatchBody,
  stepResponse,
  updateBattleBody,
} from '../../contract/battle';
import { errorResponses } from '../../contract/common';
import { filledOrderResponse, pendingOrderResponse } from '../../contract/trading';
import { decimalText, placementOut } from '../../trading/present';
import { awaitReadModels } from '../read-your-writes';

/** Every battle endpoint: JWT only (spec "Authentication" rule 3), rate group `management` (600/min, §14b). */
const config = { auth: 'jwt', rateLimitGroup: 'management' } as const;
const security = [{ bearer: [] }];
const tags = ['battles'];

const callerOf = (p: Principal) => ({ accountId: p.accountId });
const metaOf = (p: Principal, requestId: string) => ({ actor: p.accountId, requestId });
const iso = (ms: number): string => new Date(ms).toISOString();

const parseTime = (value: string, field: string): number => {
  const ms = parseIsoTime(value);
  if (ms === undefined) {
    throw new DomainError('VALIDATION_ERROR', `${field} must be an ISO 8601 timestamp`, { field });
  }
  return ms;
};

type ConfigBody = Partial<z.infer<typeof createBattleBody>>;

/** The client's configuration fields as the domain reads them (absent fields stay absent). */
const changesOf = (b: ConfigBody): BattleChanges => {
  const out: BattleChanges = {};
  if (b.name !== undefined) out.name = b.name;
  if (b.battle_mode !== undefined) out.battleMode = b.battle_mode;
  if (b.starting_balance !== undefined) {
    out.startingBalance =
      typeof b.starting_balance === 'number' ? b.starting_balance : decimalText(b.starting_balance);
  }
  if (b.duration_minutes !== undefined) out.durationMinutes = b.duration_minutes;
  if (b.ranking_metric !== undefined) out.rankingMetric = b.ranking_metric;
  if (b.backtest_config !== undefined) {
    const bc = b.backtest_config;
    out.backtestConfig =
      bc === null
        ? null
        : {
            startTime: parseTime(bc.start_time, 'backtest_config.start_time'),
            endTime: parseTime(bc.end_time, 'backtest_config.end_time'),
            candleInterval: bc.candle_interval,
            pairs: bc.pairs ?? null,
          };
  }
  return out;
};

const invalidState = (battle: LoadedBattle, action: string, allowed: string[]) =>
  new DomainError('BATTLE_INVALID_STATE', `cannot ${action}: the battle is ${battle.state.status}`, {
    status: battle.state.status,
    allowed,
  });

const requireHistorical = (battle: LoadedBattle, action: string) => {
  if (battle.state.config?.battle_mode !== 'historical') {
    throw new DomainError('BATTLE_INVALID_STATE', `cannot ${action}: this is a live battle`, {
      battle_mode: 'live',
    });
  }
  if (!battle.market) throw invalidState(battle, action, ['active', 'paused', 'completed']);
  return battle.market;
};

/** Prices of every pair of a historical battle at its virtual time: the last close (no look-ahead). */
const pricesAt = (battle: LoadedBattle): Record<string, string> => {
  const market = requireHistorical(battle, 'read prices');
  const closed = closedAt(market, battle.state.virtualTime!);
  const prices: Record<string, string> = {};
  market.series.forEach((s, i) => {
    const n = closed[i]!;
    if (n > 0) prices[s.symbol] = s.candles[n - 1]!.close;
  });
  return prices;
};

/**
 * The 20 battle endpoints (spec "Battle endpoints"; ARCHITECTURE §10, §14b; `docs/battles.md`). Battles are
 * event-sourced (`battle-{id}` streams, `commands/battle.ts`); commands and the detail answer from the battle's
 * state, the list and the snapshots from the `battles` read models. Ownership: an unknown id is
 * `BATTLE_NOT_FOUND` 404, another account's battle `PERMISSION_DENIED` 403 (nothing of it is shown).
 */
export const battleRoutes: FastifyPluginAsyncZod = async (app) => {
  const services = app.services;
  const commands = () => battle(services).commands;
  const live = () => battle(services).live;

  const answer = async (reply: FastifyReply, outcome: { battle: LoadedBattle; position?: unknown }) => {
    await awaitReadModels(services, reply, outcome.position as never);
    return battleOut(outcome.battle);
  };

  /** Runs a battle command as the request's account: its caller and command metadata (actor, request id). */
  const perform = (
    request: FastifyRequest,
    run: (caller: BattleCaller, meta: CommandMeta) => Promise<BattleOutcome>,
  ): Promise<BattleOutcome> => {
    const p = principalOf(request);
    return run(callerOf(p), metaOf(p, request.id));
  };

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
      const outcome = await perform(request, (caller, meta) =>
        commands().create(
          caller,
          { ...changesOf(request.body), name: request.body.name } as BattleRequest,
          meta,
        ),
      );
      return reply.status(201).send(await answer(reply, outcome));
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
    async (request) => {
      const p = principalOf(request);
      const { battles, total } = await listBattles(services.database.db, p.accountId, request.query);
      return { battles: battles.map((b) => battleRowOut(b.row, b.participants)), total };
    },
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
    async () => BATTLE_PRESETS,
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
    async (request) => battleOut(await commands().battle(callerOf(principalOf(request)), request.params.id)),
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
    async (request, reply) => {
      const outcome = await perform(request, (caller, meta) =>
        commands().update(caller, request.params.id, changesOf(request.body), meta),
      );
      return answer(reply, outcome);
    },
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
    async (request, reply) => {
      const outcome = await perform(request, (caller, meta) =>
        commands().remove(caller, request.params.id, meta),
      );
      await awaitReadModels(services, reply, outcome.position);
      return {
        battle_id: outcome.battle.id,
        status: outcome.battle.state.deleted ? ('deleted' as const) : ('cancelled' as const),
      };
    },
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
    async (request, reply) => {
      const outcome = await perform(request, (caller, meta) =>
        commands().addParticipant(caller, request.params.id, request.body.agent_id, meta),
      );
      return reply.status(201).send(await answer(reply, outcome));
    },
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
    async (request, reply) => {
      const outcome = await perform(request, (caller, meta) =>
        commands().removeParticipant(caller, request.params.id, request.params.agent_id, meta),
      );
      return answer(reply, outcome);
    },
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
    async (request, reply) => {
      const outcome = await perform(request, (caller, meta) =>
        commands().start(caller, request.params.id, meta),
      );
      return answer(reply, outcome);
    },
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
      async (request, reply) => {
        const outcome = await perform(request, (caller, meta) =>
          commands()[action](caller, request.params.id, request.params.agent_id, meta),
        );
        return answer(reply, outcome);
      },
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
    async (request, reply) => {
      const outcome = await perform(request, (caller, meta) =>
        commands().stop(caller, request.params.id, meta),
      );
      return answer(reply, outcome);
    },
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
      const body = request.body ?? {};
      const outcome = await perform(request, (caller, meta) =>
        commands().replay(
          caller,
          request.params.id,
          changesOf(body.override_config ?? {}),
          body.agent_ids,
          meta,
        ),
      );
      return reply.status(201).send(await answer(reply, outcome));
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
    async (request) => {
      const b = await commands().battle(callerOf(principalOf(request)), request.params.id);
      const s = b.state;
      if (!['active', 'paused', 'completed'].includes(s.status!)) {
        throw invalidState(b, 'rank', ['active', 'paused', 'completed']);
      }
      const historical = s.config!.battle_mode === 'historical';
      const start = historical ? Date.parse(s.config!.backtest_config!.start_time) : Date.parse(s.startedAt!);
      const end = historical ? s.virtualTime! : s.endedAt ? Date.parse(s.endedAt) : Date.now();
      const rankings =
        s.status === 'completed'
          ? s.finalRankings!.map(rankingOut)
          : historical
            ? historicalRankings(s, b.market!).rankings
            : (await live().rank(b)).rankings;
      return {
        battle_id: b.id,
        status: s.status!,
        elapsed_seconds: Math.max(0, Math.floor((end - start) / 1000)),
        rankings,
      };
    },
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
    async (request) => {
      const b = await commands().battle(callerOf(principalOf(request)), request.params.id);
      const s = b.state;
      if (s.status !== 'completed') throw invalidState(b, 'read results', ['completed']);
      const historical = s.config!.battle_mode === 'historical';
      const start = historical ? Date.parse(s.config!.backtest_config!.start_time) : Date.parse(s.startedAt!);
      const end = historical ? s.virtualTime! : Date.parse(s.endedAt!);
      const names = new Map(s.participants.map((p) => [p.agentId, p.agentName]));
      return {
        battle_id: b.id,
        status: s.status,
        elapsed_seconds: Math.max(0, Math.floor((end - start) / 1000)),
        rankings: s.finalRankings!.map(rankingOut),
        completed_at: s.endedAt!,
        completion_reason: s.completionReason,
        performance: (s.summaries ?? []).map((x) => ({ ...x, agent_name: names.get(x.agent_id) ?? '' })),
      };
    },
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
    async (request) => {
      const b = await commands().battle(callerOf(principalOf(request)), request.params.id);
      const s = b.state;
      if (s.config?.battle_mode === 'historical') {
        // One snapshot per step, from the battle's state (the fold of its stream): it includes the step just
        // answered, as steps do not wait for the read models (as backtests).
        if (s.virtualTime === null) return { battle_id: b.id, snapshots: [] };
        const start = Date.parse(s.config.backtest_config!.start_time);
        const interval = intervalMsOf(s);
        return {
          battle_id: b.id,
          snapshots: Array.from({ length: s.step + 1 }, (_, step) => ({
            timestamp: iso(start + step * interval),
            participants: s.participants.map((p) => ({
              agent_id: p.agentId,
              agent_name: p.agentName,
              equity: p.equity[step] ?? s.config!.starting_balance,
            })),
          })),
        };
      }
      const names = new Map(s.participants.map((p) => [p.agentId, p.agentName]));
      // Live: the leader's 5 s snapshots from the read model, participants in the order they joined.
      const seq = new Map(s.participants.map((p, i) => [p.agentId, i]));
      const order = (id: string) => seq.get(id) ?? Number.MAX_SAFE_INTEGER;
      const rows = await battleSnapshots(services.database.db, b.id);
      return {
        battle_id: b.id,
        snapshots: rows.map((r) => ({
          timestamp: new Date(r.time).toISOString(),
          participants: [...r.participants]
            .sort((x, y) => order(x.agent_id) - order(y.agent_id))
            .map((x) => ({
              agent_id: x.agent_id,
              agent_name: names.get(x.agent_id) ?? '',
              equity: x.equity,
            })),
        })),
      };
    },
  );

  const stepHandler = async (
    principal: Principal,
    id: string,
    steps: number,
    requestId: string,
    reply: FastifyReply,
  ) => {
    const outcome = await commands().step(callerOf(principal), id, steps, metaOf(principal, requestId));
    const b = outcome.battle;
    const s = b.state;
    // Battle reads answer from the battle's state, so only the completing step waits for the read models (the
    // list); other steps answer as soon as the step is durable (X-Log-Position names it), as backtests do.
    if (s.status === 'completed') await awaitReadModels(services, reply, outcome.position);
    else if (outcome.position) reply.header('x-log-position', formatPosition(outcome.position));
    const stepped = outcome.events.find((e) => e.type === 'BattleStepped');
    const total = s.config!.backtest_config!.total_steps;
    const equity = historicalEquity(s, b.market!);
    const startingBalance = dec(s.config!.starting_balance);
    return {
      battle_id: b.id,
      status: s.status!,
      virtual_time: iso(s.virtualTime!),
      step: s.step,
      total_steps: total,
      progress_pct: progressPct(s.step, total).toFixed(2),
      is_complete: s.step === total,
      prices: pricesAt(b),
      participants: s.participants.map((p) => ({
        agent_id: p.agentId,
        equity: equity[p.agentId]!,
        pnl: fmt(dec(equity[p.agentId]!).minus(startingBalance)),
        trade_count: p.fills.length,
      })),
      fills: stepped ? (stepped.data as { fills: number }).fills : 0,
    };
  };

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
    (request, reply) => stepHandler(principalOf(request), request.params.id, 1, request.id, reply),
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
    (request, reply) =>
      stepHandler(principalOf(request), request.params.id, request.body.steps, request.id, reply),
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
          201: filledOrderResponse.or(pendingOrderResponse),
          ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      const b = request.body;
      const outcome = await commands().placeOrder(
        callerOf(p),
        request.params.id,
        b.agent_id,
        {
          symbol: normalizeSymbol(b.symbol),
          side: b.side,
          type: b.type,
          quantity: decimalText(b.quantity),
          price: b.price == null ? null : decimalText(b.price),
          triggerPrice: b.trigger_price == null ? null : decimalText(b.trigger_price),
        },
        metaOf(p, request.id),
      );
      const wallet = outcome.events.flatMap((e) =>
        e.type === 'BattleSandboxEventRecorded' ? [e.data.event] : [],
      );
      const placed = wallet.find((e) => e.type === 'OrderPlaced');
      const body = placed ? placementOut(wallet, placed.data.order_id) : undefined;
      if (!body) throw new DomainError('INTERNAL_ERROR', 'the battle order was neither placed nor rejected');
      return reply.status(201).send(body);
    },
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
    async (request) => {
      const b = await commands().battle(callerOf(principalOf(request)), request.params.id);
      const prices = pricesAt(b);
      return { battle_id: b.id, virtual_time: iso(b.state.virtualTime!), prices };
    },
  );
};
