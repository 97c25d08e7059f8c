import type { FastifyInstance } from 'fastify';
import client from 'prom-client';
import { DomainError } from '../../domain/shared/errors';

/**
 * Counts and times every request of `app` per route template (`ptv_http_requests_total`,
 * `ptv_http_request_duration_seconds`; src/operations/metrics.ts), and gauges its open WebSockets. Register before
 * the routes.
 */
export const registerHttpMetrics = (app: FastifyInstance): void => {
  const { metrics } = app.services;
  app.addHook('onResponse', async (request, reply) => {
    // The template, never the raw URL (unbounded label values); requests no route matched share one label.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
  if (!metrics.registry.getSingleMetric('ptv_websocket_connections')) {
    new client.Gauge({
      name: 'ptv_websocket_connections',
      help: 'Open /ws/v1 WebSocket connections',
      registers: [metrics.registry],
      collect() {
        const server = (app as FastifyInstance & { websocketServer?: { clients: Set<unknown> } })
          .websocketServer;
        this.set(server?.clients.size ?? 0);
      },
    });
  }
};

/**
 * `GET /metrics`: the process's metrics in Prometheus' text format, for the operator only (`Authorization: Bearer
 * <OPERATOR_TOKEN>`, like `/health`'s details); `INVALID_TOKEN` 401 otherwise. docs/operations.md "Metrics".
 */
export const metricsRoutes = async (app: FastifyInstance): Promise<void> => {
  app.get(
    '/metrics',
    {
      // An operator endpoint, not part of the API's contract (documented in docs/operations.md, "Metrics").
      schema: { hide: true },
    },
    async (request, reply) => {
      if (!app.operator.allows(request)) {
        throw new DomainError(
          'INVALID_TOKEN',
          'the operator token is required: Authorization: Bearer <OPERATOR_TOKEN>',
          {
            reason: 'operator_only',
          },
        );
      }
      const { registry } = app.services.metrics;
      const body = await registry.metrics();
      return reply.header('cache-control', 'no-store').type(registry.contentType).send(body);
    },
  );
};
