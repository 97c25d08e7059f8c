import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { DomainError, isDomainError } from '../../domain/shared/errors';
import { databaseUnavailable } from '../db/connection-errors';
import { withIssues } from '../http/errors';
import { VenueError } from './tool';

/** The venue's error envelope as a tool answers it (spec "Errors"), with `retry_after_seconds` lifted on a 429. */
export interface ToolErrorEnvelope {
  error: { code: string; message: string; details?: Record<string, unknown>; retry_after_seconds?: number };
}

/** Where a REST request carries a tool's arguments (its body, query string and path): the stdio door's requests. */
const ARGUMENT_LOCATIONS = new Set(['body', 'querystring', 'params']);

/**
 * A venue error the stdio door got from REST, its `VALIDATION_ERROR` issues located in the tool's `arguments` as
 * the in-venue door locates them, not in the part of the REST request that carried the field; a header's issue
 * (credentials) keeps its location.
 */
const inArguments = (e: VenueError): VenueError => {
  const issues = e.details?.['issues'];
  if (e.code !== 'VALIDATION_ERROR' || !Array.isArray(issues)) return e;
  const located = issues.map((issue: unknown) =>
    typeof issue === 'object' &&
    issue !== null &&
    ARGUMENT_LOCATIONS.has(String((issue as { location?: unknown }).location))
      ? { ...issue, location: 'arguments' }
      : issue,
  );
  return new VenueError(e.status, e.code, e.message, { ...e.details, issues: located });
};

/**
 * What a tool's failure answers, as REST would: the status, code, message and details of a venue error (a
 * `DomainError`, or a `VenueError` from the venue over HTTP), of an unreachable database the `SERVICE_UNAVAILABLE`
 * REST answers with ({@link databaseUnavailable}); anything else `INTERNAL_ERROR` 500. A `VALIDATION_ERROR` of a
 * use case or decider that names one `details.field` (a price of 0, an unknown indicator) lists it as
 * `details.issues[]` located in the tool's `arguments`, as the REST door lists it located in the request
 * (`withIssues`; docs/mcp.md, "Errors"), rather than passing `{field}` on; over stdio, REST's issues are located in
 * the arguments too ({@link inArguments}).
 */
export const failureOf = (
  error: unknown,
): { status: number; code: string; message: string; details: Record<string, unknown> | undefined } => {
  const known = isDomainError(error)
    ? withIssues(error, () => 'arguments', { field: 'arguments', location: 'arguments' })
    : error instanceof VenueError
      ? inArguments(error)
      : databaseUnavailable(error);
  return known
    ? { status: known.status, code: known.code, message: known.message, details: known.details }
    : { status: 500, code: 'INTERNAL_ERROR', message: 'internal error', details: undefined };
};

/**
 * The envelope of anything a tool threw: the venue's code, message and details; an unreachable database the
 * `SERVICE_UNAVAILABLE` REST answers with ({@link databaseUnavailable}); anything else `INTERNAL_ERROR`.
 */
export const envelopeOf = (error: unknown): ToolErrorEnvelope => {
  const e = failureOf(error);
  const retry = e.details?.['retry_after_seconds'];
  return {
    error: {
      code: e.code,
      message: e.message,
      ...(e.details ? { details: e.details } : {}),
      ...(typeof retry === 'number' ? { retry_after_seconds: retry } : {}),
    },
  };
};

/**
 * A venue error as a tool error result (`isError: true`), never a protocol error: the text is the envelope's JSON,
 * so an agent reads `code` and `message` and branches on them; no `structuredContent` (it would have to match the
 * tool's output schema, which describes a success).
 */
export const toolError = (error: unknown): CallToolResult => {
  const envelope = envelopeOf(error);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(envelope) }] };
};

/**
 * The `VALIDATION_ERROR` of arguments that fail a tool's input schema, in the REST door's shape: each issue's
 * field (a dotted path), location `arguments`, and message.
 */
export const invalidArguments = (error: z.ZodError): DomainError => {
  const issues = error.issues.flatMap((i) => {
    const path = i.path.map(String).join('.');
    if (i.code === 'unrecognized_keys') {
      return i.keys.map((key) => ({
        field: path ? `${path}.${key}` : key,
        location: 'arguments',
        message: 'unknown field',
      }));
    }
    return [{ field: path || 'arguments', location: 'arguments', message: i.message }];
  });
  const first = issues[0];
  return new DomainError(
    'VALIDATION_ERROR',
    first ? `invalid arguments: ${first.field}: ${first.message}` : 'invalid arguments',
    { issues },
  );
};
