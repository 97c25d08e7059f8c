import path from 'node:path';
import { z } from 'zod';

/**
 * Runtime configuration (ARCHITECTURE §14), validated with zod from the environment and CLI flags (flags win).
 * Every value has a default so `npm start` works on a bare machine; a bad value stops start-up with a one-line
 * message naming it ({@link ConfigError}).
 */
const emptyToUndefined = (v: unknown) => (v === '' ? undefined : v);

const configSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
  ),
  EVENT_STORE: z.enum(['postgres', 'esdb']).default('postgres'),
  ESDB_URL: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(
        /^(esdb|kurrentdb|kurrent)(\+discover)?:\/\//,
        'must be an esdb:// or kurrentdb:// connection string',
      )
      .optional(),
  ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Run projections in this process (`true` for the single-process default; the API-only role sets `false`). */
  PROJECTIONS: z.preprocess(
    emptyToUndefined,
    z
      .enum(['true', 'false', '1', '0'])
      .default('true')
      .transform((v) => v === 'true' || v === '1'),
  ),
  /** How long a command's response waits for read models to include it (ms); see docs/architecture.md. */
  READ_MODEL_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
  /** Largest accepted request body (bytes). */
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
});

/** The validated configuration. Paths are absolute. */
export type Config = z.infer<typeof configSchema> & { DATA_DIR: string };

/** A configuration value that failed validation; `message` is the one line printed at start-up. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Builds the configuration from `env` overlaid with `overrides` (CLI flags, already named like the env vars).
 * Throws {@link ConfigError} naming the first bad variable and why.
 */
export const loadConfig = (
  env: Record<string, string | undefined> = process.env,
  overrides: Record<string, string | number | undefined> = {},
): Config => {
  const input: Record<string, unknown> = {};
  for (const key of Object.keys(configSchema.shape)) {
    const value = overrides[key] ?? env[key];
    if (value !== undefined) input[key] = typeof value === 'number' ? String(value) : value;
  }
  const result = configSchema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const name = String(issue.path[0] ?? 'configuration');
    const shown = input[name] === undefined ? '' : ` (got ${JSON.stringify(input[name])})`;
    throw new ConfigError(`invalid configuration: ${name}${shown}: ${issue.message}`);
  }
  if (result.data.EVENT_STORE === 'esdb' && !result.data.ESDB_URL) {
    throw new ConfigError('invalid configuration: ESDB_URL is required when EVENT_STORE=esdb');
  }
  return { ...result.data, DATA_DIR: path.resolve(result.data.DATA_DIR) };
};
