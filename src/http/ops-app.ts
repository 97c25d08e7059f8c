import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Services } from '../services';
import { closeConnectionsWhenClosing } from './close-connections';
import { errorHandler, notFoundHandler } from './errors';
import { healthRoutes } from './health';
import { metricsRoutes, registerHttpMetrics } from './metrics';
import { loadOperatorAccess } from './operator';
import { registerSecurityHeaders } from './security-headers';

/**
 * The operator endpoints of a process without the API (`worker` with `OPS_PORT`): `/health` for orchestrators
 * and load balancers and `/metrics` for Prometheus, with the same answers as the API's. Errors in the spec's
 * envelope.
 */
export const buildOpsApp = async (services: Services): Promise<FastifyInstance> => {
  const app = Fastify({ loggerInstance: services.logger as FastifyBaseLogger, trustProxy: false });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  closeConnectionsWhenClosing(app as unknown as FastifyInstance);
  app.decorate('services', services);
  app.decorate('operator', loadOperatorAccess(services.config, services.logger));
  await registerSecurityHeaders(app as unknown as FastifyInstance);
  registerHttpMetrics(app as unknown as FastifyInstance);
  await app.register(healthRoutes);
  await app.register(metricsRoutes);
  await app.ready();
  return app as unknown as FastifyInstance;
};
