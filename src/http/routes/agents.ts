import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  agentRiskProfile,
  agentSkill,
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
} from '../../application/agents';
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
} from '../../contract/agent';
import {
  errorResponses,
  riskProfileOut,
  riskProfileResponse,
  riskProfileSchema,
} from '../../contract/common';
import { callOf } from '../call';

/** Every agent endpoint: JWT only (spec "Authentication" rule 3), rate group `management` (600 per minute). */
const jwtOnly = { auth: 'jwt', rateLimitGroup: 'management' } as const;
const security = [{ bearer: [] }];
const tags = ['agents'];

/**
 * The options of a route on one agent (`/agents/:agent_id...`) answering 200 with `response`: JWT only, the agent
 * id parameter, the errors every such route can answer.
 */
const oneAgentRoute = <R extends z.ZodType>(summary: string, response: R) =>
  ({
    config: jwtOnly,
    schema: {
      tags,
      security,
      summary,
      params: agentIdParams,
      response: { 200: response, ...errorResponses(401, 403, 422, 429) },
    },
  }) as const;

/**
 * The agent endpoints (spec "Agent endpoints"; ARCHITECTURE §4, §12, §14b): create, list, overview, get,
 * update, clone, reset, archive, delete, api-key, regenerate-key, signing-secret, risk profile get/put and
 * `skill.md`.
 * Each parses, calls its use case in `src/application/agents.ts` and presents.
 */
export const agentRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/agents',
    {
      config: jwtOnly,
      schema: {
        tags,
        security,
        summary: 'Create an agent with its own key, balance and risk profile (at most 100 per account)',
        body: createAgentBody,
        response: { 201: createdAgentResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request, reply) => {
      const agent = await createAgent(callOf(request), createAgentInputOf(request.body));
      return reply.status(201).send(createdAgentOut(agent));
    },
  );

  app.get(
    '/agents',
    {
      config: jwtOnly,
      schema: {
        tags,
        security,
        summary: "List the account's agents (archived ones only with include_archived=true)",
        querystring: listAgentsQuery,
        response: { 200: agentListResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await listAgents(callOf(request), {
        includeArchived: q.include_archived,
        limit: q.limit,
        offset: q.offset,
      });
      return { agents: page.agents.map(agentOut), total: page.total };
    },
  );

  app.get(
    '/agents/overview',
    {
      config: jwtOnly,
      schema: {
        tags,
        security,
        summary: 'Active agents for a dashboard (same shape as the list; archived agents always excluded)',
        querystring: overviewQuery,
        response: { 200: agentListResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await listAgents(callOf(request), {
        includeArchived: false,
        limit: q.limit,
        offset: q.offset,
      });
      return { agents: page.agents.map(agentOut), total: page.total };
    },
  );

  app.get('/agents/:agent_id', oneAgentRoute('One agent of the account', agentResponse), async (request) =>
    agentOut(await getAgent(callOf(request), request.params.agent_id)),
  );

  app.put(
    '/agents/:agent_id',
    {
      config: jwtOnly,
      schema: {
        tags,
        security,
        summary: 'Partial update: only supplied fields change (null clears an optional label)',
        params: agentIdParams,
        body: updateAgentBody,
        response: { 200: agentResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) =>
      agentStateOut(
        await updateAgent(callOf(request), request.params.agent_id, agentChangesOf(request.body)),
      ),
  );

  app.post(
    '/agents/:agent_id/clone',
    {
      config: jwtOnly,
      schema: {
        tags,
        security,
        summary: 'Copy risk profile, tags, model and framework into a new agent with a fresh balance and key',
        params: agentIdParams,
        querystring: cloneQuery,
        response: { 201: createdAgentResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request, reply) => {
      const agent = await cloneAgent(callOf(request), request.params.agent_id, request.query.new_name);
      return reply.status(201).send(createdAgentOut(agent));
    },
  );

  for (const action of ['reset', 'archive'] as const) {
    app.post(
      `/agents/:agent_id/${action}`,
      {
        config: jwtOnly,
        schema: {
          tags,
          security,
          summary:
            action === 'reset'
              ? 'Reset: a new session at the starting balance, status active; trade history kept'
              : 'Archive: data kept, key refused for new trading requests, hidden from default lists',
          params: agentIdParams,
          response: { 200: agentResponse, ...errorResponses(401, 403, 422, 429) },
        },
      },
      async (request) => {
        const call = callOf(request);
        const agentId = request.params.agent_id;
        return agentStateOut(
          action === 'reset' ? await resetAgent(call, agentId) : await archiveAgent(call, agentId),
        );
      },
    );
  }

  app.delete(
    '/agents/:agent_id',
    {
      config: jwtOnly,
      schema: {
        tags,
        security,
        summary: 'Delete the agent for good: its streams, read models and key material (204, no body)',
        description:
          'An agent in a running (active or paused) live battle: `BATTLE_INVALID_STATE` 409 ' +
          '(`details.reason` `agent_in_running_battle`, `details.battle_id`); stop or cancel the battle first.',
        params: agentIdParams,
        response: { 204: z.null().describe('no body'), ...errorResponses(401, 403, 409, 422, 429) },
      },
    },
    async (request, reply) => {
      await deleteAgent(callOf(request), request.params.agent_id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/agents/:agent_id/api-key',
    oneAgentRoute("The agent's full API key", agentKeyResponse),
    async (request) => agentKeyOut(await revealAgentKey(callOf(request), request.params.agent_id)),
  );

  app.post(
    '/agents/:agent_id/regenerate-key',
    oneAgentRoute('Replace the key; the old key is refused from now on (401)', agentKeyResponse),
    async (request) => regeneratedKeyOut(await regenerateAgentKey(callOf(request), request.params.agent_id)),
  );

  app.post(
    '/agents/:agent_id/signing-secret',
    oneAgentRoute(
      "A new HMAC signing secret for the agent's key (shown once; the previous one stops verifying)",
      agentSigningSecretResponse,
    ),
    async (request) =>
      signingSecretOut(await issueAgentSigningSecret(callOf(request), request.params.agent_id)),
  );

  app.get(
    '/agents/:agent_id/risk-profile',
    oneAgentRoute('The effective risk limits of the agent', riskProfileResponse),
    async (request) => riskProfileOut(await agentRiskProfile(callOf(request), request.params.agent_id)),
  );

  app.put(
    '/agents/:agent_id/risk-profile',
    {
      config: jwtOnly,
      schema: {
        tags,
        security,
        summary:
          "Replace the agent's risk limits (the spec's three required; max_order_size_pct optional, kept when " +
          'omitted); applies to its next order',
        params: agentIdParams,
        body: riskProfileSchema,
        response: { 200: riskProfileResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) =>
      riskProfileOut(await updateAgentRiskProfile(callOf(request), request.params.agent_id, request.body)),
  );

  app.get(
    '/agents/:agent_id/skill.md',
    {
      config: jwtOnly,
      schema: {
        tags,
        security,
        summary: 'A Markdown guide for the agent with its key injected (text/markdown)',
        params: agentIdParams,
        produces: ['text/markdown'],
        response: { 200: z.string().describe('Markdown'), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request, reply) => {
      const baseUrl = `${request.protocol}://${request.host}/api/v1`;
      const markdown = await agentSkill(callOf(request), request.params.agent_id, baseUrl);
      return reply
        .type('text/markdown; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-disposition', `inline; filename="skill.md"`)
        .send(markdown);
    },
  );
};
