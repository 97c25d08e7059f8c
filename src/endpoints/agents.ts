import type { z } from 'zod';
import {
  agentRiskProfile,
  archiveAgent,
  cloneAgent,
  createAgent,
  deleteAgent,
  getAgent,
  issueAgentSigningSecret,
  listAgents,
  regenerateAgentKey,
  resetAgent,
  revealAgentKey,
  updateAgent,
  updateAgentRiskProfile,
} from '../application/agents';
import type { Call } from '../application/call';
import {
  agentChangesOf,
  agentIdParams,
  agentKeyOut,
  agentKeyResponse,
  agentListResponse,
  agentOut,
  agentResponse,
  agentSigningSecretResponse,
  agentStateOut,
  cloneQuery,
  createAgentBody,
  createAgentInputOf,
  createdAgentOut,
  createdAgentResponse,
  listAgentsQuery,
  overviewQuery,
  regeneratedKeyOut,
  signingSecretOut,
  updateAgentBody,
} from '../contract/agent';
import { riskProfileOut, riskProfileResponse, riskProfileSchema } from '../contract/common';
import { deletion, type HttpMethod, served } from './endpoint';

/**
 * An endpoint on one agent served at `method /agents/:agent_id{what}` (no query or body): the use case on the agent
 * id, presented with `present`.
 */
const onAgent = <O extends z.ZodType, R>(
  method: HttpMethod,
  what: string,
  output: O,
  useCase: (call: Call, agentId: string) => Promise<R>,
  present: (outcome: R) => z.input<O>,
) =>
  served({ method, path: `/agents/:agent_id${what}`, params: agentIdParams }, output, async (call, a) =>
    present(await useCase(call, a.agent_id)),
  );

/** A page of the account's agents, presented. */
const listed = async (call: Call, q: z.output<typeof listAgentsQuery>) => {
  const page = await listAgents(call, {
    includeArchived: q.include_archived,
    limit: q.limit,
    offset: q.offset,
  });
  return { agents: page.agents.map(agentOut), total: page.total };
};

/**
 * The agent endpoints (spec "Agent endpoints"): `/agents/*` and the agents MCP toolset serve these. Each parses
 * into its use case of `src/application/agents.ts` and presents with `src/contract/agent.ts`.
 */
export const agentEndpoints = {
  list: served({ method: 'GET', path: '/agents', querystring: listAgentsQuery }, agentListResponse, listed),
  /** The list without archived agents, for a dashboard. */
  overview: served(
    { method: 'GET', path: '/agents/overview', querystring: overviewQuery },
    agentListResponse,
    (call, q) => listed(call, { ...q, include_archived: false }),
  ),
  get: onAgent('GET', '', agentResponse, getAgent, agentOut),
  create: served(
    { method: 'POST', path: '/agents', status: 201, body: createAgentBody },
    createdAgentResponse,
    async (call, b) => createdAgentOut(await createAgent(call, createAgentInputOf(b))),
  ),
  /** The REST door answers 204 with no body; the MCP tool this confirmation. */
  delete: deletion('/agents/:agent_id', agentIdParams, 'agent_id', deleteAgent),
  update: served(
    { method: 'PUT', path: '/agents/:agent_id', params: agentIdParams, body: updateAgentBody },
    agentResponse,
    async (call, { agent_id: agentId, ...body }) =>
      agentStateOut(await updateAgent(call, agentId, agentChangesOf(body))),
    { strict: true },
  ),
  clone: served(
    {
      method: 'POST',
      path: '/agents/:agent_id/clone',
      status: 201,
      params: agentIdParams,
      querystring: cloneQuery,
    },
    createdAgentResponse,
    async (call, a) => createdAgentOut(await cloneAgent(call, a.agent_id, a.new_name)),
  ),
  reset: onAgent('POST', '/reset', agentResponse, resetAgent, agentStateOut),
  archive: onAgent('POST', '/archive', agentResponse, archiveAgent, agentStateOut),
  apiKey: onAgent('GET', '/api-key', agentKeyResponse, revealAgentKey, agentKeyOut),
  regenerateKey: onAgent('POST', '/regenerate-key', agentKeyResponse, regenerateAgentKey, regeneratedKeyOut),
  signingSecret: onAgent(
    'POST',
    '/signing-secret',
    agentSigningSecretResponse,
    issueAgentSigningSecret,
    signingSecretOut,
  ),
  riskProfile: onAgent('GET', '/risk-profile', riskProfileResponse, agentRiskProfile, riskProfileOut),
  setRiskProfile: served(
    { method: 'PUT', path: '/agents/:agent_id/risk-profile', params: agentIdParams, body: riskProfileSchema },
    riskProfileResponse,
    async (call, { agent_id: agentId, ...limits }) =>
      riskProfileOut(await updateAgentRiskProfile(call, agentId, limits)),
    { strict: true },
  ),
};
