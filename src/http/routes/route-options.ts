import type { FastifyInstance, FastifyRequest, FastifySchema } from 'fastify';
import { z } from 'zod';
import { DomainError } from '../../../domain/shared/errors';
import type { RateLimitGroup } from '../../application/rate-limits';
import type { AuthMode } from '../../auth/principal';
import { errorResponses } from '../../contract/common';
import { headerField, type RoutedEndpoint } from '../../endpoints/endpoint';
import { callOf } from '../call';
import { addServerTiming } from '../server-timing';

/** The OpenAPI security requirement of an auth mode (the `apiKey` and `bearer` schemes of `src/http/openapi.ts`). */
const SECURITY: Partial<Record<AuthMode, Record<string, string[]>[]>> = {
  'key-or-jwt': [{ apiKey: [] }, { bearer: [] }],
  jwt: [{ bearer: [] }],
};

/** The response schema of a 204. */
const noBody = z.null().describe('no body');

/** The issues of the fields of `value` (a parsed body or query) that a route would ignore, at `location`. */
const ignoredFields = (value: unknown, location: 'body' | 'querystring') => {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value))
    return [
      { field: location, location, message: `this route takes no ${location === 'body' ? 'body' : 'query'}` },
    ];
  return Object.keys(value).map((key) => ({ field: key, location, message: 'unknown field' }));
};

/**
 * The `preValidation` hook of a route that would ignore part of a request: the body of a route whose endpoint
 * declares none (`body`), the query parameters of a write (any method but `GET`) that declares no query (`query`).
 * Such input is `VALIDATION_ERROR` 422 and the endpoint does not run, since a client that believes it sent a
 * filter or an option (`DELETE /trade/orders/open` with `{"symbol":"ETHUSDT"}` or `?symbol=ETHUSDT`, an agent reset
 * with `{"starting_balance":"5"}`) would otherwise get more, or other, than it asked for (spec "Errors": bad input
 * changes nothing). Each key is an issue `{ field: key, location: 'body' | 'querystring', message: 'unknown field' }`,
 * as a strict schema names its unknown fields; a body that is another JSON value but `null` (an array, a string, a
 * number, a boolean) is one issue on `body`. No body, an empty or blank one (read as none: `acceptEmptyJsonBodies`,
 * `src/http/app.ts`), `{}` and `null` pass: clients send those on actions. A read (`GET`) ignores unknown query
 * parameters, as the original product's clients expect. The MCP door refuses the same arguments: such an
 * endpoint's input is strict (`served`, `src/endpoints/endpoint.ts`).
 */
export const refuseIgnoredInput =
  (ignores: { body: boolean; query: boolean }) =>
  async (request: FastifyRequest): Promise<void> => {
    const issues = [
      ...(ignores.body ? ignoredFields(request.body, 'body') : []),
      ...(ignores.query ? ignoredFields(request.query, 'querystring') : []),
    ];
    if (issues.length === 0) return;
    const fields = issues.filter((i) => i.message === 'unknown field').map((i) => i.field);
    const where = [...new Set(issues.map((i) => (i.location === 'body' ? 'body' : 'query')))].join(' or ');
    throw new DomainError(
      'VALIDATION_ERROR',
      `invalid request: this route takes no ${where}${fields.length ? `: unknown field ${fields.join(', ')}` : ''}`,
      { issues },
    );
  };

/** What the auth and rate-limit plugins read of a route (`auth` default `public`, `rateLimitGroup` `general`). */
interface RouteConfig {
  readonly auth?: AuthMode;
  readonly rateLimitGroup?: RateLimitGroup;
}

/**
 * The options builder of a group of routes that share their OpenAPI tag, credentials and rate-limit group: each
 * route gives its summary and its schema (params, query, body, responses, description). The route's `config` carries
 * the auth mode and rate-limit group the plugins enforce; its OpenAPI `security` follows from the auth mode, so the
 * document and the check cannot disagree.
 */
export const routeGroup = <C extends RouteConfig>(tag: string, config: C) => {
  const security = config.auth ? SECURITY[config.auth] : undefined;
  return <S extends FastifySchema>(summary: string, schema: S) =>
    ({ config, schema: { tags: [tag], ...(security ? { security } : {}), summary, ...schema } }) as const;
};

