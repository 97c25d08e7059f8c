import type { z } from 'zod';
import type { Call } from '../application/call';

/** The HTTP methods of the public REST API. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Where and how the REST door serves an endpoint: the method, the path under `/api/v1` in fastify's syntax
 * (`/battles/:id/trade/order`: each `:name` is an input field), the success status, and the wire schemas of the
 * request's parts, each a part of the endpoint's input, as the OpenAPI document shows them. The route hands the
 * endpoint its params, query, body and declared headers merged (a header `idempotency-key` as the field
 * `idempotency_key`); the MCP door's stdio transport makes the same request from a tool's arguments
 * (`src/mcp/tool.ts`, `restOf`).
 */
export interface RestRoute {
  readonly method: HttpMethod;
  readonly path: `/${string}`;
  /**
   * The status of a success (default 200). 204 answers no body: the endpoint's output is then what the MCP tool
   * answers in the venue.
   */
  readonly status?: 200 | 201 | 202 | 204;
  readonly params?: z.ZodObject;
  readonly querystring?: z.ZodObject;
  readonly body?: z.ZodType;
  /** Request headers the endpoint reads (lower case). */
  readonly headers?: z.ZodObject;
}

/**
 * One capability as every door serves it (docs/architecture.md, "Endpoints"): the input schema (the wire's, from
 * `src/contract/`), the output schema, and `run`, which turns the validated input into the use case's arguments,
 * calls the use case of `src/application/` and presents its outcome with the contract's presenter. A REST route
 * hands it its params, query and body merged; an MCP tool its arguments; so parse → call → present is written once
 * and a door adds only how it reads a request and writes a response (status codes, headers, `confirm`). `route`
 * (when the REST door serves it at one route) says where.
 */
export interface Endpoint<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  input: I;
  output: O;
  run: (call: Call, input: z.output<I>) => Promise<z.input<O>>;
  route?: RestRoute | undefined;
}

/** An endpoint the REST door serves at one route. */
export type RoutedEndpoint<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> = Endpoint<
  I,
  O
> & { route: RestRoute };

/** Declares an endpoint with its input and output types inferred from its schemas. */
export function endpoint<I extends z.ZodObject, O extends z.ZodType>(
  e: Endpoint<I, O> & { route: RestRoute },
): RoutedEndpoint<I, O>;
export function endpoint<I extends z.ZodObject, O extends z.ZodType>(e: Endpoint<I, O>): Endpoint<I, O>;
export function endpoint<I extends z.ZodObject, O extends z.ZodType>(e: Endpoint<I, O>): Endpoint<I, O> {
  return e;
}

/** The params of a route on one resource: its `id` (a battle's, a backtest session's). */
export type IdParams = z.ZodObject<{ id: z.ZodString }>;

/**
 * Endpoints on one resource whose use case takes only its id: `onResource(params, base)(method, what, output,
 * useCase)` serves `method {base}{what}` (the path's only field `:id`, no query or body) and calls `useCase(call,
 * id)`.
 */
export const onResource =
  (params: IdParams, base: `/${string}`) =>
  <O extends z.ZodType>(
    method: HttpMethod,
    what: string,
    output: O,
    useCase: (call: Call, id: string) => Promise<z.input<O>>,
  ) =>
    endpoint({
      route: { method, path: `${base}${what}`, params },
      input: params,
      output,
      run: (call, a) => useCase(call, a.id),
    });

/** A route's path in the OpenAPI document's syntax: `/battles/:id` → `/battles/{id}`. */
export const openApiPath = (path: string): string => path.replace(/:(\w+)/g, '{$1}');

/** The input fields a route's path names (`/battles/:id/trade/order/:order_id` → `id`, `order_id`). */
export const pathFields = (path: string): string[] =>
  [...path.matchAll(/:(\w+)/g)].map((m) => m[1] as string);

/** The input field a request header is handed to the endpoint as: `idempotency-key` → `idempotency_key`. */
export const headerField = (header: string): string => header.replaceAll('-', '_');
