import { z } from 'zod';
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

/** The fields of one part of a route (its params, query or object body), none when the route has no such part. */
type FieldsOf<P> = P extends z.ZodObject ? P['shape'] : Record<never, never>;

/** A route whose every part is an object, so that an endpoint's input can be their fields merged. */
export type ObjectRoute = RestRoute & { readonly body?: z.ZodObject };

/** The input of an endpoint {@link served} at route `R`: its params', query's and body's fields merged. */
export type RouteInput<R extends ObjectRoute> = z.ZodObject<
  FieldsOf<R['params']> & FieldsOf<R['querystring']> & FieldsOf<R['body']>
>;

/**
 * An endpoint whose input is exactly what its route reads, as the REST door hands it to the endpoint: the route's
 * one part itself (its params, its query or its body: the same schema object), or the params extended with the
 * query's and the body's fields, or an empty object when the route reads nothing. `strict` refuses unknown fields
 * (the MCP tool's `additionalProperties: false`), which extending a strict body's fields does not keep; a route
 * whose body is strict (`.strict()`: the REST door refuses an unknown body field, 422) gives a strict input
 * without the option, and so does a write (any method but `GET`) without a body, whose REST route refuses any body
 * and any query parameter it does not declare (`refuseIgnoredInput`, `src/http/routes/route-options.ts`): the MCP
 * tool of the same capability refuses the same arguments. An endpoint
 * whose input differs from its route (lists for comma-separated text, a field the route does not read) is declared
 * with {@link endpoint}.
 */
export const served = <R extends ObjectRoute, O extends z.ZodType>(
  route: R,
  output: O,
  run: (call: Call, input: z.output<RouteInput<R>>) => Promise<z.input<O>>,
  options: { strict?: boolean } = {},
): RoutedEndpoint<RouteInput<R>, O> => {
  const [first, ...more] = [route.params, route.querystring, route.body].filter(
    (part): part is z.ZodObject => part !== undefined,
  );
  let input = first ?? z.object({});
  for (const part of more) input = input.extend(part.shape);
  if (options.strict || isStrict(route.body) || (!route.body && route.method !== 'GET'))
    input = input.strict();
  return { route, input: input as RouteInput<R>, output, run };
};

/**
 * True when `schema` is an object schema that refuses unknown keys (`.strict()`: its catch-all is `never`), as an MCP
 * tool's input with `additionalProperties: false` does.
 */
export const isStrict = (schema: z.ZodType | undefined): boolean =>
  schema instanceof z.ZodObject && schema.def.catchall?._zod.def.type === 'never';

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
    served({ method, path: `${base}${what}`, params }, output, (call, a) => useCase(call, a.id));

/**
 * Reads of one resource with a query: `onResourceQuery(params, base)(what, query, output, useCase)` serves `GET
 * {base}{what}` (the path's only field `:id`, the query's fields) and calls `useCase(call, id, query)`.
 */
export const onResourceQuery =
  (params: IdParams, base: `/${string}`) =>
  <Q extends z.ZodObject, O extends z.ZodType>(
    what: string,
    querystring: Q,
    output: O,
    useCase: (call: Call, id: string, query: z.output<Q>) => Promise<z.input<O>>,
  ) =>
    served({ method: 'GET', path: `${base}${what}`, params, querystring }, output, (call, input) => {
      const { id, ...query } = input as { id: string } & z.output<Q>;
      return useCase(call, id, query as z.output<Q>);
    });

/**
 * Deleting one resource named by the path's only field `field` (`DELETE /agents/:agent_id`): the REST door answers
 * 204 with no body, the MCP tool the confirmation `{ [field]: id, deleted: true }`.
 */
export const deletion = <F extends string>(
  path: `/${string}`,
  params: z.ZodObject<Record<F, z.ZodType<string>>>,
  field: F,
  useCase: (call: Call, id: string) => Promise<unknown>,
) => {
  const output = z.object({ [field]: z.string(), deleted: z.literal(true) } as Record<F, z.ZodString> & {
    deleted: z.ZodLiteral<true>;
  });
  return served({ method: 'DELETE', path, status: 204, params }, output, async (call, a) => {
    const id = (a as Record<F, string>)[field];
    await useCase(call, id);
    return { [field]: id, deleted: true } as z.input<typeof output>;
  });
};

/** A route's path in the OpenAPI document's syntax: `/battles/:id` → `/battles/{id}`. */
export const openApiPath = (path: string): string => path.replace(/:(\w+)/g, '{$1}');

/** The input fields a route's path names (`/battles/:id/trade/order/:order_id` → `id`, `order_id`). */
export const pathFields = (path: string): string[] =>
  [...path.matchAll(/:(\w+)/g)].map((m) => m[1] as string);

/** The input field a request header is handed to the endpoint as: `idempotency-key` → `idempotency_key`. */
export const headerField = (header: string): string => header.replaceAll('-', '_');
