import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';

/**
 * OpenAPI 3 generated from the routes' zod schemas (ARCHITECTURE §17): the document at `/openapi.json`, a
 * docs UI at `/docs`. Registered before the routes so it sees all of them.
 */
export const registerOpenApi = async (app: FastifyInstance, version: string): Promise<void> => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Paper trading venue',
        description:
          'Simulated trading venue for automated agents: real prices, simulated slippage and fees, risk limits, ' +
          'backtests and battles. All REST paths sit under `/api/v1`; errors use the envelope ' +
          '`{ "error": { "code", "message", "details" } }`.',
        version,
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};
