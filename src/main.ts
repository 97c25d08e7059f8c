import { Command, Option } from 'commander';
import { accountsCli } from './cli/accounts';
import { auditReplay, auditVerify } from './cli/audit';
import { eventsTail } from './cli/events';
import { importMarketData } from './cli/market';
import { projectionsRebuild, projectionsStatus } from './cli/projections';
import { serve, worker } from './cli/serve';
import { ConfigError, loadConfig } from './config';
import { createLogger } from './logger';
import { VERSION } from './version';

/**
 * The single entry point (ARCHITECTURE §14): `npm start` runs `serve`; `npm run cli -- <command>` the rest.
 * Global flags override the environment variables of the same name.
 */
const program = new Command()
  .name('ptv')
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

const context = (commandLogLevel?: string) => {
  const o = program.opts();
  const config = loadConfig(process.env, {
    HOST: o.host,
    PORT: o.port,
    DATA_DIR: o.dataDir,
    DATABASE_URL: o.databaseUrl,
    EVENT_STORE: o.eventStore,
    ESDB_URL: o.esdbUrl,
    LOG_LEVEL: o.logLevel ?? commandLogLevel,
  });
  return { config, logger: createLogger(config.LOG_LEVEL) };
};

program
  .command('serve', { isDefault: true })
  .description('run the HTTP API (and projections unless PROJECTIONS=false)')
  .action(async () => {
    const { config, logger } = context();
    await serve(config, logger);
  });

program
  .command('worker')
  .description('run projections without HTTP (scaled deployments)')
  .action(async () => {
    const { config, logger } = context();
    await worker(config, logger);
  });

program
  .command('migrate')
  .description('apply database migrations and exit')
  .action(async () => {
    const { config, logger } = context();
    const { openDatabase } = await import('./db/database');
    const { migrateToLatest } = await import('./db/migrate');
    const db = await openDatabase(config);
    try {
      const applied = await migrateToLatest(db.db);
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
    const { config, logger } = context('warn');
    await projectionsStatus(config, logger);
  });
projections
  .command('rebuild [name]')
  .description('rebuild one projection (or all) beside the live tables and swap without downtime')
  .option('--verify', 'compare the rebuilt tables with the live ones row by row; swap only when identical')
  .action(async (name: string | undefined, opts: { verify?: boolean }) => {
    const { config, logger } = context('warn');
    process.exitCode = await projectionsRebuild(config, logger, name, opts);
  });

program
  .command('events')
  .description('read the event log')
  .command('tail')
  .description('print the last events of the log or of one stream')
  .option('--stream <stream>', 'only this stream')
  .option('-n, --limit <n>', 'how many events', '20')
  .option('-f, --follow', 'keep printing new events')
  .action(async (opts: { stream?: string; limit: string; follow?: boolean }) => {
    const { config, logger } = context('warn');
    const limit = Number(opts.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw new ConfigError(`--limit must be a positive integer, got ${opts.limit}`);
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
      const { config, logger } = context('warn');
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
    const { config, logger } = context('warn');
    process.exitCode = await auditReplay(config, logger, opts);
  });
audit
  .command('verify')
  .description('recompute the SHA-256 hash chain of every stream (or of --stream S, repeatable)')
  .option('--stream <stream...>', 'only these streams')
  .action(async (opts: { stream?: string[] }) => {
    const { config, logger } = context('warn');
    process.exitCode = await auditVerify(config, logger, opts);
  });

program
  .command('import-market-data <dir>')
  .description(
    'import market data in Binance formats (exchangeInfo.json, ticker_24hr.json, klines/) into the store',
  )
  .action(async (dir: string) => {
    const { config, logger } = context('warn');
    process.exitCode = await importMarketData(config, logger, dir);
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
