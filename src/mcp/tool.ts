import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { DomainError } from '../../domain/shared/errors';
import type { Call, PublicCall } from '../application/call';
import type { RateLimitGroup } from '../application/rate-limits';
import type { AuthMode } from '../auth/principal';
import type { Endpoint } from '../endpoints/endpoint';

/**
 * One MCP tool of the venue (docs/mcp.md): its name, schemas, annotations and description — shared by both
 * transports — and its two bindings: `run`, the use case of `src/application/` the in-venue door (Streamable HTTP
 * at `/mcp`) calls, and `rest`, the public REST call(s) the stdio door (`ptv mcp`) makes. Both bindings answer the
 * same output schema, so a tool cannot drift from its endpoint.
 */

/** The toolsets a host may enable one by one (`--toolsets`). */
export const TOOLSETS = [
  'market',
  'trading',
  'account',
  'backtest',
  'analytics',
  'battle',
  'agents',
  'webhooks',
] as const;
export type Toolset = (typeof TOOLSETS)[number];

/** The call a tool runs in: a public call, with the authenticated caller unless the tool is public. */
export type ToolCall = PublicCall & { readonly caller?: Call['caller'] };

/** The authenticated call of a key-or-JWT or JWT tool (the registry authenticates before `run`). */
export const authed = (call: ToolCall): Call => {
  if (!call.caller) throw new DomainError('INTERNAL_ERROR', 'an authenticated tool ran without a caller');
  return call as Call;
};

/** A request to the public REST API (paths under `/api/v1`). */
export interface RestRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** Query parameters; undefined values are left out, arrays joined with commas. */
  query?: Record<string, string | number | boolean | readonly string[] | undefined | null>;
  body?: unknown;
  headers?: Record<string, string | undefined>;
}

/** Sends a REST request and answers its JSON body; throws {@link VenueError} with the envelope on an error status. */
export type RestClient = (request: RestRequest) => Promise<unknown>;

/** A venue error envelope received over REST (`{ error: { code, message, details } }`) and its HTTP status. */
export class VenueError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'VenueError';
  }
}

/** A tool of the registry; `I`/`O` are zod object schemas from `src/contract/` (or built from them). */
export interface ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  /** `verb_noun`, snake case. */
  name: string;
  title: string;
  /** What it does, its units and its errors, in one or two sentences an LLM can act on. */
  description: string;
  toolset: Toolset;
  /**
   * The REST routes of `/api/v1` the tool stands for, as the OpenAPI document writes them (`GET /battles/{id}`):
   * test/mcp/coverage.int.test.ts checks that every route has a tool (or a reason in `src/mcp/coverage.ts`) and
   * that every route named here exists.
   */
  routes: readonly `${RestRequest['method']} /${string}`[];
  input: I;
  output: O;
  annotations: Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>;
  /** Credentials the tool needs, as its REST route: `public`, `key-or-jwt` (`X-API-Key` or bearer), `jwt`. */
  auth: AuthMode;
  /** The rate-limit group its REST route counts in (spec "Limits"). */
  rateLimitGroup: RateLimitGroup;
  /** In the venue: calls the use case (never the route) and presents with the route's presenter. */
  run: (call: ToolCall, args: z.output<I>) => Promise<z.input<O>>;
  /** Over REST (stdio door): the endpoint(s) the tool wraps. */
  rest: (args: z.output<I>, http: RestClient) => Promise<unknown>;
  /** A one-line summary of a result for the text content (figures only, never text a user wrote). */
  summary: (result: z.output<O>) => string;
}

/** Declares a tool with its input and output types inferred from its schemas. */
export const defineTool = <I extends z.ZodObject, O extends z.ZodObject>(tool: ToolDef<I, O>): ToolDef =>
  tool as unknown as ToolDef;

/**
 * The schemas and in-venue `run` of a tool that serves an endpoint of `src/endpoints/` as its REST route does,
 * for the authenticated caller; a tool may narrow the input (`confirm: true`) since the endpoint reads only its own
 * fields.
 */
export const servesEndpoint = <I extends z.ZodObject, O extends z.ZodObject>(
  e: Endpoint<I, O>,
): Pick<ToolDef<I, O>, 'input' | 'output' | 'run'> => ({
  input: e.input,
  output: e.output,
  run: (call, args) => e.run(authed(call), args),
});

/** Annotations of a read: read-only, idempotent, closed world (the venue only). */
export const READ: ToolDef['annotations'] = {
  readOnlyHint: true,
  idempotentHint: true,
  openWorldHint: false,
};
/** Annotations of a write that adds (an order, a session): not idempotent unless keyed. */
export const WRITE: ToolDef['annotations'] = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};
/** Annotations of a write that may destroy state (reset, cancel all, delete): needs `confirm: true`. */
export const DESTRUCTIVE: ToolDef['annotations'] = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: false,
};
