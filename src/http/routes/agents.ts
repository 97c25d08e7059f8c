import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { agentNotOwned } from '../../../domain/agent/decide';
import type { AgentProfileFields } from '../../../domain/agent/events';
import type { ReadModels } from '../../../projections/read-models';
import { type AgentView, getAgent, listAgents } from '../../../queries/agents';
import { syncWalletToOwner } from '../../application/wallet-sync';
import { identity } from '../../auth/install';
import { principalOf } from '../../auth/plugin';
import type { Principal } from '../../auth/principal';
import {
  agentIdParams,
  agentKeyResponse,
  agentListResponse,
  agentOut,
  agentResponse,
  agentStateOut,
  cloneQuery,
  createAgentBody,
  createdAgentResponse,
  listAgentsQuery,
  overviewQuery,
  updateAgentBody,
} from '../../contract/agent';
import {
  errorResponses,
  riskProfileOut,
  riskProfileResponse,
  riskProfileSchema,
} from '../../contract/common';
import { awaitReadModels } from '../read-your-writes';
import { renderSkill } from '../skill/render-skill';

/** Every agent endpoint: JWT only (spec "Authentication" rule 3), rate group `management` (600 per minute). */
const jwtOnly = { auth: 'jwt', rateLimitGroup: 'management' } as const;
const security = [{ bearer: [] }];
const tags = ['agents'];

/**
 * An agent of the caller's account from the read model: unknown or another account's → `PERMISSION_DENIED` 403,
 * the same error for both (ARCHITECTURE §12; `agentNotOwned`).
 */
const ownedAgent = async (
  db: Kysely<ReadModels>,
  principal: Principal,
  agentId: string,
): Promise<AgentView> => {
  const agent = await getAgent(db, agentId);
  if (!agent || agent.accountId !== principal.accountId) throw agentNotOwned();
  return agent;
};

const meta = (principal: Principal, requestId: string) => ({ actor: principal.accountId, requestId });

/** Only the fields the client sent (`undefined` means "leave unchanged", `null` clears). */
const suppliedChanges = (body: z.infer<typeof updateAgentBody>): Partial<AgentProfileFields> =>
  Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as Partial<AgentProfileFields>;

/**
 * The 14 agent endpoints (spec "Agent endpoints"; ARCHITECTURE §4, §12, §14b): create, list, overview, get,
 * update, clone, reset, archive, delete, api-key, regenerate-key, risk profile get/put and `skill.md`.
 * Commands answer after the read models include them (read your writes).
 */
