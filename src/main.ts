import { Command, Option } from 'commander';
import { checkReplayOptions } from './cli/audit-options';
import { lockDataDir, requireExistingDatabase } from './cli/data-dir';
import { describeError, EXIT_USAGE, exitCodeOf, usageError } from './cli/errors';
import type { GenerateCliOptions } from './cli/generate';
import { loadConfig } from './config';
import { createLogger } from './logger';
import { defaultMarketDataDir } from './market/sibling-data';
import { VERSION } from './version';

/**
 * The single entry point (ARCHITECTURE §14): `npm start` runs `serve`; `npm run cli -- <command>` the rest.
 * Global flags override the environment variables of the same name. Every failure is one line on stderr with
 * exit code 1 (a problem found, or the command could not run) or 2 (a bad argument or configuration); the stack
 * trace only with `LOG_LEVEL=debug` or `trace`. Each command imports its module when it runs: loading every
 * command's (the HTTP app, the MCP SDK, the projections) took seconds of each short CLI command's start.
 */
const program = new Command()
  .name('ptv')
  // Usage errors (unknown option or command, missing argument) exit with 2 like every other bad argument;
  // subcommands created below inherit this.
  .exitOverride((error) => {
    process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE);
  })
  .description('Paper-trading venue for automated trading agents')
  .version(VERSION)
  .addOption(new Option('--host <host>', 'listen address (HOST)'))
  .addOption(new Option('--port <port>', 'listen port (PORT)'))
  .addOption(new Option('--data-dir <dir>', 'data directory for the embedded database (DATA_DIR)'))
  .addOption(
    new Option('--database-url <url>', 'PostgreSQL server instead of the embedded PGlite (DATABASE_URL)'),
  )
  .addOption(new Option('--event-store <kind>', 'postgres or esdb (EVENT_STORE)'))
  .addOption(new Option('--esdb-url <url>', 'EventStoreDB/KurrentDB connection string (ESDB_URL)'))
  .addOption(new Option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (LOG_LEVEL)'));

/** The database URL of the running command, to name it when it cannot be reached. */
let databaseUrl: string | undefined;

/**
 * Configuration and logger of a command. `command` names it in the PGlite lock of `DATA_DIR`, taken here for
 * every command that opens the database (one process per embedded database; `src/cli/data-dir.ts`). `reads`:
 * the command works on an existing venue, so a `DATA_DIR` without a database is an error, not a new one.
 */
const context = (
  command: string,
  options: { commandLogLevel?: string; marketDataDir?: string | undefined; reads?: boolean } = {},
) => {
  const { commandLogLevel, marketDataDir } = options;
  const o = program.opts();
  const config = loadConfig(process.env, {
    MARKET_DATA_DIR: marketDataDir,
    HOST: o.host,
    PORT: o.port,
    DATA_DIR: o.dataDir,
    DATABASE_URL: o.databaseUrl,
    EVENT_STORE: o.eventStore,
    ESDB_URL: o.esdbUrl,
    LOG_LEVEL: o.logLevel ?? commandLogLevel,
  });
  databaseUrl = config.DATABASE_URL;
  if (options.reads) requireExistingDatabase(config);
  lockDataDir(config, command);
  return { config, logger: createLogger(config.LOG_LEVEL) };
};

/** The long-running roles, each run by the function of its name in `cli/serve`; `serve` is the default command. */
const ROLES = [
  {
    role: 'serve',
    description: 'run the HTTP API (and projections unless PROJECTIONS=false)',
    isDefault: true,
  },
  { role: 'worker', description: 'run projections without HTTP (scaled deployments)', isDefault: false },
] as const;
for (const { role, description, isDefault } of ROLES) {
  program
    .command(role, { isDefault })
    .description(description)
    .action(async () => {
      const { config, logger } = context(role, { marketDataDir: defaultMarketDataDir(process.env) });
      const run = (await import('./cli/serve'))[role];
      await run(config, logger);
    });
}

program
  .command('migrate')
  .description('apply database migrations and exit')
  .action(async () => {
    const { config, logger } = context('migrate');
    const { openDatabase } = await import('./db/database');
    const { MIGRATION_LOCK, migrateToLatest } = await import('./db/migrate');
    const { exclusively } = await import('./db/exclusive');
    const db = await openDatabase(config);
    try {
      const applied = await exclusively(db, MIGRATION_LOCK, () => migrateToLatest(db.db));
      console.log(
        applied.length ? `applied: ${applied.map((m) => m.migrationName).join(', ')}` : 'up to date',
      );
    } finally {
      await db.close();
    }
    logger.flush();
  });

const projections = program.command('projections').description('inspect and rebuild read models');
projections
  .command('status')
  .description('generation, checkpoint and lag of each projection')
  .action(async () => {
    const { config, logger } = context('projections status', { commandLogLevel: 'warn', reads: true });
    const { projectionsStatus } = await import('./cli/projections');
    await projectionsStatus(config, logger);
  });
projections
  .command('rebuild [name]')
  .description('rebuild one projection (or all) beside the live tables and swap without downtime')
  .option('--verify', 'compare the rebuilt tables with the live ones row by row; swap only when identical')
  .action(async (name: string | undefined, opts: { verify?: boolean }) => {
    const { projectionsNamed, projectionsRebuild } = await import('./cli/projections');
    projectionsNamed(name);
    const { config, logger } = context('projections rebuild', { commandLogLevel: 'warn', reads: true });
    process.exitCode = await projectionsRebuild(config, logger, name, opts);
  });

program
  .command('events')
  .description('read the event log')
  .command('tail')
  .description('print the last events of the log or of one stream')
  .option('--stream <stream>', 'only this stream')
  .option('-n, --limit <n>', 'how many events', '20')
  .option('-f, --follow', 'keep printing new events (Ctrl-C to stop)')
  .option('--json', 'one JSON object per event (the whole envelope) instead of a readable line')
  .action(async (opts: { stream?: string; limit: string; follow?: boolean; json?: boolean }) => {
    const limit = /^\d+$/.test(opts.limit) ? Number(opts.limit) : Number.NaN;
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw usageError(`--limit must be a positive integer, got "${opts.limit}"`);
    const { config, logger } = context('events tail', { commandLogLevel: 'warn', reads: true });
    const { eventsTail } = await import('./cli/events');
    await eventsTail(config, logger, { ...opts, limit });
  });

const accounts = program.command('accounts').description('operator commands for accounts');
for (const action of ['suspend', 'reactivate', 'archive'] as const) {
  accounts
    .command(`${action} <id>`)
    .description(
      action === 'reactivate'
        ? 'make a suspended or archived account active again'
        : `${action} an account (its logins then answer ACCOUNT_SUSPENDED)`,
    )
    .option('--reason <text>', 'why (recorded in the event)')
    .action(async (id: string, opts: { reason?: string }) => {
      const { config, logger } = context(`accounts ${action}`, { commandLogLevel: 'warn', reads: true });
      const { accountsCli } = await import('./cli/accounts');
      process.exitCode = await accountsCli(config, logger, action, id, opts);
    });
}

const audit = program.command('audit').description('auditor tools: replay a wallet, verify the hash chains');
audit
  .command('replay')
  .description("print a wallet's timeline and folded state; check it against the read models")
  .option('--agent <id>', "the agent's wallet")
  .option('--account <id>', "the account's own wallet")
  .option('--as-of <time>', 'fold only the events at or before this ISO 8601 time')
  .option('--json', 'print a JSON summary instead of the timeline')
  .action(async (opts: { agent?: string; account?: string; asOf?: string; json?: boolean }) => {
    checkReplayOptions(opts); // bad arguments first, before the database is looked at
    const { auditReplay } = await import('./cli/audit');
    const { config, logger } = context('audit replay', { commandLogLevel: 'warn', reads: true });
    process.exitCode = await auditReplay(config, logger, opts);
  });
audit
  .command('verify')
  .description('recompute the SHA-256 hash chain of every stream (or of --stream S, repeatable)')
  .option('--stream <stream...>', 'only these streams')
  .action(async (opts: { stream?: string[] }) => {
    const { config, logger } = context('audit verify', { commandLogLevel: 'warn', reads: true });
    const { auditVerify } = await import('./cli/audit');
    process.exitCode = await auditVerify(config, logger, opts);
  });

program
  .command('import-market-data <dir>')
  .description(
    'import market data in Binance formats (exchangeInfo.json, ticker_24hr.json, klines/) into the store',
  )
  .action(async (dir: string) => {
    const { config, logger } = context('import-market-data', { commandLogLevel: 'warn' });
    const { importMarketData } = await import('./cli/market');
    process.exitCode = await importMarketData(config, logger, dir);
  });

program
  .command('generate-market-data')
  .description(
    'write Binance-format 1m (5m, 15m, 1h) kline zips anchored on the real hourly candles, for tests and benchmarks',
  )
  .requiredOption('--out <dir>', 'output directory (empty, or an earlier run with the same options: resumed)')
  .option('--pairs <n>', 'how many pairs (the 16 real hourly pairs first, then by 24h quote volume)', '10')
  .option('--from <time>', 'first open time, ISO 8601 UTC (inclusive)', '2022-01-01')
  .option('--to <time>', 'end, ISO 8601 UTC (exclusive)', '2023-01-01')
  .option('--interval <interval>', '1m, 5m, 15m or 1h', '1m')
  .option('--seed <n>', 'seed of the minute paths and volume splits', '42')
  .option('--anchors <dir>', 'real data set with klines/1h/*.csv (default ../shared/market-data)')
  .option('--daily', 'one file per day (SYMBOL-1m-YYYY-MM-DD.zip) instead of per month')
  .option('--time-unit <unit>', 'ms, or us as in Binance spot files from 2025 on', 'ms')
  .option('--header', 'write a header line in each CSV')
  .option('--threads <n>', 'worker threads (default: the CPUs)')
  .action(async (opts: GenerateCliOptions) => {
    const { generateMarketDataCli } = await import('./cli/generate');
    process.exitCode = await generateMarketDataCli(opts);
  });

program
  .command('mcp')
  .description(
    'serve MCP on stdin/stdout for an MCP host (docs/mcp.md): a client of a running venue over its REST API',
  )
  .option('--base-url <url>', 'the venue, e.g. http://127.0.0.1:8000 (PTV_BASE_URL)')
  .option('--api-key <key>', 'account or agent API key (PTV_API_KEY)')
  .option('--token <jwt>', 'a JWT from POST /auth/login, for the JWT-only tools (PTV_JWT)')
  .option('--agent-id <id>', 'act for this agent of the account (PTV_AGENT_ID)')
  .option(
    '--toolsets <list>',
    'comma-separated: market,trading,account,backtest,analytics,battle,agents,webhooks; default all (PTV_TOOLSETS)',
  )
  .action(
    async (opts: {
      baseUrl?: string;
      apiKey?: string;
      token?: string;
      agentId?: string;
      toolsets?: string;
    }) => {
      const baseUrl = opts.baseUrl ?? process.env.PTV_BASE_URL;
      if (!baseUrl) throw usageError('mcp needs --base-url or PTV_BASE_URL (e.g. http://127.0.0.1:8000)');
      const { parseToolsets } = await import('./mcp/registry');
      const { runStdio } = await import('./mcp/stdio');
      await runStdio({
        baseUrl,
        apiKey: opts.apiKey ?? process.env.PTV_API_KEY,
        token: opts.token ?? process.env.PTV_JWT,
        agentId: opts.agentId ?? process.env.PTV_AGENT_ID,
        toolsets: parseToolsets(opts.toolsets ?? process.env.PTV_TOOLSETS),
      });
    },
  );

program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(describeError(error, { databaseUrl }));
  const level = program.opts().logLevel ?? process.env.LOG_LEVEL;
  if ((level === 'debug' || level === 'trace') && error instanceof Error && error.stack)
    console.error(error.stack);
  process.exit(exitCodeOf(error));
});
