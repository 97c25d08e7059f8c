import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

/**
 * Runtime configuration (ARCHITECTURE §14), validated with zod from the environment and CLI flags (flags win).
 * Every value has a default so `npm start` works on a bare machine; a bad value stops start-up with a one-line
 * message naming it ({@link ConfigError}).
 */
const emptyToUndefined = (v: unknown) => (v === '' ? undefined : v);

/** A fee rate setting: a decimal fraction from 0 to 0.1 (10 %) with at most 8 places. */
const feeRateSetting = z
  .string()
  .regex(/^(0(\.\d{1,8})?|0?\.\d{1,8})$/, 'must be a decimal fraction with at most 8 places, such as 0.001')
  .refine((v) => Number(v) <= 0.1, 'must be at most 0.1 (10 %)');

/**
 * A yes/no setting: `true`, `false`, `1` or `0` (empty: unset), read as a boolean; `fallback` when unset.
 */
const booleanSetting = (fallback: 'true' | 'false') =>
  z.preprocess(
    emptyToUndefined,
    z
      .enum(['true', 'false', '1', '0'])
      .default(fallback)
      .transform((v) => v === 'true' || v === '1'),
  );

const configSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  /** `worker` only: serve the operator endpoints (`/health`, `/metrics`) on this port; unset, no HTTP at all. */
  OPS_PORT: z.preprocess(emptyToUndefined, z.coerce.number().int().min(0).max(65535).optional()),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
  ),
  /** Connections of the `DATABASE_URL` pool per process (plus one each for LISTEN and every leadership held). */
  DATABASE_POOL_MAX: z.coerce.number().int().min(2).max(500).default(20),
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
  PROJECTIONS: booleanSetting('true'),
  /** How long a command's response waits for read models to include it (ms); see docs/architecture.md. */
  READ_MODEL_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
  /**
   * Where read-your-writes waits for the `/trade` commands (place, cancel, cancel all; docs/architecture.md):
   * `on-read` answers once the order's events are durable and makes the owner's next request wait until the read
   * models include them; `on-response` waits before answering, like every other command (needed when several API
   * processes serve one client without keeping it on one process: a read waits only for its own process's
   * writes). `auto` (default): `on-read` in a process that folds the read models (`PROJECTIONS=true`, the single
   * process), `on-response` in an API process of a scaled-out venue (`PROJECTIONS=false`, docs/operations.md).
   */
  READ_YOUR_WRITES: z.enum(['auto', 'on-read', 'on-response']).default('auto'),
  /**
   * How much later (ms) the read models may fold events that no request waits for (backtest steps, matching
   * fills), so a stream of them is folded in one page instead of one each; a waiting command is never delayed
   * by it. `worker` always uses 0 (its waiters are in other processes). See docs/architecture.md, "Projections".
   */
  READ_MODEL_LAZY_MS: z.coerce.number().int().min(0).max(10_000).default(50),
  /**
   * Transactions a page of the log is folded in at once on a PostgreSQL server (1 = all read models in one
   * transaction, so a query reading several read models never sees them at different pages); PGlite always uses
   * 1. See docs/architecture.md, "Projections", and docs/benchmarks.md.
   */
  READ_MODEL_FOLDS: z.coerce.number().int().min(1).max(8).default(1),
  /**
   * Aggregate snapshots (docs/architecture.md, "Snapshots"): a wallet's state is snapshotted every this many
   * events, so a cold load folds at most that many; 0 turns snapshots off (every cold load replays the stream).
   */
  /**
   * Worker threads that decide backtest batches off the request thread (issue 24 item 4; `docs/backtesting.md`,
   * "Where stepping runs"); 0 decides them on the request thread. Default: one fewer than the cores, at least 1.
   */
  BACKTEST_THREADS: z.coerce
    .number()
    .int()
    .min(0)
    .max(64)
    .default(Math.max(1, os.availableParallelism() - 1)),
  /**
   * Where `BACKTEST_THREADS` decide backtest and historical-battle batches (issue 24 item 4; `docs/backtesting.md`,
   * "Where stepping runs"): `thread` — worker threads of the venue's process at nice 19; `process` — child
   * processes of the venue (`BACKTEST_THREADS` of them), every thread of each at nice 19, each with its own V8
   * heap and GC helper threads, which a worker thread shares with the request thread.
   */
  BACKTEST_STEPPING: z.enum(['thread', 'process']).default('thread'),
  /**
   * Candles per pair a backtest session holds ahead of its virtual clock (issue 24 item 3; docs/architecture.md,
   * "Backtests"): its window is read from the candle store a chunk at a time, so its memory is bounded by this,
   * not by the window's length.
   */
  BACKTEST_CHUNK_CANDLES: z.coerce.number().int().min(1).max(1_000_000_000).default(10_000),
  SNAPSHOT_EVERY: z.coerce.number().int().min(0).max(1_000_000).default(500),
  /**
   * Where the rate-limit counters live (`src/rate-limits/limiter.ts`): `auto` (default) uses the shared PostgreSQL
   * table when `DATABASE_URL` names a server (every process counts against one budget per caller) and this
   * process's memory on embedded PGlite; `memory` forces per-process counters.
   */
  RATE_LIMIT_STORE: z.enum(['auto', 'memory', 'postgres']).default('auto'),
  /**
   * Largest accepted request body (bytes); the routes whose bodies are larger for real (a backtest or battle
   * configuration naming many pairs) allow 64 KiB (`src/http/body-limits.ts`).
   */
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(16 * 1024),
  /**
   * Market price source (ARCHITECTURE §7, §14): `files` replays stored candles, `binance` follows the exchange,
   * `synthetic` is a seeded random walk. Unset: `files` when MARKET_DATA_DIR is set, else `synthetic`.
   */
  MARKET_SOURCE: z.preprocess(emptyToUndefined, z.enum(['files', 'binance', 'synthetic']).optional()),
  /**
   * Fee per fill as a fraction of notional, charged in USDT (ARCHITECTURE §8: 0.001 = 0.1 %), 0 to 0.1: the taker
   * rate unless `TAKER_FEE_RATE` is set, and the maker rate unless `MAKER_FEE_RATE` is set (`feeRatesOf`).
   */
  FEE_RATE: feeRateSetting.default('0.001'),
  /** The rate of resting limit (maker) fills; unset: the taker rate (docs/trading-rules.md, "Fees by liquidity"). */
  MAKER_FEE_RATE: z.preprocess(emptyToUndefined, feeRateSetting.optional()),
  /** The rate of fills that take liquidity, and what locks are sized with; unset: `FEE_RATE`. */
  TAKER_FEE_RATE: z.preprocess(emptyToUndefined, feeRateSetting.optional()),
  /**
   * The fill model new wallets open with (docs/trading-rules.md, "The fill model"): `realistic` (book walk,
   * participation-capped resting fills) or `instant` (touch and fill in full). Each wallet can change its own
   * (`PUT /account/fill-model`); wallets opened before fill models keep `instant`.
   */
  FILL_MODEL: z.enum(['realistic', 'instant']).default('realistic'),
  /**
   * Webhooks (docs/webhooks.md): `true` lets webhooks call loopback, private, link-local and other non-public
   * addresses (receivers on this host or network; the tests). Default `false`: the SSRF rule refuses them.
   */
  WEBHOOKS_ALLOW_PRIVATE: booleanSetting('false'),
  /** Wait before a failed delivery's first retry (ms); each next retry waits twice as long, up to the maximum. */
  WEBHOOKS_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(10_000),
  /** Longest wait between two attempts of a delivery (ms). */
  WEBHOOKS_RETRY_MAX_MS: z.coerce.number().int().min(10).max(86_400_000).default(3_600_000),
  /** Attempts of a delivery (the first one included) before it is `failed`. */
  WEBHOOKS_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(8),
  /** How long a receiver has to answer a delivery (ms) before the attempt counts as failed. */
  WEBHOOKS_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** Longest pause of the delivery worker between two looks for due deliveries (ms). */
  WEBHOOKS_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  /** Directory of market data in Binance's formats (see docs/market-data.md), imported at start. */
  MARKET_DATA_DIR: z.preprocess(emptyToUndefined, z.string().optional()),
  /**
   * The candle store's directory (docs/market-data.md, "The candle store"): every imported candle, in month files.
   * Unset: `DATA_DIR/market`. Processes sharing a database read the same store (a shared volume).
   */
  MARKET_STORE_DIR: z.preprocess(emptyToUndefined, z.string().optional()),
  /** Comma-separated symbols the live source follows (default: every pair it has data for). */
  MARKET_SYMBOLS: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^\s*[A-Za-z0-9]+(\s*,\s*[A-Za-z0-9]+)*\s*$/, 'must be a comma-separated list of symbols')
      .optional(),
  ),
  /** Seed of the `synthetic` source's random walk. */
  MARKET_SEED: z.coerce.number().int().default(42),
  /**
   * Largest age (ms) of the live feed before its prices count as stale (issue 21, item 4; docs/trading-rules.md
   * "Stale prices"): past it, market orders answer `PRICE_NOT_AVAILABLE` with the age, resting orders wait for a
   * fresh tick, and `/market/price` says `stale`. Applies to the `binance` source; the `synthetic` and `files`
   * sources are clocked by the venue itself. 0 turns the check off.
   */
  MAX_PRICE_AGE_MS: z.coerce.number().int().min(0).max(3_600_000).default(10_000),
  /** Binance REST base URL (`binance` source). */
  BINANCE_REST_URL: z.string().url().default('https://api.binance.com'),
  /** Binance WebSocket base URL; combined streams are read from `{url}/stream?streams=...`. */
  BINANCE_WS_URL: z
    .string()
    .regex(/^wss?:\/\//, 'must be a ws:// or wss:// URL')
    .default('wss://stream.binance.com:9443'),
  /** `trade`: `<symbol>@trade` streams of MARKET_SYMBOLS (or all active pairs); `miniTicker`: `!miniTicker@arr`. */
  BINANCE_STREAM: z.enum(['trade', 'miniTicker']).default('trade'),
  /** Reconnect back-off of the `binance` source: first and largest wait (ms). */
  BINANCE_RECONNECT_MIN_MS: z.coerce.number().int().min(10).max(600_000).default(1_000),
  BINANCE_RECONNECT_MAX_MS: z.coerce.number().int().min(10).max(600_000).default(30_000),
  /** WebSocket `/ws/v1` heartbeat period (ms). */
  WS_HEARTBEAT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /**
   * HS256 signing secret of JWTs (ARCHITECTURE §12), at least 32 characters. Unset: generated once into
   * `DATA_DIR/secrets.json`. Processes sharing a `DATABASE_URL` must all set the same value.
   */
  JWT_SECRET: z.preprocess(emptyToUndefined, z.string().min(32, 'must be at least 32 characters').optional()),
  /**
   * AES-256-GCM key that encrypts agent API keys (ARCHITECTURE §12): 32 bytes as 64 hex characters or base64.
   * Unset: generated once into `DATA_DIR/secrets.json`. Processes sharing a `DATABASE_URL` must set the same.
   */
  /**
   * Bearer token of the operator views: `/health` details and `/metrics` (docs/operations.md, "Operator
   * endpoints"), at least 32 characters. Unset: generated once into `DATA_DIR/operator-token`.
   */
  OPERATOR_TOKEN: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .min(32, 'must be at least 32 characters')
      .regex(/^\S+$/, 'must not contain white space')
      .optional(),
  ),
  ENCRYPTION_KEY: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$/, 'must be 32 bytes as 64 hex characters or base64')
      .optional(),
  ),
});

