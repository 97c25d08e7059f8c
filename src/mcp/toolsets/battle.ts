import { battleEndpoints as ep } from '../../endpoints/battles';
import {
  DESTRUCTIVE,
  defineTool,
  IDEMPOTENT_WRITE,
  READ,
  restOf,
  servesEndpoint,
  servesEndpointAs,
  type ToolDef,
  WRITE,
} from '../tool';
import { endpointTools } from '../tool-table';
import { sandboxTradingTools } from './sandbox';
import { confirmTrue } from './trading';

/**
 * Battle tools (spec "Battle endpoints", docs/battles.md): agents of one account compete, live or on historical
 * data. JWT only, as the routes (`--token` / `PTV_JWT` for stdio, `Authorization: Bearer` for `/mcp`); the
 * `management` rate-limit group. Each serves its endpoint of `src/endpoints/battles.ts` as `/battles/*` does.
 */

const common = { toolset: 'battle', auth: 'jwt', rateLimitGroup: 'management' } as const;
const read = { ...common, annotations: READ } as const;

/** Each tool's description, by its name (what it does, units, errors). */
const describe: Readonly<Record<string, string>> = {
  create_battle:
    'Creates a draft battle between agents of the account: name, battle_mode live or historical (then ' +
    'backtest_config with start_time, end_time, candle_interval, pairs), starting_balance (USDT), ' +
    'ranking_metric, duration_minutes, or a preset. Errors: VALIDATION_ERROR, INVALID_SYMBOL.',
  list_battles: "The account's battles, newest first (filter by status).",
  get_battle: 'A battle with its participants. BATTLE_NOT_FOUND, or PERMISSION_DENIED for another account’s.',
  add_battle_participant:
    'Adds an agent of the account to a draft battle. BATTLE_INVALID_STATE once started.',
  start_battle:
    'Starts a draft battle with at least two participants: each agent’s wallet is reset to the starting ' +
    'balance (live) or a sandbox opens (historical). BATTLE_INVALID_STATE otherwise.',
  stop_battle: 'Stops an active or paused battle and records the final rankings.',
  get_battle_live:
    'The current rankings of an active battle: equity (USDT), ROI (%) and rank of each participant.',
  get_battle_results: 'The final rankings of a completed battle.',
  step_battle: 'Advances a historical battle by steps candles (1 step by default) for every participant.',
  update_battle:
    'Changes the configuration of a draft battle: any create_battle field (absent fields keep their value; ' +
    'switching to live drops backtest_config). BATTLE_INVALID_STATE once started; VALIDATION_ERROR.',
  delete_battle:
    'Deletes a draft battle, or cancels an active or paused one (no rankings). Destructive: needs confirm: true. ' +
    'BATTLE_INVALID_STATE for a completed or cancelled battle.',
  remove_battle_participant: 'Removes an agent from a draft battle. BATTLE_INVALID_STATE once started.',
  replay_battle:
    'Creates a new draft from a completed battle: its configuration with override_config applied, and its ' +
    'agents or agent_ids. BATTLE_INVALID_STATE unless completed.',
  get_battle_snapshots:
    "Each participant's equity (USDT) over a battle's course, oldest first: every 5 s of a live battle, every " +
    'step of a historical one.',
  get_battle_prices:
    'Prices (USDT) of a historical battle’s pairs at its virtual time (no look-ahead). BATTLE_INVALID_STATE ' +
    'for a live battle.',
};

export const battleTools: ToolDef[] = [
  ...endpointTools(read, ep, describe, {
    create: ['create_battle', 'Create a battle', (r) => `battle ${r.battle_id} ${r.status}`, WRITE],
    list: ['list_battles', 'Battles', (r) => `${r.battles.length} of ${r.total} battles`],
    get: [
      'get_battle',
      'One battle',
      (r) => `battle ${r.battle_id} ${r.status}, ${r.participants.length} participants`,
    ],
    addParticipant: [
      'add_battle_participant',
      'Add a participant',
      (r) => `battle ${r.battle_id}: ${r.participants.length} participants`,
      IDEMPOTENT_WRITE,
    ],
    start: ['start_battle', 'Start a battle', (r) => `battle ${r.battle_id} ${r.status}`, WRITE],
    stop: ['stop_battle', 'Stop a battle', (r) => `battle ${r.battle_id} ${r.status}`, IDEMPOTENT_WRITE],
    live: ['get_battle_live', 'Live rankings', (r) => `battle ${r.battle_id} live rankings`],
    results: ['get_battle_results', 'Battle results', (r) => `battle ${r.battle_id} results`],
    step: [
      'step_battle',
      'Step a historical battle',
      (r) => `battle step ${r.step}/${r.total_steps}`,
      WRITE,
      {
        routes: ['POST /battles/{id}/step', 'POST /battles/{id}/step/batch'],
        rest: (a, http) => restOf((a.steps === undefined ? ep.step : ep.stepBatch).route)(a, http),
      },
    ],
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
  ...endpointTools(read, ep, describe, {
    update: [
      'update_battle',
      'Update a draft battle',
      (r) => `battle ${r.battle_id} ${r.status}`,
      IDEMPOTENT_WRITE,
    ],
    delete: [
      'delete_battle',
      'Delete or cancel a battle',
      (r) => `battle ${r.battle_id} ${r.status}`,
      DESTRUCTIVE,
      { input: ep.delete.input.extend({ confirm: confirmTrue }).strict() },
    ],
    removeParticipant: [
      'remove_battle_participant',
      'Remove a participant',
      (r) => `battle ${r.battle_id}: ${r.participants.length} participants`,
      IDEMPOTENT_WRITE,
    ],
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
  ...endpointTools(read, ep, describe, {
    replay: ['replay_battle', 'Replay a battle', (r) => `battle ${r.battle_id} ${r.status}`, WRITE],
    snapshots: [
      'get_battle_snapshots',
      'Battle equity snapshots',
      (r) => `battle ${r.battle_id}: ${r.snapshots.length} snapshots`,
    ],
    prices: [
      'get_battle_prices',
      'Historical battle prices',
      (r) => `battle ${r.battle_id} prices at ${r.virtual_time}`,
    ],
  }),
];
