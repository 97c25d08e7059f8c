import swagger, { type SwaggerTransformObject } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { $ZodType, safeParse } from 'zod/v4/core';

/**
 * Marks an operation whose body may be left out, from the route transform to the document transform (an `x-`
 * key of a route schema is copied onto its operation by @fastify/swagger).
 */
const OPTIONAL_BODY = 'x-optional-body';

/** True when the route's zod body schema accepts no body (`.optional()`, `.nullish()`, a default, …). */
const acceptsNoBody = (body: unknown): boolean => {
  if (!(body instanceof $ZodType)) return false;
  try {
    return safeParse(body, undefined).success;
  } catch {
    return false; // async refinements: assume a body is needed
  }
};

/** The zod transform, marking the operations whose body schema accepts `undefined`. */
const transform: typeof jsonSchemaTransform = (document) => {
  const result = jsonSchemaTransform(document);
  if (!result.schema?.body || !acceptsNoBody(document.schema?.body)) return result;
  return { ...result, schema: { ...result.schema, [OPTIONAL_BODY]: true } };
};

/**
 * @fastify/swagger marks every request body `required: true`; an operation marked by {@link transform} gets
 * `required: false` instead, and the marker is dropped.
 */
const transformObject: SwaggerTransformObject = (document) => {
  if (!('openapiObject' in document)) return document.swaggerObject;
  const doc = document.openapiObject;
  for (const item of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(item ?? {})) {
      if (!operation || typeof operation !== 'object' || !(OPTIONAL_BODY in operation)) continue;
      const op = operation as Record<string, unknown> & { requestBody?: { required?: boolean } };
      delete op[OPTIONAL_BODY];
      if (op.requestBody) op.requestBody.required = false;
    }
  }
  return doc;
};

/**
 * OpenAPI 3 generated from the routes' zod schemas (ARCHITECTURE §17): the document at `/openapi.json`, a
 * docs UI at `/docs`. Registered before the routes so it sees all of them. A request body whose zod schema accepts
 * `undefined` is documented `required: false`.
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
    transform,
    transformObject,
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};
