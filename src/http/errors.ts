import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { DomainError, type ErrorCode } from '../../domain/shared/errors';

/** The spec's error envelope: `{ error: { code, message, details? } }` (spec "Errors"). */
export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

/** Builds the envelope of a {@link DomainError}. */
export const envelope = (e: DomainError): ErrorEnvelope => ({
  error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) },
});

/**
 * Turns any error into a `DomainError` with the spec's code: domain errors pass through; schema failures
 * become `VALIDATION_ERROR` 422 naming each bad field; malformed, empty, oversized or wrongly typed bodies
 * become `VALIDATION_ERROR` with their HTTP status (400/413/415); everything else is `INTERNAL_ERROR` 500 with
 * no internals in the message.
 */
export const toDomainError = (error: unknown): DomainError => {
  if (error instanceof DomainError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const where = (error as FastifyError).validationContext ?? 'body';
    const issues = error.validation.map((v) => {
      const path = v.instancePath.replace(/^\//, '').replaceAll('/', '.');
      return { field: path || where, location: where, message: v.message ?? 'invalid' };
    });
    const first = issues[0];
    const message = first
      ? `invalid ${first.location === 'body' ? 'request body' : first.location}: ${first.field}: ${first.message}`
      : 'request failed validation';
    return new DomainError('VALIDATION_ERROR', message, { issues });
  }
  if (isResponseSerializationError(error)) {
    return new DomainError('INTERNAL_ERROR', 'internal error');
  }
  const fe = error as FastifyError;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError(
        'VALIDATION_ERROR',
        'request body is too large',
        { limit_bytes: undefined },
        413,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DomainError(
        'VALIDATION_ERROR',
        'unsupported content type: send application/json',
        undefined,
        415,
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new DomainError(
        'VALIDATION_ERROR',
        'request body is empty but content-type is application/json',
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new DomainError('VALIDATION_ERROR', `request body is not valid JSON: ${fe.message}`);
  }
  if (error instanceof SyntaxError || fe.code?.startsWith('FST_ERR_CTP')) {
    return new DomainError('VALIDATION_ERROR', `malformed request body: ${fe.message}`);
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new DomainError('VALIDATION_ERROR', fe.message, undefined, fe.statusCode);
  }
  return new DomainError('INTERNAL_ERROR', 'internal error');
};

/** Fastify error handler: one envelope for every error; 5xx are logged with their cause and stay vague. */
export const errorHandler = (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
  const domain = toDomainError(error);
  if (domain.status >= 500) request.log.error({ err: error }, 'request failed');
  else request.log.info({ code: domain.code, status: domain.status }, domain.message);
  if (domain.code === 'VALIDATION_ERROR' && domain.status === 413 && domain.details) {
    domain.details['limit_bytes'] = request.routeOptions.bodyLimit ?? request.server.initialConfig.bodyLimit;
  }
  return reply.status(domain.status).type('application/json; charset=utf-8').send(envelope(domain));
};

/** Unknown routes answer in the envelope too. */
export const notFoundHandler = (request: FastifyRequest, reply: FastifyReply) =>
  reply
    .status(404)
    .send(envelope(new DomainError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`)));
