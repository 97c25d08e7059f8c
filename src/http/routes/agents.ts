import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { agentSkill } from '../../application/agents';
import { agentIdParams } from '../../contract/agent';
import { errorResponses } from '../../contract/common';
import { agentEndpoints as ep } from '../../endpoints/agents';
import { callOf } from '../call';
import { routeGroup, serveAll } from './route-options';

/** Every agent endpoint: JWT only (spec "Authentication" rule 3), rate group `management` (600 per minute). */
const route = routeGroup('agents', { auth: 'jwt', rateLimitGroup: 'management' });

/** The errors every agent route can answer. */
const errors = [401, 403, 422, 429];

/**
 * The agent endpoints (spec "Agent endpoints"; ARCHITECTURE §4, §12, §14b): create, list, overview, get,
 * update, clone, reset, archive, delete, api-key, regenerate-key, signing-secret, risk profile get/put and
 * `skill.md`.
 * Each serves its endpoint of `src/endpoints/agents.ts` (`skill.md` calls its use case).
 */
export const agentRoutes: FastifyPluginAsyncZod = async (app) => {
  serveAll(app, route, ep, errors, {
    create: 'Create an agent with its own key, balance and risk profile (at most 100 per account)',
    list: "List the account's agents (archived ones only with include_archived=true)",
    overview: 'Active agents for a dashboard (same shape as the list; archived agents always excluded)',
    get: 'One agent of the account',
    update: 'Partial update: only supplied fields change (null clears an optional label)',
    clone: 'Copy risk profile, tags, model and framework into a new agent with a fresh balance and key',
    reset: 'Reset: a new session at the starting balance, status active; trade history kept',
    archive: 'Archive: data kept, key refused for new trading requests, hidden from default lists',
    delete: {
      summary: 'Delete the agent for good: its streams, read models and key material (204, no body)',
      description:
        'An agent in a running (active or paused) live battle: `BATTLE_INVALID_STATE` 409 ' +
        '(`details.reason` `agent_in_running_battle`, `details.battle_id`); stop or cancel the battle first.',
      errors: [401, 403, 409, 422, 429],
    },
    apiKey: "The agent's full API key",
    regenerateKey: 'Replace the key; the old key is refused from now on (401)',
    signingSecret:
      "A new HMAC signing secret for the agent's key (shown once; the previous one stops verifying)",
    riskProfile: 'The effective risk limits of the agent',
    setRiskProfile:
      "Replace the agent's risk limits (the spec's three required; max_order_size_pct optional, kept when " +
      'omitted); applies to its next order',
  });

  app.get(
    '/agents/:agent_id/skill.md',
    route('A Markdown guide for the agent with its key injected (text/markdown)', {
      params: agentIdParams,
      produces: ['text/markdown'],
      response: { 200: z.string().describe('Markdown'), ...errorResponses(...errors) },
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
