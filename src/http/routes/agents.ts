import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { agentSkill } from '../../application/agents';
import {
  agentIdParams,
  cloneQuery,
  createAgentBody,
  listAgentsQuery,
  overviewQuery,
  updateAgentBody,
} from '../../contract/agent';
import { errorResponses, riskProfileSchema } from '../../contract/common';
import { agentEndpoints as ep } from '../../endpoints/agents';
import { callOf } from '../call';
import { routeGroup } from './route-options';

/** Every agent endpoint: JWT only (spec "Authentication" rule 3), rate group `management` (600 per minute). */
const route = routeGroup('agents', { auth: 'jwt', rateLimitGroup: 'management' });

/**
 * The options of a route on one agent (`/agents/:agent_id...`) answering 200 with `response`: JWT only, the agent
 * id parameter, the errors every such route can answer.
 */
const oneAgentRoute = <R extends z.ZodType>(summary: string, response: R) =>
  route(summary, {
    params: agentIdParams,
    response: { 200: response, ...errorResponses(401, 403, 422, 429) },
  });

/**
 * The agent endpoints (spec "Agent endpoints"; ARCHITECTURE §4, §12, §14b): create, list, overview, get,
 * update, clone, reset, archive, delete, api-key, regenerate-key, signing-secret, risk profile get/put and
 * `skill.md`.
 * Each serves its endpoint of `src/endpoints/agents.ts` (`skill.md` calls its use case).
 */
export const agentRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/agents',
    route('Create an agent with its own key, balance and risk profile (at most 100 per account)', {
      body: createAgentBody,
      response: { 201: ep.create.output, ...errorResponses(401, 403, 422, 429) },
    }),
    async (request, reply) => reply.status(201).send(await ep.create.run(callOf(request), request.body)),
  );

  app.get(
    '/agents',
    route("List the account's agents (archived ones only with include_archived=true)", {
      querystring: listAgentsQuery,
      response: { 200: ep.list.output, ...errorResponses(401, 403, 422, 429) },
    }),
    async (request) => ep.list.run(callOf(request), request.query),
  );

  app.get(
    '/agents/overview',
    route('Active agents for a dashboard (same shape as the list; archived agents always excluded)', {
      querystring: overviewQuery,
      response: { 200: ep.list.output, ...errorResponses(401, 403, 422, 429) },
    }),
    async (request) => ep.list.run(callOf(request), { ...request.query, include_archived: false }),
  );

  app.get('/agents/:agent_id', oneAgentRoute('One agent of the account', ep.get.output), async (request) =>
    ep.get.run(callOf(request), request.params),
  );

  app.put(
    '/agents/:agent_id',
    route('Partial update: only supplied fields change (null clears an optional label)', {
      params: agentIdParams,
      body: updateAgentBody,
      response: { 200: ep.update.output, ...errorResponses(401, 403, 422, 429) },
    }),
    async (request) => ep.update.run(callOf(request), { ...request.params, ...request.body }),
  );

  app.post(
    '/agents/:agent_id/clone',
    route('Copy risk profile, tags, model and framework into a new agent with a fresh balance and key', {
      params: agentIdParams,
      querystring: cloneQuery,
      response: { 201: ep.clone.output, ...errorResponses(401, 403, 422, 429) },
    }),
    async (request, reply) =>
      reply.status(201).send(await ep.clone.run(callOf(request), { ...request.params, ...request.query })),
  );

  for (const action of ['reset', 'archive'] as const) {
    app.post(
      `/agents/:agent_id/${action}`,
      route(
        action === 'reset'
          ? 'Reset: a new session at the starting balance, status active; trade history kept'
          : 'Archive: data kept, key refused for new trading requests, hidden from default lists',
        {
          params: agentIdParams,
          response: { 200: ep[action].output, ...errorResponses(401, 403, 422, 429) },
        },
      ),
      async (request) => ep[action].run(callOf(request), request.params),
    );
  }

  app.delete(
    '/agents/:agent_id',
    route('Delete the agent for good: its streams, read models and key material (204, no body)', {
      description:
        'An agent in a running (active or paused) live battle: `BATTLE_INVALID_STATE` 409 ' +
        '(`details.reason` `agent_in_running_battle`, `details.battle_id`); stop or cancel the battle first.',
      params: agentIdParams,
      response: { 204: z.null().describe('no body'), ...errorResponses(401, 403, 409, 422, 429) },
    }),
    async (request, reply) => {
      await ep.delete.run(callOf(request), request.params);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/agents/:agent_id/api-key',
    oneAgentRoute("The agent's full API key", ep.apiKey.output),
    async (request) => ep.apiKey.run(callOf(request), request.params),
  );

  app.post(
    '/agents/:agent_id/regenerate-key',
    oneAgentRoute('Replace the key; the old key is refused from now on (401)', ep.regenerateKey.output),
    async (request) => ep.regenerateKey.run(callOf(request), request.params),
  );

  app.post(
    '/agents/:agent_id/signing-secret',
    oneAgentRoute(
      "A new HMAC signing secret for the agent's key (shown once; the previous one stops verifying)",
      ep.signingSecret.output,
    ),
    async (request) => ep.signingSecret.run(callOf(request), request.params),
  );

  app.get(
    '/agents/:agent_id/risk-profile',
    oneAgentRoute('The effective risk limits of the agent', ep.riskProfile.output),
    async (request) => ep.riskProfile.run(callOf(request), request.params),
  );

  app.put(
    '/agents/:agent_id/risk-profile',
    route(
      "Replace the agent's risk limits (the spec's three required; max_order_size_pct optional, kept when " +
        'omitted); applies to its next order',
      {
        params: agentIdParams,
        body: riskProfileSchema,
        response: { 200: ep.setRiskProfile.output, ...errorResponses(401, 403, 422, 429) },
      },
    ),
    async (request) => ep.setRiskProfile.run(callOf(request), { ...request.params, ...request.body }),
  );

  app.get(
    '/agents/:agent_id/skill.md',
    route('A Markdown guide for the agent with its key injected (text/markdown)', {
      params: agentIdParams,
      produces: ['text/markdown'],
      response: { 200: z.string().describe('Markdown'), ...errorResponses(401, 403, 422, 429) },
    }),
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
