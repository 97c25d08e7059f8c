import { agentEndpoints as ep } from '../../endpoints/agents';
import { DESTRUCTIVE, defineTool, READ, servesEndpoint, type ToolDef, WRITE } from '../tool';
import { confirmTrue } from './trading';

/**
 * Agent management tools (spec "Agent endpoints"): JWT only, as the routes; the `management` rate-limit group.
 * Each serves its endpoint of `src/endpoints/agents.ts`, as `/agents/*` does.
 */

const common = { toolset: 'agents', auth: 'jwt', rateLimitGroup: 'management' } as const;
const enc = encodeURIComponent;

export const agentTools: ToolDef[] = [
  defineTool({
    ...common,
    name: 'list_agents',
    title: 'Agents',
    description:
      "The account's agents (archived ones only with include_archived: true); names are user text.",
    ...servesEndpoint(ep.list),
    routes: ['GET /agents', 'GET /agents/overview'],
    annotations: READ,
    summary: (r) => `${r.agents.length} of ${r.total} agents`,
  }),
  defineTool({
    ...common,
    name: 'get_agent',
    title: 'One agent',
    description: 'One agent of the account: status, starting balance (USDT), risk profile, labels.',
    ...servesEndpoint(ep.get),
    annotations: READ,
    summary: (r) => `agent ${r.id} ${r.status}`,
  }),
  defineTool({
    ...common,
    name: 'create_agent',
    title: 'Create an agent',
    description:
      'Creates an agent with its own wallet, API key and risk profile (at most 100 per account): display_name, ' +
      'starting_balance (USDT), labels. The answer holds the new key and signing secret: keep them secret.',
    ...servesEndpoint(ep.create),
    annotations: WRITE,
    summary: (r) => `agent ${r.agent_id} created`,
  }),
  defineTool({
    ...common,
    name: 'delete_agent',
    title: 'Delete an agent',
    description:
      'Deletes an agent for good: its wallet, history and key. Destructive: needs confirm: true. ' +
      'BATTLE_INVALID_STATE while it is in a running battle.',
    ...servesEndpoint(ep.delete),
    input: ep.delete.input.extend({ confirm: confirmTrue }),
    annotations: DESTRUCTIVE,
    rest: async (a, http) => {
      await http({ method: 'DELETE', path: `/agents/${enc(a.agent_id)}` });
      return { agent_id: a.agent_id, deleted: true as const };
    },
    summary: (r) => `agent ${r.agent_id} deleted`,
  }),
  defineTool({
    ...common,
    name: 'update_agent',
    title: 'Update an agent',
    description:
      'Changes an agent’s profile: display_name, llm_model, framework, strategy_tags (replaced), color, ' +
      'avatar_url; only the fields given change, null clears a label. VALIDATION_ERROR, AGENT_NOT_FOUND.',
    ...servesEndpoint(ep.update),
    annotations: { ...WRITE, idempotentHint: true },
    summary: (r) => `agent ${r.id} updated`,
  }),
  defineTool({
    ...common,
    name: 'clone_agent',
    title: 'Clone an agent',
    description:
      'Creates a new agent with the risk profile, tags, model and framework of agent_id, a fresh starting balance ' +
      'and its own key (new_name, default "<name> (copy)"). The answer holds the new key and signing secret.',
    ...servesEndpoint(ep.clone),
    annotations: WRITE,
    summary: (r) => `agent ${r.agent_id} cloned`,
  }),
  defineTool({
    ...common,
    name: 'reset_agent',
    title: 'Reset an agent',
    description:
      'Starts a new session of the agent’s wallet at its starting balance (positions closed, orders cancelled, ' +
      'history kept) and makes it active. Destructive: needs confirm: true.',
    ...servesEndpoint(ep.reset),
    input: ep.reset.input.extend({ confirm: confirmTrue }).strict(),
    annotations: DESTRUCTIVE,
    summary: (r) => `agent ${r.id} reset, ${r.status}`,
  }),
  defineTool({
    ...common,
    name: 'archive_agent',
    title: 'Archive an agent',
    description:
      'Archives an agent: its data is kept, its key is refused for new trading requests, and lists hide it. ' +
      'Destructive: needs confirm: true.',
    ...servesEndpoint(ep.archive),
    input: ep.archive.input.extend({ confirm: confirmTrue }).strict(),
    annotations: { ...DESTRUCTIVE, idempotentHint: true },
    summary: (r) => `agent ${r.id} ${r.status}`,
  }),
  defineTool({
    ...common,
    name: 'get_agent_api_key',
    title: 'An agent’s API key',
    description:
      'The agent’s full API key (send it as X-API-Key to trade as the agent). Secret: never show it to anyone.',
    ...servesEndpoint(ep.apiKey),
    annotations: READ,
    summary: (r) => `agent ${r.agent_id} key ${r.api_key_preview}`,
  }),
  defineTool({
    ...common,
    name: 'regenerate_agent_key',
    title: 'Replace an agent’s API key',
    description:
      'Issues a new key and signing secret for the agent; the old key is refused from then on (every client ' +
      'using it stops working). Destructive: needs confirm: true.',
    ...servesEndpoint(ep.regenerateKey),
    input: ep.regenerateKey.input.extend({ confirm: confirmTrue }).strict(),
    annotations: DESTRUCTIVE,
    summary: (r) => `agent ${r.agent_id} new key ${r.api_key_preview}`,
  }),
  defineTool({
    ...common,
    name: 'rotate_agent_signing_secret',
    title: 'Replace an agent’s signing secret',
    description:
      'Issues a new HMAC signing secret for the agent’s key (signed requests, e.g. the Binance API); the previous ' +
      'secret stops verifying. Destructive: needs confirm: true.',
    ...servesEndpoint(ep.signingSecret),
    input: ep.signingSecret.input.extend({ confirm: confirmTrue }).strict(),
    annotations: DESTRUCTIVE,
    summary: (r) => `agent ${r.agent_id} new signing secret`,
  }),
  defineTool({
    ...common,
    name: 'get_agent_risk_profile',
    title: 'An agent’s risk limits',
    description:
      'The risk limits in force for an agent: max_position_size_pct, max_order_size_pct (% of equity / cash), ' +
      'daily_loss_limit_pct (% of the starting balance), max_open_orders.',
    ...servesEndpoint(ep.riskProfile),
    annotations: READ,
    summary: (r) =>
      `risk limits: position ${r.max_position_size_pct} %, daily loss ${r.daily_loss_limit_pct} %`,
  }),
  defineTool({
    ...common,
    name: 'set_agent_risk_profile',
    title: 'Set an agent’s risk limits',
    description:
      'Replaces an agent’s risk limits (applies to its next order): max_position_size_pct, daily_loss_limit_pct, ' +
      'max_open_orders required; max_order_size_pct kept when omitted. VALIDATION_ERROR.',
    ...servesEndpoint(ep.setRiskProfile),
    annotations: { ...WRITE, idempotentHint: true },
    summary: (r) =>
      `risk limits: position ${r.max_position_size_pct} %, daily loss ${r.daily_loss_limit_pct} %`,
  }),
];
