import { ConfigError } from '../config';
import { DatabaseUnavailableError } from '../db/connection-errors';
import { redactDatabaseUrl } from '../db/redact-url';

/**
 * Exit codes of the CLI (docs/operations.md, "Command line"): 0 success; 1 the command ran and found a problem
 * (a broken hash chain, a read model that differs, an unknown agent) or could not run (database unreachable, data
 * directory in use); 2 a bad invocation or configuration (bad argument, unknown projection, no database where
 * `DATA_DIR` points).
 */
export const EXIT_PROBLEM = 1;
export const EXIT_USAGE = 2;

/** An error the CLI reports as one line on stderr (no stack trace) before exiting with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_PROBLEM,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A bad argument or option: one line, exit code 2. */
export const usageError = (message: string): CliError => new CliError(message, EXIT_USAGE);

/** Error codes of a database that cannot be reached or used (node's socket errors, PostgreSQL SQLSTATEs). */
const DATABASE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  '3D000', // database does not exist
  '28P01', // password authentication failed
  '28000', // invalid authorization specification (no pg_hba entry)
  '57P03', // cannot connect now (starting up, shutting down)
  '53300', // too many connections
]);

const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  if (error instanceof AggregateError) for (const e of error.errors) if (codeOf(e)) return codeOf(e);
  return undefined;
};

const messageOf = (error: unknown): string => {
  if (error instanceof AggregateError && error.errors.length > 0) {
    // node's connect errors to several addresses (::1 and 127.0.0.1) have an empty message of their own.
    const parts = [...new Set(error.errors.map(messageOf))];
    return error.message ? `${error.message}: ${parts.join('; ')}` : parts.join('; ');
  }
  if (error instanceof Error) return error.message || codeOf(error) || error.name;
  return String(error);
};

/**
 * One line describing `error` for a person at a terminal: the message alone (multi-line messages folded), with
 * the database named when it cannot be reached.
 */
export const describeError = (
  thrown: unknown,
  context: { databaseUrl?: string | undefined } = {},
): string => {
  // The pool gives up on an unreachable server with its own error; the socket error it wraps names the cause.
  const error = thrown instanceof DatabaseUnavailableError && thrown.cause ? thrown.cause : thrown;
  const message = messageOf(error)
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  if (error instanceof CliError || error instanceof ConfigError) return message;
  const code = codeOf(error);
  if (code && DATABASE_CODES.has(code) && context.databaseUrl) {
    return `cannot use the database ${redactDatabaseUrl(context.databaseUrl, 'DATABASE_URL')}: ${message}`;
  }
  return `error: ${message}`;
};

/** The exit code for `error`: its own for a {@link CliError}, 2 for a configuration error, else 1. */
export const exitCodeOf = (error: unknown): number => {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof ConfigError) return EXIT_USAGE;
  return EXIT_PROBLEM;
};
