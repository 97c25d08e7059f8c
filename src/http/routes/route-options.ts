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

/**
 * The `preValidation` hook of a route whose endpoint declares no body: a body that would be ignored is
 * `VALIDATION_ERROR` 422 and the endpoint does not run, since a client that believes it sent a filter or an option
 * (`DELETE /trade/orders/open` with `{"symbol":"ETHUSDT"}`, an agent reset with `{"starting_balance":"5"}`) would
 * otherwise get more, or other, than it asked for (spec "Errors": bad input changes nothing). An object's keys are
 * each an issue `{ field: key, location: 'body', message: 'unknown field' }`, as a strict body names its unknown
 * fields; any other JSON value but `null` (an array, a string, a number, a boolean) is one issue on `body`. No body,
 * an empty or blank one (read as none: `acceptEmptyJsonBodies`, `src/http/app.ts`), `{}` and `null` pass:
 * clients send those on actions.
 */
export const refuseIgnoredBody = async (request: FastifyRequest): Promise<void> => {
  const { body } = request;
  if (body === undefined || body === null) return;
  const isObject = typeof body === 'object' && !Array.isArray(body);
  const keys = isObject ? Object.keys(body) : [];
  if (isObject && keys.length === 0) return;
  const issues = isObject
    ? keys.map((key) => ({ field: key, location: 'body', message: 'unknown field' }))
    : [{ field: 'body', location: 'body', message: 'this route takes no body' }];
  const message = isObject
    ? `invalid request body: this route takes no body: unknown field ${keys.join(', ')}`
    : 'invalid request body: this route takes no body';
  throw new DomainError('VALIDATION_ERROR', message, { issues });
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
 * refuses one that would be ignored ({@link refuseIgnoredBody}). `inputOf` replaces the merge
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
    ...(body ? {} : { preValidation: refuseIgnoredBody }),
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
