import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatPosition } from '../../../ports/event-store';
import { pingDatabase } from '../../db/database';
import { VERSION } from '../../version';

const componentSchema = z.object({ status: z.enum(['ok', 'down']) }).catchall(z.unknown());

const healthSchema = z.object({
  status: z
    .enum(['ok', 'degraded', 'down'])
    .describe('`ok`, `degraded` (a check failed) or `down` (storage unreachable)'),
  version: z.string(),
  uptime_seconds: z.number(),
  event_store: componentSchema,
  database: componentSchema,
  projections: z.array(
    z.object({
      name: z.string(),
      version: z.number().int(),
      generation: z.number().int().nullable(),
      state: z.string(),
      checkpoint: z.string(),
      lag_events: z.number().int().optional(),
      last_error: z.string().optional(),
    }),
  ),
  checks: z.record(z.string(), componentSchema),
});

/**
 * `GET /health` (outside `/api/v1`, ARCHITECTURE §14): event store, database, projection lag and the checks
 * capabilities add (market feed...). 200 when everything answers, 503 when the event store or database is down.
 */
export const healthRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/health',
    {
      schema: {
        tags: ['health'],
        summary: 'Service health: event store, database, projection lag, market feed',
        response: { 200: healthSchema, 503: healthSchema },
      },
    },
    async (_request, reply) => {
      const { eventStore, database, projections, healthChecks, startedAt } = app.services;
      const eventStoreStatus = await timed(async () => {
        const head = await eventStore.headPosition();
        return { adapter: eventStore.name, head: formatPosition(head) };
      });
      const databaseStatus = await timed(async () => {
        const latency = await pingDatabase(database.db);
        return { kind: database.kind, location: database.location, ping_ms: round(latency) };
      });
      const projectionStatus = await projections.status().catch(() => []);
      const checks: Record<string, z.infer<typeof componentSchema>> = {};
      for (const c of healthChecks) {
        const r = await c.check().catch((e: Error) => ({ ok: false, error: e.message }));
        const { ok, ...rest } = r;
        checks[c.name] = { status: ok ? 'ok' : 'down', ...rest };
      }
      const storageDown = eventStoreStatus.status === 'down' || databaseStatus.status === 'down';
      const degraded =
        Object.values(checks).some((c) => c.status !== 'ok') ||
        projectionStatus.some((p) => p.state === 'failed');
      const status = storageDown ? 'down' : degraded ? 'degraded' : 'ok';
      return reply.status(storageDown ? 503 : 200).send({
        status,
        version: VERSION,
        uptime_seconds: Math.round((Date.now() - startedAt) / 1000),
        event_store: eventStoreStatus,
        database: databaseStatus,
        projections: projectionStatus,
        checks,
      });
    },
  );
};

const round = (ms: number) => Math.round(ms * 100) / 100;

const timed = async (probe: () => Promise<Record<string, unknown>>) => {
  const started = performance.now();
  try {
    const detail = await probe();
    return { status: 'ok' as const, latency_ms: round(performance.now() - started), ...detail };
  } catch (error) {
    return { status: 'down' as const, error: (error as Error).message };
  }
};
