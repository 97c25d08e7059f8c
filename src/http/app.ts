import websocket from '@fastify/websocket';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { DomainError } from '../../domain/shared/errors';
import type { Services } from '../services';
import { VERSION } from '../version';
import { registerBodyLimits } from './body-limits';
import { writeReceipts } from './call';
import { closeConnectionsWhenClosing } from './close-connections';
import { clientErrorHandler, errorHandler, hasEmptyPathParam, notFoundHandler } from './errors';
import { healthRoutes } from './health';
import { metricsRoutes, registerHttpMetrics } from './metrics';
import { registerOpenApi } from './openapi';
import { loadOperatorAccess } from './operator';
import { poisonedKeyError, poisonedKeyOf } from './poisoned-keys';
import { registerRateLimit } from './rate-limit';
import { requestIdMaker } from './request-id';
import { lazyRequestLogger } from './request-logger';
import { apiRoutes, rootRoutes } from './routes/index';
import { registerSecurityHeaders } from './security-headers';
import { unstorablePath, unstorableTextError, urlNul } from './unstorable-text';
import { WS_FRAME_LIMIT_BYTES } from './ws/plugin';
import { socketErrorHandler } from './ws/socket-errors';

declare module 'fastify' {
  interface FastifyInstance {
    /** The runtime's services (STYLE: plugins as dependency injection). */
    services: Services;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Replaces fastify's JSON body parser with the same parser (prototype poisoning still refused) that reads an
 * empty or blank body as no body. Many clients send `Content-Type: application/json` on every request, also on
 * body-less calls (`DELETE /trade/order/{id}`, `POST /agents/{id}/reset`, backtest start and step); those must
 * not fail. A route whose schema needs a body still answers `VALIDATION_ERROR` naming the missing body. A body
 * holding U+0000 or a lone UTF-16 surrogate anywhere is refused (src/http/unstorable-text.ts); one refused for a
 * `__proto__` or `constructor.prototype` key says which key and why (src/http/poisoned-keys.ts). A body whose
 * bytes are not UTF-8 is not JSON (RFC 8259 §8.1) and is refused ({@link notUtf8Error}): decoding it as a string
 * put U+FFFD in place of the bytes, and that text was stored (an account or agent named `caf\uFFFD`).
 */
/** The poisoning key of `text` when it is valid JSON holding one (see {@link poisonedKeyOf}). */
const poisonedKeyIn = (text: string): ReturnType<typeof poisonedKeyOf> => {
  try {
    return poisonedKeyOf(JSON.parse(text));
  } catch {
    return undefined;
  }
};

/** Strict UTF-8: a malformed sequence throws instead of becoming U+FFFD. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `VALIDATION_ERROR` 422 for a JSON body whose bytes are not UTF-8 text. */
const notUtf8Error = (): DomainError =>
  new DomainError('VALIDATION_ERROR', 'request body is not valid JSON: it is not UTF-8 text', {
    issues: [{ field: 'body', location: 'body', message: 'is not UTF-8 text' }],
  });

export const acceptEmptyJsonBodies = (app: FastifyInstance): void => {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = typeof body === 'string' ? body : utf8.decode(body);
    } catch {
      done(notUtf8Error(), undefined);
      return;
    }
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    json(request, text, (error: Error | null, parsed?: unknown) => {
      if (error) {
        // Valid JSON refused by the secure parser: a poisoning key, which the error should name (not "not valid JSON").
        const poisoned = poisonedKeyIn(text);
        done(poisoned ? poisonedKeyError(poisoned.field, poisoned.key) : error, undefined);
        return;
      }
      const bad = unstorablePath(parsed);
      if (bad) done(unstorableTextError(bad.field, 'body', bad.reason), undefined);
      else done(error, parsed);
    });
  });
};

/**
 * Builds the HTTP application (ARCHITECTURE §3, STYLE: fastify/demo): zod validation and serialisation,
 * OpenAPI at `/openapi.json` with docs at `/docs`, the error envelope for every error and unknown route,
 * request ids (`X-Request-Id`, taken from the client when well-formed), rate limits on `/api/v1`,
 * `/health`, WebSocket support, then every capability's routes. Tests call it with `inject`.
 */
export const buildApp = async (services: Services): Promise<FastifyInstance> => {
  const newRequestId = requestIdMaker();
  const app = Fastify({
    loggerInstance: services.logger as FastifyBaseLogger,
    // A request's child logger is made only when it writes a line (at LOG_LEVEL=warn a good request writes none).
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: services.config.BODY_LIMIT_BYTES,
    // Requests Node's parser refuses (headers or URL too large: 431) answer in the envelope too.
    clientErrorHandler,
    // Router errors (a bad %-escape, a path parameter over the length limit) answer in the envelope too.
    frameworkErrors: (error, request, reply) => {
      errorHandler(error, request, reply);
    },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newRequestId();
    },
    trustProxy: false,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  // JSON only: a text/plain body is refused with 415 instead of reaching a schema as a string.
  app.removeContentTypeParser('text/plain');
  acceptEmptyJsonBodies(app as unknown as FastifyInstance);
  writeReceipts(app as unknown as FastifyInstance);
  closeConnectionsWhenClosing(app as unknown as FastifyInstance);
  app.decorate('services', services);
  // The sockets' shared credential check reads the database: none runs once the app is closed.
  app.addHook('onClose', async () => services.credentialWatcher?.close());
  app.decorate('operator', loadOperatorAccess(services.config, services.logger));
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const nul = urlNul(request.url);
    if (nul) throw unstorableTextError(nul.field, nul.location);
  });

  registerBodyLimits(app as unknown as FastifyInstance, services.config.BODY_LIMIT_BYTES);
  await registerSecurityHeaders(app as unknown as FastifyInstance);
  await registerOpenApi(app as unknown as FastifyInstance, VERSION);
  await app.register(websocket, {
    options: { maxPayload: WS_FRAME_LIMIT_BYTES },
    errorHandler: socketErrorHandler,
  });
  registerHttpMetrics(app as unknown as FastifyInstance);
  await app.register(healthRoutes);
  await app.register(metricsRoutes);
  for (const { plugin } of rootRoutes) await app.register(plugin);
  await app.register(
    async (api) => {
      await registerRateLimit(api as unknown as FastifyInstance);
      // API answers are per caller or live (and some carry secrets: a registration's API secret, an agent's key):
      // no cache, shared or private, may keep one. A route that wants caching sets its own Cache-Control.
      api.addHook('onSend', async (_request, reply) => {
        if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      });
      // Unknown /api/v1 routes go through the scope's hooks too, so they carry the rate-limit headers.
      api.setNotFoundHandler(notFoundHandler);
      // A route whose last segment is a parameter also matches an empty one (`GET /battles/`); no route of the
      // interface has an empty id, so it answers as an empty middle segment (`/battles//participants`) does:
      // 404 `NOT_FOUND`, after the rate limiter (its headers) and before authentication and validation.
      // A callback hook, not an async one: every order passes it, and an async hook costs each request a promise.
      api.addHook('onRequest', (request, reply, done) => {
        if (hasEmptyPathParam(request.params)) notFoundHandler(request, reply);
        else done();
      });
      for (const { plugin } of apiRoutes) await api.register(plugin);
    },
    { prefix: '/api/v1' },
  );
  await app.ready();
  return app as unknown as FastifyInstance;
};
