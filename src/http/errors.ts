import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { DomainError, type ErrorCode } from '../../domain/shared/errors';
import { clipEcho } from '../../domain/shared/text';
import { databaseUnavailable } from '../db/connection-errors';

/** The spec's error envelope: `{ error: { code, message, details? } }` (spec "Errors"). */
export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

/** One bad input of a `VALIDATION_ERROR`: the field (a dotted path), where it was sent, and what is wrong. */
export interface ValidationIssue {
  /** e.g. `risk_profile.max_open_orders`, `limit`, `X-Agent-Id`; `body` for the body as a whole. */
  field: string;
  /** `body`, `querystring`, `params`, `headers`, or `message` (a WebSocket client message). */
  location: string;
  message: string;
}

/**
 * Gives a `VALIDATION_ERROR` the one shape of its details: `details.issues[]` ({@link ValidationIssue}), whoever
 * threw it. An error that already lists issues (schema failures, the routes that build them) passes unchanged.
 * One naming a single `details.field` (the deciders and shared normalisers do) becomes one issue for that field,
 * located by `locate`, and `field` itself is dropped. One naming no field gets one issue for `fallback`. Other
 * details (`limit_bytes`, `min`, `max`, `limit`, ...) are kept; other codes pass unchanged.
 */
export const withIssues = (
  e: DomainError,
  locate: (field: string) => string,
  fallback: { field: string; location: string },
): DomainError => {
  if (e.code !== 'VALIDATION_ERROR' || Array.isArray(e.details?.['issues'])) return e;
  const { field, ...rest } = e.details ?? {};
  const issue: ValidationIssue =
    typeof field === 'string' && field !== ''
      ? {
          field,
          location: locate(field),
          message: e.message.startsWith(`${field} `) ? e.message.slice(field.length + 1) : e.message,
        }
      : { ...fallback, message: e.message };
  return new DomainError(e.code, e.message, { ...rest, issues: [issue] }, e.status);
};

const has = (value: unknown, key: string): boolean =>
  typeof value === 'object' && value !== null && Object.hasOwn(value, key);

/**
 * Where a field named by an error was sent in `request`: `params` or `querystring` when it holds that name
 * (the first segment of a dotted path), `headers` for a header's name (any letter case), else `body`.
 */
export const locateField =
  (request: Pick<FastifyRequest, 'params' | 'query' | 'headers'>) =>
  (field: string): string => {
    const root = field.split('.')[0] ?? field;
    if (has(request.params, root)) return 'params';
    if (has(request.query, root)) return 'querystring';
    if (request.headers[root.toLowerCase()] !== undefined) return 'headers';
    return 'body';
  };

/**
 * Names a query parameter sent more than once (`?limit=1&limit=2`, which the query parser reads as an array):
 * each `querystring` issue of such a parameter says `is given more than once: send it once` instead of what the
 * schema made of the array ("expected string, received array", "received NaN", an enum's option list), and the
 * error's message is rebuilt when its first issue is one. Unknown parameters keep `unknown field`; other errors
 * pass. Only the HTTP door has query strings (the MCP door's arguments are JSON, where a key is given once).
 */
export const withRepeatedQuery = (e: DomainError, query: unknown): DomainError => {
  const issues = e.details?.['issues'];
  if (e.code !== 'VALIDATION_ERROR' || !Array.isArray(issues) || typeof query !== 'object' || query === null)
    return e;
  const repeated = (issue: ValidationIssue) =>
    issue.location === 'querystring' &&
    issue.message !== 'unknown field' &&
    Array.isArray((query as Record<string, unknown>)[issue.field.split('.')[0] ?? issue.field]);
  if (!(issues as ValidationIssue[]).some(repeated)) return e;
  const named = (issues as ValidationIssue[]).map((issue) =>
    repeated(issue) ? { ...issue, message: 'is given more than once: send it once' } : issue,
  );
  const first = named[0] as ValidationIssue;
  const message = repeated(issues[0] as ValidationIssue)
    ? `invalid querystring: ${first.field}: ${first.message}`
    : e.message;
  return new DomainError(e.code, message, { ...e.details, issues: named }, e.status);
};

/** Builds the envelope of a {@link DomainError}. */
export const envelope = (e: DomainError): ErrorEnvelope => ({
  error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) },
});

