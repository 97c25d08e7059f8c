import { z } from 'zod';
import { createAgent, deleteAgent, getAgent, listAgents } from '../../application/agents';
import {
  agentIdParams,
  agentListResponse,
  agentOut,
  agentResponse,
  createAgentBody,
  createAgentInputOf,
  createdAgentOut,
  createdAgentResponse,
  listAgentsQuery,
} from '../../contract/agent';
import { authed, DESTRUCTIVE, defineTool, READ, type ToolDef, WRITE } from '../tool';
import { confirmTrue } from './trading';

/**
 * Agent management tools (spec "Agent endpoints"): JWT only, as the routes; the `management` rate-limit group.
 * Each calls its use case in `src/application/agents.ts` as `/agents/*` does.
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
    input: listAgentsQuery,
    output: agentListResponse,
    annotations: READ,
    run: async (call, q) => {
      const page = await listAgents(authed(call), {
        includeArchived: q.include_archived,
        limit: q.limit,
        offset: q.offset,
      });
      return { agents: page.agents.map(agentOut), total: page.total };
    },
    rest: (q, http) => http({ method: 'GET', path: '/agents', query: q }),
    summary: (r) => `${r.agents.length} of ${r.total} agents`,
  }),
  defineTool({
    ...common,
    name: 'get_agent',
    title: 'One agent',
    description: 'One agent of the account: status, starting balance (USDT), risk profile, labels.',
    input: agentIdParams,
    output: agentResponse,
    annotations: READ,
    run: async (call, a) => agentOut(await getAgent(authed(call), a.agent_id)),
    rest: (a, http) => http({ method: 'GET', path: `/agents/${enc(a.agent_id)}` }),
    summary: (r) => `agent ${r.id} ${r.status}`,
  }),
  defineTool({
    ...common,
    name: 'create_agent',
    title: 'Create an agent',
    description:
      'Creates an agent with its own wallet, API key and risk profile (at most 100 per account): display_name, ' +
      'starting_balance (USDT), labels. The answer holds the new key and signing secret: keep them secret.',
    input: createAgentBody,
    output: createdAgentResponse,
    annotations: WRITE,
    run: async (call, b) => createdAgentOut(await createAgent(authed(call), createAgentInputOf(b))),
    rest: (b, http) => http({ method: 'POST', path: '/agents', body: b }),
    summary: (r) => `agent ${r.agent_id} created`,
  }),
  defineTool({
    ...common,
    name: 'delete_agent',
    title: 'Delete an agent',
    description:
      'Deletes an agent for good: its wallet, history and key. Destructive: needs confirm: true. ' +
      'BATTLE_INVALID_STATE while it is in a running battle.',
    input: agentIdParams.extend({ confirm: confirmTrue }),
    output: z.object({ agent_id: z.string(), deleted: z.literal(true) }),
    annotations: DESTRUCTIVE,
    run: async (call, a) => {
      await deleteAgent(authed(call), a.agent_id);
      return { agent_id: a.agent_id, deleted: true as const };
    },
    rest: async (a, http) => {
      await http({ method: 'DELETE', path: `/agents/${enc(a.agent_id)}` });
      return { agent_id: a.agent_id, deleted: true as const };
    },
    summary: (r) => `agent ${r.agent_id} deleted`,
  }),
];
