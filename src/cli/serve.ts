import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { buildApp } from '../http/app';
import { buildOpsApp } from '../http/ops-app';
import { createRuntime } from '../runtime';
import { retryStartup } from './startup-retry';

/**
 * `serve`: the HTTP server (and, unless `PROJECTIONS=false`, the projection runner) until SIGINT/SIGTERM.
 * Shutdown is graceful: stop accepting, finish in-flight requests, stop projections after their current batch,
 * close the store and the database. A second signal exits at once.
 */
export const serve = async (config: Config, logger: Logger): Promise<void> => {
  const runtime = await retryStartup(
    () => createRuntime(config, logger, { equitySnapshots: true, webhooks: config.PROJECTIONS }),
    logger,
  );
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
  let address: string;
  try {
    address = await app.listen({ host: config.HOST, port: config.PORT });
  } catch (error) {
    // The port is taken (EADDRINUSE) or not ours to use: close the database cleanly before the one-line error.
    await app.close().catch(() => {});
    await runtime.close().catch(() => {});
    throw error;
  }
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

/**
 * `worker`: the projection runner and the matching engine, no API; for scaled deployments. With `OPS_PORT`, it
 * serves the operator endpoints (`/health`, `/metrics`) there. It folds every page
 * at once (`READ_MODEL_LAZY_MS` = 0): the requests waiting for its read models are in the API processes, which
 * it cannot hear.
 */
export const worker = async (config: Config, logger: Logger): Promise<void> => {
  const runtime = await retryStartup(
    () =>
      createRuntime({ ...config, PROJECTIONS: true, READ_MODEL_LAZY_MS: 0 }, logger, {
        equitySnapshots: true,
        webhooks: true,
        role: 'worker',
      }),
    logger,
  );
  let ops: FastifyInstance | undefined;
  if (config.OPS_PORT !== undefined) {
    try {
      ops = await buildOpsApp(runtime.services);
      const address = await ops.listen({ host: config.HOST, port: config.OPS_PORT });
      logger.info({ address }, `worker operator endpoints on ${address} (/health)`);
    } catch (error) {
      await ops?.close().catch(() => {});
      await runtime.close().catch(() => {});
      throw error;
    }
  }
  logger.info({ projections: runtime.services.projections.projections.map((p) => p.name) }, 'worker running');
  const stop = async () => {
    await ops?.close().catch((e) => logger.error({ err: e }, 'closing HTTP failed'));
    await runtime.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
};
