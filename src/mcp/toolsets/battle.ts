import { battleEndpoints as ep } from '../../endpoints/battles';
import {
  DESTRUCTIVE,
  defineTool,
  READ,
  restOf,
  servesEndpoint,
  servesEndpointAs,
  type ToolDef,
  WRITE,
} from '../tool';
import { sandboxTradingTools } from './sandbox';
import { confirmTrue } from './trading';

/**
 * Battle tools (spec "Battle endpoints", docs/battles.md): agents of one account compete, live or on historical
 * data. JWT only, as the routes (`--token` / `PTV_JWT` for stdio, `Authorization: Bearer` for `/mcp`); the
 * `management` rate-limit group. Each serves its endpoint of `src/endpoints/battles.ts` as `/battles/*` does.
 */

const common = { toolset: 'battle', auth: 'jwt', rateLimitGroup: 'management' } as const;
const read = { ...common, annotations: READ } as const;

export const battleTools: ToolDef[] = [
  defineTool({
    ...common,
    name: 'create_battle',
    title: 'Create a battle',
    description:
      'Creates a draft battle between agents of the account: name, battle_mode live or historical (then ' +
      'backtest_config with start_time, end_time, candle_interval, pairs), starting_balance (USDT), ' +
      'ranking_metric, duration_minutes, or a preset. Errors: VALIDATION_ERROR, INVALID_SYMBOL.',
    ...servesEndpoint(ep.create),
    annotations: WRITE,
    summary: (r) => `battle ${r.battle_id} ${r.status}`,
  }),
  defineTool({
    ...read,
    name: 'list_battles',
    title: 'Battles',
    description: "The account's battles, newest first (filter by status).",
    ...servesEndpoint(ep.list),
    summary: (r) => `${r.battles.length} of ${r.total} battles`,
  }),
  defineTool({
    ...read,
    name: 'get_battle',
    title: 'One battle',
    description:
      'A battle with its participants. BATTLE_NOT_FOUND, or PERMISSION_DENIED for another account’s.',
    ...servesEndpoint(ep.get),
    summary: (r) => `battle ${r.battle_id} ${r.status}, ${r.participants.length} participants`,
  }),
  defineTool({
    ...common,
    name: 'add_battle_participant',
    title: 'Add a participant',
    description: 'Adds an agent of the account to a draft battle. BATTLE_INVALID_STATE once started.',
    ...servesEndpoint(ep.addParticipant),
    annotations: { ...WRITE, idempotentHint: true },
    summary: (r) => `battle ${r.battle_id}: ${r.participants.length} participants`,
  }),
  defineTool({
    ...common,
    name: 'start_battle',
    title: 'Start a battle',
    description:
      'Starts a draft battle with at least two participants: each agent’s wallet is reset to the starting ' +
      'balance (live) or a sandbox opens (historical). BATTLE_INVALID_STATE otherwise.',
    ...servesEndpoint(ep.start),
    annotations: WRITE,
    summary: (r) => `battle ${r.battle_id} ${r.status}`,
  }),
  defineTool({
    ...common,
    name: 'stop_battle',
    title: 'Stop a battle',
    description: 'Stops an active or paused battle and records the final rankings.',
    ...servesEndpoint(ep.stop),
    annotations: { ...WRITE, idempotentHint: true },
    summary: (r) => `battle ${r.battle_id} ${r.status}`,
  }),
  defineTool({
    ...read,
    name: 'get_battle_live',
    title: 'Live rankings',
    description:
      'The current rankings of an active battle: equity (USDT), ROI (%) and rank of each participant.',
    ...servesEndpoint(ep.live),
    summary: (r) => `battle ${r.battle_id} live rankings`,
  }),
  defineTool({
    ...read,
    name: 'get_battle_results',
    title: 'Battle results',
    description: 'The final rankings of a completed battle.',
    ...servesEndpoint(ep.results),
    summary: (r) => `battle ${r.battle_id} results`,
  }),
  defineTool({
    ...common,
    name: 'step_battle',
    title: 'Step a historical battle',
    description: 'Advances a historical battle by steps candles (1 step by default) for every participant.',
    ...servesEndpoint(ep.step),
    routes: ['POST /battles/{id}/step', 'POST /battles/{id}/step/batch'],
    annotations: WRITE,
    rest: (a, http) => restOf((a.steps === undefined ? ep.step : ep.stepBatch).route)(a, http),
    summary: (r) => `battle step ${r.step}/${r.total_steps}`,
  }),
  ...sandboxTradingTools({
    common,
    prefix: 'battle',
    ep,
    title: 'historical battle',
    noun: 'battle',
    describe: {
      order:
        'Places an order for a participant (agent_id) of a historical battle at its virtual time, under the live ' +
        'order rules and risk chain.',
      oco:
        'Places an OCO for a participant (agent_id) of a historical battle at its virtual time (as place_oco_order ' +
        'live): a take-profit and a stop-loss of one quantity sharing one lock; the first candle that reaches a leg ' +
        'fills it and cancels the other. cancel_battle_order on either leg cancels both.',
      cancel:
        "Cancels an open order of a participant's sandbox in a historical battle (pending or partially filled, found " +
        'in whichever sandbox holds it); its remaining lock is released.',
    },
  }),
  defineTool({
    ...read,
    name: 'get_battle_presets',
    title: 'Battle presets',
    description:
      'The built-in battle presets by key (pass the key as preset to create_battle): mode, duration (minutes), ' +
      'starting balance (USDT), historical days and candle interval.',
    ...servesEndpointAs('presets', ep.presets),
    summary: (r) => `${Object.keys(r.presets).length} presets: ${Object.keys(r.presets).join(', ')}`,
  }),
  defineTool({
    ...common,
    name: 'update_battle',
    title: 'Update a draft battle',
    description:
      'Changes the configuration of a draft battle: any create_battle field (absent fields keep their value; ' +
      'switching to live drops backtest_config). BATTLE_INVALID_STATE once started; VALIDATION_ERROR.',
    ...servesEndpoint(ep.update),
    annotations: { ...WRITE, idempotentHint: true },
    summary: (r) => `battle ${r.battle_id} ${r.status}`,
  }),
  defineTool({
    ...common,
    name: 'delete_battle',
    title: 'Delete or cancel a battle',
    description:
      'Deletes a draft battle, or cancels an active or paused one (no rankings). Destructive: needs confirm: true. ' +
      'BATTLE_INVALID_STATE for a completed or cancelled battle.',
    ...servesEndpoint(ep.delete),
    input: ep.delete.input.extend({ confirm: confirmTrue }).strict(),
    annotations: DESTRUCTIVE,
    summary: (r) => `battle ${r.battle_id} ${r.status}`,
  }),
  defineTool({
    ...common,
    name: 'remove_battle_participant',
    title: 'Remove a participant',
    description: 'Removes an agent from a draft battle. BATTLE_INVALID_STATE once started.',
    ...servesEndpoint(ep.removeParticipant),
    annotations: { ...WRITE, idempotentHint: true },
    summary: (r) => `battle ${r.battle_id}: ${r.participants.length} participants`,
  }),
  ...(['pause', 'resume'] as const).map((action) =>
    defineTool({
      ...common,
      name: `${action}_battle_agent`,
      title: action === 'pause' ? 'Pause a battle agent' : 'Resume a battle agent',
      description:
        action === 'pause'
          ? 'Pauses one participant of an active battle: it cannot place orders in it until resumed (the battle ' +
            'is paused meanwhile). BATTLE_INVALID_STATE otherwise.'
          : 'Resumes a paused participant; the battle is active again once no agent is paused.',
      ...servesEndpoint(ep[action]),
      annotations: { ...WRITE, idempotentHint: true },
      summary: (r) => `battle ${r.battle_id} ${r.status}`,
    }),
  ),
  defineTool({
    ...common,
    name: 'replay_battle',
    title: 'Replay a battle',
    description:
      'Creates a new draft from a completed battle: its configuration with override_config applied, and its ' +
      'agents or agent_ids. BATTLE_INVALID_STATE unless completed.',
    ...servesEndpoint(ep.replay),
    annotations: WRITE,
    summary: (r) => `battle ${r.battle_id} ${r.status}`,
  }),
  defineTool({
    ...read,
    name: 'get_battle_snapshots',
    title: 'Battle equity snapshots',
    description:
      "Each participant's equity (USDT) over a battle's course, oldest first: every 5 s of a live battle, every " +
      'step of a historical one.',
    ...servesEndpoint(ep.snapshots),
    summary: (r) => `battle ${r.battle_id}: ${r.snapshots.length} snapshots`,
  }),
  defineTool({
    ...read,
    name: 'get_battle_prices',
    title: 'Historical battle prices',
    description:
      'Prices (USDT) of a historical battle’s pairs at its virtual time (no look-ahead). BATTLE_INVALID_STATE ' +
      'for a live battle.',
    ...servesEndpoint(ep.prices),
    summary: (r) => `battle ${r.battle_id} prices at ${r.virtual_time}`,
  }),
];
