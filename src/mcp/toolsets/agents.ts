import { agentEndpoints as ep } from '../../endpoints/agents';
import { DESTRUCTIVE, IDEMPOTENT_WRITE, READ, type ToolDef, WRITE } from '../tool';
import { endpointTools } from '../tool-table';
import { confirmTrue } from './trading';

/**
 * Agent management tools (spec "Agent endpoints"): JWT only, as the routes; the `management` rate-limit group.
 * Each serves its endpoint of `src/endpoints/agents.ts`, as `/agents/*` does.
 */

const common = { toolset: 'agents', auth: 'jwt', rateLimitGroup: 'management' } as const;
const enc = encodeURIComponent;

/** Each tool's description, by its name (what it does, units, errors). */
const describe: Readonly<Record<string, string>> = {
  list_agents: "The account's agents (archived ones only with include_archived: true); names are user text.",
  get_agent: 'One agent of the account: status, starting balance (USDT), risk profile, labels.',
  create_agent:
    'Creates an agent with its own wallet, API key and risk profile (at most 100 per account): display_name, ' +
    'starting_balance (USDT), labels. The answer holds the new key and signing secret: keep them secret.',
  delete_agent:
    'Deletes an agent for good: its wallet, history and key. Destructive: needs confirm: true. ' +
    'BATTLE_INVALID_STATE while it is in a running battle.',
  update_agent:
    'Changes an agent’s profile: display_name, llm_model, framework, strategy_tags (replaced), color, ' +
    'avatar_url; only the fields given change, null clears a label. VALIDATION_ERROR, AGENT_NOT_FOUND.',
  clone_agent:
    'Creates a new agent with the risk profile, tags, model and framework of agent_id, a fresh starting balance ' +
    'and its own key (new_name, default "<name> (copy)"). The answer holds the new key and signing secret.',
  reset_agent:
    'Starts a new session of the agent’s wallet at its starting balance (positions closed, orders cancelled, ' +
    'history kept) and makes it active. Destructive: needs confirm: true.',
  archive_agent:
    'Archives an agent: its data is kept, its key is refused for new trading requests, and lists hide it. ' +
    'Destructive: needs confirm: true.',
  get_agent_api_key:
    'The agent’s full API key (send it as X-API-Key to trade as the agent). Secret: never show it to anyone.',
  regenerate_agent_key:
    'Issues a new key and signing secret for the agent; the old key is refused from then on (every client ' +
    'using it stops working). Destructive: needs confirm: true.',
  rotate_agent_signing_secret:
    'Issues a new HMAC signing secret for the agent’s key (signed requests, e.g. the Binance API); the previous ' +
    'secret stops verifying. Destructive: needs confirm: true.',
  get_agent_risk_profile:
    'The risk limits in force for an agent: max_position_size_pct, max_order_size_pct (% of equity / cash), ' +
    'daily_loss_limit_pct (% of the starting balance), max_open_orders.',
  set_agent_risk_profile:
    'Replaces an agent’s risk limits (applies to its next order): max_position_size_pct, daily_loss_limit_pct, ' +
    'max_open_orders required; max_order_size_pct kept when omitted. VALIDATION_ERROR.',
};

export const agentTools: ToolDef[] = [
  ...endpointTools({ ...common, annotations: READ }, ep, describe, {
    list: [
      'list_agents',
      'Agents',
      (r) => `${r.agents.length} of ${r.total} agents`,
      READ,
      { routes: ['GET /agents', 'GET /agents/overview'] },
    ],
    get: ['get_agent', 'One agent', (r) => `agent ${r.id} ${r.status}`],
    create: ['create_agent', 'Create an agent', (r) => `agent ${r.agent_id} created`, WRITE],
    delete: [
      'delete_agent',
      'Delete an agent',
      (r) => `agent ${r.agent_id} deleted`,
      DESTRUCTIVE,
      {
        input: ep.delete.input.extend({ confirm: confirmTrue }),
        rest: async (a, http) => {
          await http({ method: 'DELETE', path: `/agents/${enc(a.agent_id)}` });
          return { agent_id: a.agent_id, deleted: true as const };
        },
      },
    ],
    update: ['update_agent', 'Update an agent', (r) => `agent ${r.id} updated`, IDEMPOTENT_WRITE],
    clone: ['clone_agent', 'Clone an agent', (r) => `agent ${r.agent_id} cloned`, WRITE],
    reset: [
      'reset_agent',
      'Reset an agent',
      (r) => `agent ${r.id} reset, ${r.status}`,
      DESTRUCTIVE,
      { input: ep.reset.input.extend({ confirm: confirmTrue }).strict() },
    ],
    archive: [
      'archive_agent',
      'Archive an agent',
      (r) => `agent ${r.id} ${r.status}`,
      { ...DESTRUCTIVE, idempotentHint: true },
      {
        input: ep.archive.input.extend({ confirm: confirmTrue }).strict(),
      },
    ],
    apiKey: [
      'get_agent_api_key',
      'An agent’s API key',
      (r) => `agent ${r.agent_id} key ${r.api_key_preview}`,
    ],
    regenerateKey: [
      'regenerate_agent_key',
      'Replace an agent’s API key',
      (r) => `agent ${r.agent_id} new key ${r.api_key_preview}`,
      DESTRUCTIVE,
      { input: ep.regenerateKey.input.extend({ confirm: confirmTrue }).strict() },
    ],
    signingSecret: [
      'rotate_agent_signing_secret',
      'Replace an agent’s signing secret',
      (r) => `agent ${r.agent_id} new signing secret`,
      DESTRUCTIVE,
      { input: ep.signingSecret.input.extend({ confirm: confirmTrue }).strict() },
    ],
    riskProfile: [
      'get_agent_risk_profile',
      'An agent’s risk limits',
      (r) => `risk limits: position ${r.max_position_size_pct} %, daily loss ${r.daily_loss_limit_pct} %`,
    ],
    setRiskProfile: [
      'set_agent_risk_profile',
      'Set an agent’s risk limits',
      (r) => `risk limits: position ${r.max_position_size_pct} %, daily loss ${r.daily_loss_limit_pct} %`,
      IDEMPOTENT_WRITE,
    ],
  }),
];
