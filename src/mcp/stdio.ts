import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { DomainError } from '../../domain/shared/errors';
import { selectTools } from './registry';
import { buildMcpCatalog, createMcpServer, type McpResources } from './server';
import { utf8Lines } from './stdio-utf8';
import type { Toolset } from './tool';
import { type RestClient, type RestRequest, VenueError } from './tool';

/**
 * The stdio MCP server (`ptv mcp`): a thin client of a running venue's public REST API, local or remote, sharing
 * the registry's tool definitions (names, schemas, descriptions, annotations) with the in-venue `/mcp`; each tool
 * makes the REST call(s) it wraps (`ToolDef.rest`). A venue error answers the tool with the envelope it sent.
 */

/** Where and as whom the stdio server calls the venue. */
export interface StdioOptions {
  /** The venue's address, `http://host:port` (a trailing `/api/v1` is accepted). */
  baseUrl: string;
  /** `X-API-Key` (an account or agent key). */
  apiKey?: string | undefined;
  /** A JWT (`Authorization: Bearer`), for JWT-only tools and resources; used when no key is given. */
  token?: string | undefined;
  /** `X-Agent-Id`: act for this agent of the account. */
  agentId?: string | undefined;
  toolsets: readonly Toolset[];
  /** Milliseconds before a REST call is abandoned (default 30,000). */
  timeoutMs?: number;
}

const queryString = (query: RestRequest['query']): string => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null) continue;
    params.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
};

/** The REST client of the stdio server: JSON in and out, the envelope of an error status thrown as a VenueError. */
export const restClient = (options: Omit<StdioOptions, 'toolsets'>): RestClient => {
  const api = `${options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '')}/api/v1`;
  const credentials: Record<string, string> = {
    ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
    ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    ...(options.agentId ? { 'x-agent-id': options.agentId } : {}),
  };
  return async (request) => {
    const headers: Record<string, string> = { ...credentials, accept: 'application/json' };
    for (const [k, v] of Object.entries(request.headers ?? {})) if (v !== undefined) headers[k] = v;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(`${api}${request.path}${queryString(request.query)}`, {
        method: request.method,
        headers,
        ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
    } catch (error) {
      throw new VenueError(
        503,
        'SERVICE_UNAVAILABLE',
        `the venue at ${api} cannot be reached: ${String(error)}`,
      );
    }
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    const body: unknown = type.includes('json') && text ? JSON.parse(text) : text;
    if (response.ok) return body;
    const e = (body as { error?: { code?: string; message?: string; details?: Record<string, unknown> } })
      ?.error;
    throw new VenueError(
      response.status,
      e?.code ?? 'INTERNAL_ERROR',
      e?.message ?? `HTTP ${response.status}`,
      e?.details,
    );
  };
};

/** The resources over REST: the scoped agent's skill.md (`GET /agents/{id}/skill.md` needs a JWT, as in REST). */
const restResources = (http: RestClient): McpResources => ({
  skill: async () => {
    const info = (await http({ method: 'GET', path: '/account/info' })) as { agent_id: string | null };
    if (!info.agent_id) {
      throw new DomainError(
        'VALIDATION_ERROR',
        'skill.md is an agent’s: start with an agent key or PTV_AGENT_ID',
      );
    }
    return String(
      await http({ method: 'GET', path: `/agents/${encodeURIComponent(info.agent_id)}/skill.md` }),
    );
  },
});

/**
 * Serves MCP on stdin/stdout until the input closes. Nothing else may write to stdout. A stdin line that is not
 * UTF-8 is answered with a JSON-RPC parse error and never reaches a tool ({@link utf8Lines}).
 */
export const runStdio = async (options: StdioOptions): Promise<void> => {
  const http = restClient(options);
  const server = createMcpServer(
    buildMcpCatalog(selectTools(options.toolsets)),
    (tool, args) => tool.rest(args as never, http),
    restResources(http),
  );
  await server.connect(new StdioServerTransport(utf8Lines(process.stdin, process.stdout), process.stdout));
};
