import { z } from 'zod';
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
  regeneratedKeyOut,
  signingSecretOut,
  updateAgentBody,
} from '../contract/agent';
import { riskProfileOut, riskProfileResponse, riskProfileSchema } from '../contract/common';
import { endpoint } from './endpoint';

/**
 * The agent endpoints (spec "Agent endpoints"): `/agents/*` and the agents MCP toolset serve these. Each parses
 * into its use case of `src/application/agents.ts` and presents with `src/contract/agent.ts`.
 */
/** An endpoint on one agent (`/agents/{agent_id}/...`): the use case on the agent id, presented with `present`. */
const onAgent = <O extends z.ZodType, R>(
  output: O,
  useCase: (call: Call, agentId: string) => Promise<R>,
  present: (outcome: R) => z.input<O>,
) =>
  endpoint({
    input: agentIdParams,
    output,
    run: async (call, a) => present(await useCase(call, a.agent_id)),
  });

export const agentEndpoints = {
  list: endpoint({
    input: listAgentsQuery,
    output: agentListResponse,
    run: async (call, q) => {
      const page = await listAgents(call, {
        includeArchived: q.include_archived,
        limit: q.limit,
        offset: q.offset,
      });
      return { agents: page.agents.map(agentOut), total: page.total };
    },
  }),
  get: onAgent(agentResponse, getAgent, agentOut),
  create: endpoint({
    input: createAgentBody,
    output: createdAgentResponse,
    run: async (call, b) => createdAgentOut(await createAgent(call, createAgentInputOf(b))),
  }),
  /** The REST door answers 204 with no body; the MCP tool this confirmation. */
  delete: endpoint({
    input: agentIdParams,
    output: z.object({ agent_id: z.string(), deleted: z.literal(true) }),
    run: async (call, a) => {
      await deleteAgent(call, a.agent_id);
      return { agent_id: a.agent_id, deleted: true as const };
    },
  }),
  update: endpoint({
    input: agentIdParams.extend(updateAgentBody.shape).strict(),
    output: agentResponse,
    run: async (call, a) => {
      const { agent_id: agentId, ...body } = a;
      return agentStateOut(await updateAgent(call, agentId, agentChangesOf(body)));
    },
  }),
  clone: endpoint({
    input: agentIdParams.extend(cloneQuery.shape),
    output: createdAgentResponse,
    run: async (call, a) => createdAgentOut(await cloneAgent(call, a.agent_id, a.new_name)),
  }),
  reset: onAgent(agentResponse, resetAgent, agentStateOut),
  archive: onAgent(agentResponse, archiveAgent, agentStateOut),
  apiKey: onAgent(agentKeyResponse, revealAgentKey, agentKeyOut),
  regenerateKey: onAgent(agentKeyResponse, regenerateAgentKey, regeneratedKeyOut),
  signingSecret: onAgent(agentSigningSecretResponse, issueAgentSigningSecret, signingSecretOut),
  riskProfile: onAgent(riskProfileResponse, agentRiskProfile, riskProfileOut),
  setRiskProfile: endpoint({
    input: agentIdParams.extend(riskProfileSchema.shape).strict(),
    output: riskProfileResponse,
    run: async (call, a) => {
      const { agent_id: agentId, ...limits } = a;
      return riskProfileOut(await updateAgentRiskProfile(call, agentId, limits));
    },
  }),
};