/**
 * Turns any error into a `DomainError` with the spec's code: domain errors pass through; schema failures
 * become `VALIDATION_ERROR` 422 naming each bad field in `details.issues[]`; malformed, empty, oversized or
 * wrongly typed bodies become `VALIDATION_ERROR` with their HTTP status (400/413/415); everything else is
 * `SERVICE_UNAVAILABLE` 503 when the database is away (a lost connection, a restart: `src/db/connection-errors.ts`;
 * `errorHandler` adds `Retry-After`), `INTERNAL_ERROR` 500 otherwise, with no internals in the message. (`errorHandler` then gives every `VALIDATION_ERROR`
 * its `issues[]`, see {@link withIssues}.)
 */
export const toDomainError = (error: unknown): DomainError => {
  if (error instanceof DomainError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const where = (error as FastifyError).validationContext ?? 'body';
    const issues = error.validation.flatMap((v) => {
      const path = v.instancePath.replace(/^\//, '').replaceAll('/', '.');
      // A strict object names its unknown keys in params, not in the path: report each key as the field.
      const unknown = v.keyword === 'unrecognized_keys' ? (v.params as { keys?: unknown }).keys : undefined;
      if (Array.isArray(unknown) && unknown.length > 0) {
        return unknown.map((key) => ({
          field: path ? `${path}.${String(key)}` : String(key),
          location: where,
          message: 'unknown field',
        }));
      }
      return [{ field: path || where, location: where, message: v.message ?? 'invalid' }];
    });
    const first = issues[0];
    const missingBody =
      where === 'body' &&
      issues.length === 1 &&
      first?.field === 'body' &&
      /received (null|undefined)$/.test(first.message);
    const message = missingBody
      ? 'request body is missing: send a JSON object with Content-Type: application/json'
      : first
        ? `invalid ${first.location === 'body' ? 'request body' : first.location}: ${first.field}: ${first.message}`
        : 'request failed validation';
    return new DomainError('VALIDATION_ERROR', message, { issues });
  }
  const unavailable = databaseUnavailable(error);
  if (unavailable) return unavailable;
  if (isResponseSerializationError(error)) {
    return new DomainError('INTERNAL_ERROR', 'internal error');
  }
  const fe = error as FastifyError;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError(
        'VALIDATION_ERROR',
        'request body is too large',
        { limit_bytes: undefined, issues: [{ field: 'body', location: 'body', message: 'too large' }] },
        413,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DomainError(
        'VALIDATION_ERROR',
        'unsupported content type: send application/json',
        {
          issues: [{ field: 'content-type', location: 'headers', message: 'must be application/json' }],
        },
        415,
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new DomainError(
        'VALIDATION_ERROR',
        'request body is empty but content-type is application/json',
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new DomainError('VALIDATION_ERROR', `request body is not valid JSON: ${fe.message}`);
    // Router errors: the URL's path is at fault, not the body.
    case 'FST_ERR_BAD_URL':
      return new DomainError(
        'VALIDATION_ERROR',
        routerMessage(fe.message),
        { issues: [{ field: 'path', location: 'params', message: 'holds a malformed %-escape' }] },
        400,
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new DomainError(
        'VALIDATION_ERROR',
        routerMessage(fe.message),
        {
          issues: [{ field: 'path', location: 'params', message: 'a path parameter is over 100 characters' }],
        },
        414,
      );
  }
  if (error instanceof SyntaxError || fe.code?.startsWith('FST_ERR_CTP')) {
    return new DomainError('VALIDATION_ERROR', `malformed request body: ${fe.message}`);
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new DomainError('VALIDATION_ERROR', fe.message, undefined, fe.statusCode);
  }
  return new DomainError('INTERNAL_ERROR', 'internal error');
};

/**
 * Logs an error answer of any door by its status (the logging half of {@link presentFailure}; the MCP door's tool
 * errors too, whose HTTP answer is the protocol's): a 5xx other than 503 is a server fault, at `error` with its
 * cause `error` and its stack; a 503 is an expected answer the client retries, at `warn`; anything else the
 * client's, at `info`. `fields` are added to the log line (the MCP tool's name).
 */
export const logFailure = (
  log: FastifyBaseLogger,
  answer: { status: number; code: string | number; message: string },
  error: unknown,
  fields: Record<string, unknown> = {},
): void => {
  const { status, code, message } = answer;
  if (status >= 500 && status !== 503) log.error({ err: error, ...fields }, 'request failed');
  else if (status === 503) log.warn({ code, status, ...fields }, message);
  else log.info({ code, status, ...fields }, message);
};

/**
 * Logs ({@link logFailure}) and heads an error answer of any HTTP door (REST, the Binance door) by its status: a 5xx
 * other than 503 is a server fault, logged at `error` with its cause (`error`); a 503 (no price yet, a dependency
 * down) is an expected answer the client retries, logged at `warn` without a stack, and it says when to try again
 * in `Retry-After` (whole seconds: `details.retry_after_seconds` rounded up, else 1; issue 16, item 1; spec
 * "Errors": clients back off and retry 503s) unless the reply has one; anything else is the client's, at `info`.
 * `code` and `message` are what the door answers (the venue's code, or Binance's).
 */
export const presentFailure = (
  request: FastifyRequest,
  reply: FastifyReply,
  answer: {
    status: number;
    code: string | number;
    message: string;
    details?: Record<string, unknown> | undefined;
  },
  error: unknown,
): void => {
  logFailure(request.log, answer, error);
  if (answer.status === 503 && !reply.hasHeader('retry-after')) {
    const after = answer.details?.['retry_after_seconds'];
    reply.header('retry-after', String(typeof after === 'number' && after > 0 ? Math.ceil(after) : 1));
  }
};

/**
 * Fastify error handler: one envelope for every error; every `VALIDATION_ERROR` lists `details.issues[]`
 * (a field named by the thrower is located in the request); 5xx are logged with their cause and stay vague
 * ({@link presentFailure}).
 */
export const errorHandler = (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
  const domain = withRepeatedQuery(
    withIssues(toDomainError(error), locateField(request), { field: 'body', location: 'body' }),
    request.query,
  );
  presentFailure(request, reply, domain, error);
  if (domain.code === 'VALIDATION_ERROR' && domain.status === 413 && domain.details) {
    domain.details['limit_bytes'] = request.routeOptions.bodyLimit ?? request.server.initialConfig.bodyLimit;
  }
  return reply.status(domain.status).type('application/json; charset=utf-8').send(envelope(domain));
};

/**
 * Whether a matched route's path parameters (fastify's `request.params`: name → decoded segment) hold an empty
 * one: the router matches `/battles/:id` for `/battles/`, but the path names no battle, so the request is answered
 * as a route that does not exist ({@link notFoundHandler}: `NOT_FOUND` 404), never as a `VALIDATION_ERROR` of `id`.
 */
export const hasEmptyPathParam = (params: unknown): boolean => {
  if (typeof params !== 'object' || params === null) return false;
  // A loop, not Object.values: it runs on every request, and most routes (the order route) have no parameter.
  for (const name in params) if ((params as Record<string, unknown>)[name] === '') return true;
  return false;
};

/** Unknown routes answer in the envelope too. */
export const notFoundHandler = (request: FastifyRequest, reply: FastifyReply) =>
  reply
    .status(404)
    .send(envelope(new DomainError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`)));

/** Headers of an answer written straight to the socket (no route, no hooks): what every response carries. */
const RAW_HEADERS =
  'Content-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\n' +
  "X-Content-Type-Options: nosniff\r\nContent-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n" +
  'Connection: close\r\n';

/**
 * Answers a request Node's HTTP parser refused before fastify saw it (fastify's `clientErrorHandler`), in the
 * envelope: headers or URL over Node's 16 KiB limit → `VALIDATION_ERROR` 431; a request that timed out → 408;
 * anything malformed → 400. Then closes the connection (the parser cannot go on after such a request).
 */
export const clientErrorHandler = (
  error: Error & { code?: string },
  socket: import('node:stream').Duplex,
) => {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
  const [status, reason, e] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          new DomainError(
            'VALIDATION_ERROR',
            'request headers (with the URL) are too large: at most 16 KiB',
            { issues: [{ field: 'headers', location: 'headers', message: 'too large' }] },
            431,
          ),
        ]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [
            408,
            'Request Timeout',
            new DomainError('VALIDATION_ERROR', 'the request took too long to arrive', undefined, 408),
          ]
        : [400, 'Bad Request', new DomainError('VALIDATION_ERROR', 'malformed HTTP request', undefined, 400)];
  const body = JSON.stringify(envelope(e));
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n${RAW_HEADERS}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
};

/**
 * A router error's message (fastify's `'<path>' is not a valid url component`, `'<path>' is exceeding the max param
 * length`) with the echoed path cut to 120 characters (`clipEcho`): the path is the client's, up to the header size
 * limit (kilobytes), and the answer only needs to say which request it was.
 */
const routerMessage = (message: string): string => {
  const quoted = /^'([\s\S]*)' (is [^']*)$/.exec(message);
  return quoted ? `'${clipEcho(quoted[1]!, 120)}' ${quoted[2]}` : clipEcho(message, 200);
};
