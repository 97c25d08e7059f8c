import type { Logger } from 'pino';
import type { Config } from '../config';
import { buildApp } from '../http/app';
import { createRuntime } from '../runtime';

/**
 * `serve`: the HTTP server (and, unless `PROJECTIONS=false`, the projection runner) until SIGINT/SIGTERM.
 * Shutdown is graceful: stop accepting, finish in-flight requests, stop projections after their current batch,
 * close the store and the database. A second signal exits at once.
 */
export const serve = async (config: Config, logger: Logger): Promise<void> => {
  const runtime = await createRuntime(config, logger);
  const app = await buildApp(runtime.services);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await app.close().catch((e) => logger.error({ err: e }, 'closing HTTP failed'));
    await runtime.close().catch((e) => logger.error({ err: e }, 'closing runtime failed'));
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  const address = await app.listen({ host: config.HOST, port: config.PORT });
  logger.info(
    {
      address,
      database: runtime.services.database.location,
      event_store: runtime.services.eventStore.name,
      docs: `${address}/docs`,
    },
    `paper-trading venue listening on ${address} (docs: ${address}/docs, health: ${address}/health)`,
  );
};

/** `worker`: only the projection runner (and later the matching engine), no HTTP; for scaled deployments. */
export const worker = async (config: Config, logger: Logger): Promise<void> => {
  const runtime = await createRuntime({ ...config, PROJECTIONS: true }, logger);
  logger.info({ projections: runtime.services.projections.projections.map((p) => p.name) }, 'worker running');
  const stop = async () => {
    await runtime.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
};
