import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/shared/errors';
import { agentSkill } from '../application/agents';
import { newCall, newPublicCall } from '../application/call';
import { consumeRateLimit, rateLimitExceeded } from '../application/rate-limits';
import { logFailure } from '../http/errors';
import { envelopeOf, failureOf } from './errors';
import { selectTools } from './registry';
import { buildMcpCatalog, createMcpServer, type Invoke, type McpResources } from './server';
import type { ToolDef } from './tool';

/**
 * The MCP server mounted in the venue at `/mcp` (Streamable HTTP, stateless: each POST is answered by a fresh
 * server on its own transport, as JSON, over the tool catalog built once at start). Credentials come with each request as for REST (`X-API-Key` or
 * `Authorization: Bearer`, `X-Agent-Id`) and are checked per tool call with the tool's auth mode, so a host can
 * list tools and read market data without one. Each call counts in its REST route's rate-limit group under the
 * caller's wallet owner (the same budget as REST), and runs the tool's use case in this process — never the
 * route, never HTTP to itself.
 */

/**
 * Runs a tool for one HTTP request: rate limit, authentication, then the use case. A failure is logged as the REST
 * door logs its answers (`logFailure`: a server fault at `error` with its stack, a 503 at `warn`, a refusal at
 * `info`) and thrown on to become the tool error result.
 */
const invokerFor =
  (app: FastifyInstance, request: FastifyRequest): Invoke =>
  async (tool: ToolDef, args: unknown) => {
    try {
      return await runTool(app, request, tool, args);
    } catch (error) {
      logFailure(request.log, failureOf(error), error, { tool: tool.name });
      throw error;
    }
  };

/** The rate limit, authentication and use case of one tool call (see {@link invokerFor}). */
const runTool = async (app: FastifyInstance, request: FastifyRequest, tool: ToolDef, args: unknown) => {
  const services = app.services;
  const identity = await services.rateLimitIdentity?.(request, tool.auth);
  const group = tool.rateLimitGroupOf?.(args as never) ?? tool.rateLimitGroup;
  const decision = await consumeRateLimit(services, identity ?? `ip:${request.ip}`, group);
  if (!decision.allowed) throw rateLimitExceeded(decision);
  if (tool.auth === 'public') return tool.run(newPublicCall(services, request.id), args as never);
  if (!services.auth) throw new DomainError('SERVICE_UNAVAILABLE', 'authentication is not available');
  const caller = await services.auth.authenticate(request, tool.auth);
  return tool.run(newCall(services, caller, request.id), args as never);
};

/** The resources for one HTTP request: the scoped agent's skill.md, with this venue's address as the caller used. */
const resourcesFor = (app: FastifyInstance, request: FastifyRequest): McpResources => ({
  skill: async () => {
    const services = app.services;
    if (!services.auth) throw new DomainError('SERVICE_UNAVAILABLE', 'authentication is not available');
    const caller = await services.auth.authenticate(request, 'key-or-jwt');
    if (!caller.agentId) {
      throw new DomainError(
        'VALIDATION_ERROR',
        'skill.md is an agent’s: use an agent key, or a JWT or account key with X-Agent-Id',
      );
    }
    const baseUrl = `${request.protocol}://${request.host}/api/v1`;
    return agentSkill(newCall(services, caller, request.id), caller.agentId, baseUrl);
  },
});

const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
  reply
    .status(405)
    .header('allow', 'POST')
    .send(
      envelopeOf(
        new DomainError(
          'VALIDATION_ERROR',
          'this MCP endpoint is stateless: send JSON-RPC requests with POST; there is no session or event stream',
          undefined,
          405,
        ),
      ),
    );

/** The `/mcp` routes (registered at the root, beside `/health`). */
export const mcpRoutes: FastifyPluginAsync = async (app) => {
  // Built once: each stateless POST gets a fresh server and transport, but only handlers over this catalog.
  const catalog = buildMcpCatalog(selectTools());
  // JSON-RPC, not REST: described by its tool list (docs/mcp.md), not in the venue's OpenAPI document.
  const hidden = { schema: { hide: true } };
  app.post('/mcp', hidden, async (request, reply) => {
    const server = createMcpServer(catalog, invokerFor(app, request), resourcesFor(app, request));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    // The SDK writes the response itself: what the venue's hooks put on the reply so far (security headers, the
    // request id) must reach the raw response first, or a hijacked reply goes out without them.
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value);
    }
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });
  app.get('/mcp', hidden, notAllowed);
  app.delete('/mcp', hidden, notAllowed);
};