/** Configuration values never echoed in an error message or a log line. */
const SECRET_SETTINGS = new Set(['JWT_SECRET', 'ENCRYPTION_KEY', 'OPERATOR_TOKEN']);

/** The validated configuration. Paths are absolute. */
export type Config = Omit<z.infer<typeof configSchema>, 'READ_YOUR_WRITES'> & {
  DATA_DIR: string;
  /** `auto` resolved by {@link loadConfig}. */
  READ_YOUR_WRITES: 'on-read' | 'on-response';
};

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
    const shown =
      input[name] === undefined || SECRET_SETTINGS.has(name) ? '' : ` (got ${JSON.stringify(input[name])})`;
    throw new ConfigError(`invalid configuration: ${name}${shown}: ${issue.message}`);
  }
  if (result.data.EVENT_STORE === 'esdb' && !result.data.ESDB_URL) {
    throw new ConfigError('invalid configuration: ESDB_URL is required when EVENT_STORE=esdb');
  }
  const readYourWrites =
    result.data.READ_YOUR_WRITES === 'auto'
      ? result.data.PROJECTIONS
        ? 'on-read'
        : 'on-response'
      : result.data.READ_YOUR_WRITES;
  return {
    ...result.data,
    DATA_DIR: path.resolve(result.data.DATA_DIR),
    READ_YOUR_WRITES: readYourWrites,
  };
};
