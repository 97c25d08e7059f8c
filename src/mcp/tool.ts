import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { DomainError } from '../../domain/shared/errors';
import type { Call, PublicCall } from '../application/call';
import type { RateLimitGroup } from '../application/rate-limits';
import type { AuthMode } from '../auth/principal';
import {
  type Endpoint,
  headerField,
  openApiPath,
  pathFields,
  type RestRoute,
  type RoutedEndpoint,
} from '../endpoints/endpoint';

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
  /**
   * The group of one call when the route it stands for depends on its arguments: a placement tool's `dry_run`
   * is its preview route, which counts in `general` as REST counts it, not in `orders` (a preview is not an order,
   * spec "Limits"). Absent: `rateLimitGroup`.
   */
  rateLimitGroupOf?: (args: z.output<I>) => RateLimitGroup;
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
 * The stdio door's REST request for a tool that serves a routed endpoint, made from the tool's arguments as the
 * route reads them: each `:name` of the path from the argument of that name (URI-encoded), the declared headers
 * from their fields (`idempotency-key` from `idempotency_key`), and the other arguments as the query (a route with
 * a querystring) or the body (a route with a body); arguments of the tool alone (`confirm`) go nowhere else.
 */
export const restOf =
  (route: RestRoute) =>
  (args: Record<string, unknown>, http: RestClient): Promise<unknown> => {
    const inPath = pathFields(route.path);
    const headerNames = route.headers ? Object.keys(route.headers.shape) : [];
    const fields = new Set([...inPath, ...headerNames.map(headerField)]);
    const rest = Object.fromEntries(Object.entries(args).filter(([k]) => !fields.has(k)));
    return http({
      method: route.method,
      path: route.path.replace(/:(\w+)/g, (_, k: string) => encodeURIComponent(String(args[k]))),
      ...(route.querystring ? { query: rest as RestRequest['query'] } : {}),
      ...(route.body ? { body: rest } : {}),
      ...(route.headers
        ? {
            headers: Object.fromEntries(
              headerNames.map((h) => [h, args[headerField(h)] as string | undefined]),
            ),
          }
        : {}),
    });
  };

/** The `routes` entry of a REST route (`POST /battles/{id}/trade/order`). */
const routeName = (route: RestRoute): ToolDef['routes'][number] =>
  `${route.method} ${openApiPath(route.path)}` as ToolDef['routes'][number];

/**
 * The schemas and in-venue `run` of a tool that serves an endpoint of `src/endpoints/` as its REST route does,
 * for the authenticated caller; a tool may narrow the input (`confirm: true`) since the endpoint reads only its own
 * fields. For an endpoint with a `route`, also the tool's `routes` and its stdio binding `rest` ({@link restOf}).
 */
export function servesEndpoint<I extends z.ZodObject, O extends z.ZodObject>(
  e: RoutedEndpoint<I, O>,
): Pick<ToolDef<I, O>, 'input' | 'output' | 'run' | 'routes' | 'rest'>;
export function servesEndpoint<I extends z.ZodObject, O extends z.ZodObject>(
  e: Endpoint<I, O>,
): Pick<ToolDef<I, O>, 'input' | 'output' | 'run'>;
export function servesEndpoint<I extends z.ZodObject, O extends z.ZodObject>(
  e: Endpoint<I, O>,
): Pick<ToolDef<I, O>, 'input' | 'output' | 'run'> & Partial<Pick<ToolDef<I, O>, 'routes' | 'rest'>> {
  return {
    input: e.input,
    output: e.output,
    run: (call, args) => e.run(authed(call), args),
    ...(e.route ? { routes: [routeName(e.route)], rest: restOf(e.route) } : {}),
  };
}

/**
 * As {@link servesEndpoint}, for a tool that answers the endpoint's output under one key (`{ order: … }`), the
 * tool output being an object: in the venue and over REST alike.
 */
export const servesEndpointAs = <K extends string, I extends z.ZodObject, O extends z.ZodType>(
  key: K,
  e: RoutedEndpoint<I, O>,
): Pick<ToolDef<I, z.ZodObject<Record<K, O>>>, 'input' | 'output' | 'run' | 'routes' | 'rest'> => {
  const rest = restOf(e.route);
  const under = (value: unknown) => ({ [key]: value }) as Record<K, never>;
  return {
    input: e.input,
    output: z.object({ [key]: e.output } as Record<K, O>),
    run: async (call, args) => under(await e.run(authed(call), args)),
    routes: [routeName(e.route)],
    rest: async (args, http) => under(await rest(args, http)),
  };
};

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
/** Annotations of a write that sets a state (an update, a cancel): repeating it changes nothing more. */
export const IDEMPOTENT_WRITE: ToolDef['annotations'] = { ...WRITE, idempotentHint: true };
/** Annotations of a write that may destroy state (reset, cancel all, delete): needs `confirm: true`. */
export const DESTRUCTIVE: ToolDef['annotations'] = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: false,
};