export const agentRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = () => app.services.database.db;

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
      const principal = principalOf(request);
      const b = request.body;
      const result = await identity(app.services).agents.create(
        principal.accountId,
        {
          displayName: b.display_name,
          ...(b.starting_balance !== undefined ? { startingBalance: b.starting_balance } : {}),
          ...(b.llm_model !== undefined ? { llmModel: b.llm_model } : {}),
          ...(b.framework !== undefined ? { framework: b.framework } : {}),
          ...(b.strategy_tags !== undefined ? { strategyTags: b.strategy_tags } : {}),
          ...(b.risk_profile !== undefined ? { riskProfile: b.risk_profile } : {}),
          ...(b.color !== undefined ? { color: b.color } : {}),
          ...(b.avatar_url !== undefined ? { avatarUrl: b.avatar_url } : {}),
        },
        meta(principal, request.id),
      );
      await awaitReadModels(app.services, reply, result.position);
      return reply.status(201).send({
        agent_id: result.agent.agentId,
        api_key: result.apiKey,
        display_name: result.agent.profile.display_name,
        starting_balance: result.agent.startingBalance,
      });
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
      const page = await listAgents(db(), principalOf(request).accountId, {
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
      const page = await listAgents(db(), principalOf(request).accountId, {
        includeArchived: false,
        limit: request.query.limit,
        offset: request.query.offset,
      });
      return { agents: page.agents.map(agentOut), total: page.total };
    },
  );

  app.get(
    '/agents/:agent_id',
    {
      config: jwtOnly,
      schema: {
        tags,
        security,
        summary: 'One agent of the account',
        params: agentIdParams,
        response: { 200: agentResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => agentOut(await ownedAgent(db(), principalOf(request), request.params.agent_id)),
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
    async (request, reply) => {
      const principal = principalOf(request);
      const result = await identity(app.services).agents.update(
        principal.accountId,
        request.params.agent_id,
        suppliedChanges(request.body),
        meta(principal, request.id),
      );
      await awaitReadModels(app.services, reply, result.position);
      return agentStateOut(result.agent);
    },
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
      const principal = principalOf(request);
      const result = await identity(app.services).agents.clone(
        principal.accountId,
        request.params.agent_id,
        request.query.new_name,
        meta(principal, request.id),
      );
      await awaitReadModels(app.services, reply, result.position);
      return reply.status(201).send({
        agent_id: result.agent.agentId,
        api_key: result.apiKey,
        display_name: result.agent.profile.display_name,
        starting_balance: result.agent.startingBalance,
      });
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
      async (request, reply) => {
        const principal = principalOf(request);
        const { agents } = identity(app.services);
        const run = action === 'reset' ? agents.reset : agents.archive;
        const result = await run(principal.accountId, request.params.agent_id, meta(principal, request.id));
        await awaitReadModels(app.services, reply, result.position);
        if (action === 'reset' && app.services.trading) {
          // The spec's reset cancels the orders and restores the balance: do it before answering, not on the
          // agent's next trading request, so an immediate read sees no open order and no lock.
          await syncWalletToOwner(
            app.services,
            { accountId: principal.accountId, agentId: request.params.agent_id },
            meta(principal, request.id),
          );
        }
        return agentStateOut(result.agent);
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
      const principal = principalOf(request);
      const { position } = await identity(app.services).agents.remove(
        principal.accountId,
        request.params.agent_id,
        meta(principal, request.id),
      );
      await awaitReadModels(app.services, reply, position);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/agents/:agent_id/api-key',
    {
      config: jwtOnly,
      schema: {
        tags,
        security,
        summary: "The agent's full API key",
        params: agentIdParams,
        response: { 200: agentKeyResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { apiKey, agent } = await identity(app.services).agents.revealKey(
        principal.accountId,
        request.params.agent_id,
      );
      return {
        agent_id: agent.agentId,
        api_key: apiKey,
        api_key_preview: agent.apiKeyPreview,
        message: 'Send it as X-API-Key. Keep it secret; POST /agents/{agent_id}/regenerate-key replaces it.',
      };
    },
  );

  app.post(
    '/agents/:agent_id/regenerate-key',
    {
      config: jwtOnly,
      schema: {
        tags,
        security,
        summary: 'Replace the key; the old key is refused from now on (401)',
        params: agentIdParams,
        response: { 200: agentKeyResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const result = await identity(app.services).agents.regenerateKey(
        principal.accountId,
        request.params.agent_id,
        meta(principal, request.id),
      );
      await awaitReadModels(app.services, reply, result.position);
      return {
        agent_id: result.agent.agentId,
        api_key: result.apiKey,
        api_key_preview: result.agent.apiKeyPreview,
        message: 'New key issued; the previous key no longer works.',
      };
    },
  );

  app.get(
    '/agents/:agent_id/risk-profile',
    {
      config: jwtOnly,
      schema: {
        tags,
        security,
        summary: 'The effective risk limits of the agent',
        params: agentIdParams,
        response: { 200: riskProfileResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) =>
      riskProfileOut((await ownedAgent(db(), principalOf(request), request.params.agent_id)).riskProfile),
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
    async (request, reply) => {
      const principal = principalOf(request);
      const result = await identity(app.services).agents.updateRiskProfile(
        principal.accountId,
        request.params.agent_id,
        request.body,
        meta(principal, request.id),
      );
      await awaitReadModels(app.services, reply, result.position);
      return riskProfileOut(result.agent.riskProfile!);
    },
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
      const principal = principalOf(request);
      const { apiKey, agent } = await identity(app.services).agents.revealKey(
        principal.accountId,
        request.params.agent_id,
      );
      const markdown = renderSkill({
        agentId: agent.agentId,
        accountId: agent.accountId,
        name: agent.profile.display_name,
        apiKey,
        apiKeyPreview: agent.apiKeyPreview,
        status: agent.status === 'archived' ? 'archived' : 'active',
        startingBalance: agent.startingBalance,
        riskProfile: agent.riskProfile!,
        baseUrl: `${request.protocol}://${request.host}/api/v1`,
      });
      return reply
        .type('text/markdown; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-disposition', `inline; filename="skill.md"`)
        .send(markdown);
    },
  );
};
