import { z } from 'zod';
import {
  addParticipant,
  battleResults,
  createBattle,
  getBattle,
  listBattles,
  liveRankings,
  placeBattleOrder,
  startBattle,
  stepBattle,
  stopBattle,
} from '../../application/battles';
import {
  addParticipantBody,
  battleListResponse,
  battleOrderBody,
  battleParams,
  battleRequestOf,
  battleResponse,
  createBattleBody,
  listBattlesQuery,
  liveResponse,
  resultsResponse,
  stepBatchBody,
  stepResponse,
} from '../../contract/battle';
import { filledOrderResponse, orderInputOf, pendingOrderResponse } from '../../contract/trading';
import { authed, defineTool, READ, type ToolDef, WRITE } from '../tool';

/**
 * Battle tools (spec "Battle endpoints", docs/battles.md): agents of one account compete, live or on historical
 * data. JWT only, as the routes (`--token` / `PTV_JWT` for stdio, `Authorization: Bearer` for `/mcp`); the
 * `management` rate-limit group. Each calls its use case in `src/application/battles.ts` as `/battles/*` does.
 */

const common = { toolset: 'battle', auth: 'jwt', rateLimitGroup: 'management' } as const;
const read = { ...common, annotations: READ } as const;
const enc = encodeURIComponent;
const at = (id: string, rest = '') => `/battles/${enc(id)}${rest}`;

export const battleTools: ToolDef[] = [
  defineTool({
    ...common,
    name: 'create_battle',
    title: 'Create a battle',
    description:
      'Creates a draft battle between agents of the account: name, battle_mode live or historical (then ' +
      'backtest_config with start_time, end_time, candle_interval, pairs), starting_balance (USDT), ' +
      'ranking_metric, duration_minutes, or a preset. Errors: VALIDATION_ERROR, INVALID_SYMBOL.',
    input: createBattleBody,
    output: battleResponse,
    annotations: WRITE,
    run: async (call, b) => createBattle(authed(call), battleRequestOf(b)),
    rest: (b, http) => http({ method: 'POST', path: '/battles', body: b }),
    summary: (r) => `battle ${r.battle_id} ${r.status}`,
  }),
  defineTool({
    ...read,
    name: 'list_battles',
    title: 'Battles',
    description: "The account's battles, newest first (filter by status).",
    input: listBattlesQuery,
    output: battleListResponse,
    run: async (call, q) => listBattles(authed(call), q),
    rest: (q, http) => http({ method: 'GET', path: '/battles', query: q }),
    summary: (r) => `${r.battles.length} of ${r.total} battles`,
  }),
  defineTool({
    ...read,
    name: 'get_battle',
    title: 'One battle',
    description:
      'A battle with its participants. BATTLE_NOT_FOUND, or PERMISSION_DENIED for another account’s.',
    input: battleParams,
    output: battleResponse,
    run: async (call, a) => getBattle(authed(call), a.id),
    rest: (a, http) => http({ method: 'GET', path: at(a.id) }),
    summary: (r) => `battle ${r.battle_id} ${r.status}, ${r.participants.length} participants`,
  }),
  defineTool({
    ...common,
    name: 'add_battle_participant',
    title: 'Add a participant',
    description: 'Adds an agent of the account to a draft battle. BATTLE_INVALID_STATE once started.',
    input: battleParams.extend(addParticipantBody.shape),
    output: battleResponse,
    annotations: { ...WRITE, idempotentHint: true },
    run: async (call, a) => addParticipant(authed(call), a.id, a.agent_id),
    rest: (a, http) =>
      http({ method: 'POST', path: at(a.id, '/participants'), body: { agent_id: a.agent_id } }),
    summary: (r) => `battle ${r.battle_id}: ${r.participants.length} participants`,
  }),
  defineTool({
    ...common,
    name: 'start_battle',
    title: 'Start a battle',
    description:
      'Starts a draft battle with at least two participants: each agent’s wallet is reset to the starting ' +
      'balance (live) or a sandbox opens (historical). BATTLE_INVALID_STATE otherwise.',
    input: battleParams,
    output: battleResponse,
    annotations: WRITE,
    run: async (call, a) => startBattle(authed(call), a.id),
    rest: (a, http) => http({ method: 'POST', path: at(a.id, '/start') }),
    summary: (r) => `battle ${r.battle_id} ${r.status}`,
  }),
  defineTool({
    ...common,
    name: 'stop_battle',
    title: 'Stop a battle',
    description: 'Stops an active or paused battle and records the final rankings.',
    input: battleParams,
    output: battleResponse,
    annotations: { ...WRITE, idempotentHint: true },
    run: async (call, a) => stopBattle(authed(call), a.id),
    rest: (a, http) => http({ method: 'POST', path: at(a.id, '/stop') }),
    summary: (r) => `battle ${r.battle_id} ${r.status}`,
  }),
  defineTool({
    ...read,
    name: 'get_battle_live',
    title: 'Live rankings',
    description:
      'The current rankings of an active battle: equity (USDT), ROI (%) and rank of each participant.',
    input: battleParams,
    output: liveResponse,
    run: async (call, a) => liveRankings(authed(call), a.id),
    rest: (a, http) => http({ method: 'GET', path: at(a.id, '/live') }),
    summary: (r) => `battle ${r.battle_id} live rankings`,
  }),
  defineTool({
    ...read,
    name: 'get_battle_results',
    title: 'Battle results',
    description: 'The final rankings of a completed battle.',
    input: battleParams,
    output: resultsResponse,
    run: async (call, a) => battleResults(authed(call), a.id),
    rest: (a, http) => http({ method: 'GET', path: at(a.id, '/results') }),
    summary: (r) => `battle ${r.battle_id} results`,
  }),
  defineTool({
    ...common,
    name: 'step_battle',
    title: 'Step a historical battle',
    description: 'Advances a historical battle by steps candles (1 step by default) for every participant.',
    input: battleParams.extend({ steps: stepBatchBody.shape.steps.optional() }),
    output: stepResponse,
    annotations: WRITE,
    run: async (call, a) => stepBattle(authed(call), a.id, a.steps ?? 1),
    rest: (a, http) =>
      a.steps === undefined
        ? http({ method: 'POST', path: at(a.id, '/step') })
        : http({ method: 'POST', path: at(a.id, '/step/batch'), body: { steps: a.steps } }),
    summary: (r) => `battle step ${r.step}/${r.total_steps}`,
  }),
  defineTool({
    ...common,
    name: 'place_battle_order',
    title: 'Place a historical battle order',
    description:
      'Places an order for a participant (agent_id) of a historical battle at its virtual time, under the live ' +
      'order rules and risk chain.',
    input: battleParams.extend(battleOrderBody.shape).strict(),
    output: z.object({ order: z.union([filledOrderResponse, pendingOrderResponse]) }),
    annotations: WRITE,
    run: async (call, a) => {
      const { id, agent_id: agentId, ...order } = a;
      return { order: await placeBattleOrder(authed(call), id, agentId, orderInputOf(order)) };
    },
    rest: async (a, http) => {
      const { id, ...body } = a;
      return { order: await http({ method: 'POST', path: at(id, '/trade/order'), body }) };
    },
    summary: (r) => `battle order ${r.order.order_id} ${r.order.status}`,
  }),
];