/** A group's options builder ({@link routeGroup}). */
type RouteGroup = (summary: string, schema: FastifySchema) => { config: RouteConfig; schema: FastifySchema };

/** What the OpenAPI document says of a route beside its schemas. */
interface RouteDoc {
  summary: string;
  description?: string;
  /** The error statuses the route may answer, each with the error envelope. */
  errors: readonly number[];
  /**
   * Adds `handler;dur=<ms>` to `Server-Timing`: the time before the handler ran (parsing, authentication, rate
   * limit, validation, event-loop queueing), for the routes `bench/` times.
   */
  timed?: boolean;
}

/**
 * Serves an endpoint at its route (`ep.route`: method, path, success status, the request's parts), documented in
 * the group's tag with `doc`: validates the declared params, query, body and headers, hands them to `ep.run`
 * merged (in that order; a header `idempotency-key` as `idempotency_key`), and answers the success status with
 * the endpoint's output (a 204: no body), or one of `doc.errors` in the envelope. A route that declares no body
 * refuses one that would be ignored, and a write that declares no query refuses query parameters
 * ({@link refuseIgnoredInput}). `inputOf` replaces the merge
 * where the wire differs from the input (a comma-separated list the endpoint takes as an array).
 */
export const serve = <I extends z.ZodObject, O extends z.ZodType>(
  app: FastifyInstance,
  group: RouteGroup,
  ep: RoutedEndpoint<I, O>,
  doc: RouteDoc,
  inputOf?: (request: FastifyRequest) => z.output<I>,
): void => {
  const { method, path, status = 200, params, querystring, body, headers } = ep.route;
  const schema: FastifySchema = {
    ...(doc.description ? { description: doc.description } : {}),
    ...(headers ? { headers } : {}),
    ...(params ? { params } : {}),
    ...(querystring ? { querystring } : {}),
    ...(body ? { body } : {}),
    response: { [status]: status === 204 ? noBody : ep.output, ...errorResponses(...doc.errors) },
  };
  const ignores = { body: !body, query: !querystring && method !== 'GET' };
  const headerNames = headers ? Object.keys(headers.shape) : [];
  const merged = (request: FastifyRequest) => ({
    ...(params ? (request.params as object) : {}),
    ...(querystring ? (request.query as object) : {}),
    ...(body ? (request.body as object) : {}),
    ...Object.fromEntries(headerNames.map((h) => [headerField(h), request.headers[h]])),
  });
  app.route({
    method,
    url: path,
    ...group(doc.summary, schema),
    ...(ignores.body || ignores.query ? { preValidation: refuseIgnoredInput(ignores) } : {}),
    handler: async (request, reply) => {
      if (doc.timed) addServerTiming(reply, 'handler', reply.elapsedTime);
      const input = inputOf ? inputOf(request) : (merged(request) as z.output<I>);
      const output = await ep.run(callOf(request), input);
      return reply.status(status).send(status === 204 ? null : output);
    },
  });
};

/** A route's doc in a {@link serveAll} table: `errors` may be left to the table's. */
type TableDoc = Omit<RouteDoc, 'errors'> & Partial<Pick<RouteDoc, 'errors'>>;

/**
 * Serves the endpoints of a group in the order `docs` names them (the OpenAPI document's order), each with its doc:
 * a plain string is the summary of a route that answers `errors`, a doc without `errors` answers them too. For a group whose routes mostly differ only in
 * their summary, so that each is one line. An endpoint `docs` does not name is not served here (a table may be
 * served by several route files); test/core/endpoints-served.int.test.ts fails for an endpoint with a route that no
 * file serves.
 */
export const serveAll = <E extends Record<string, Pick<RoutedEndpoint, 'route'>>>(
  app: FastifyInstance,
  group: RouteGroup,
  eps: E,
  errors: readonly number[],
  docs: { readonly [K in keyof E]?: string | TableDoc },
): void => {
  for (const [name, doc] of Object.entries(docs) as [keyof E, string | TableDoc][]) {
    // Each endpoint's input is the merge of the request parts its route declares, which `serve` validates.
    const ep = eps[name] as unknown as RoutedEndpoint;
    serve(app, group, ep, typeof doc === 'string' ? { summary: doc, errors } : { errors, ...doc });
  }
};
