import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatPosition } from '../../ports/event-store';
import { pingDatabase } from '../db/database';
import type { Services } from '../services';
import { VERSION } from '../version';

const componentSchema = z.object({ status: z.enum(['ok', 'down']) }).catchall(z.unknown());

const statusSchema = z
  .enum(['ok', 'degraded', 'down'])
  .describe(
    '`ok`; `degraded`: a check failed or the database is away (the process answers, with 503 where it needs ' +
      'the database); `down`: it cannot serve at all',
  );

/** The dependencies named in every answer (the original clients' form, docs/compatibility.md). */
const DEPENDENCIES = ['database', 'event_store', 'market_feed', 'projections'] as const;

const healthSchema = z.object({
  status: statusSchema,
  version: z.string(),
  db_connected: z.boolean().describe('whether the database answers (the original clients read it)'),
  redis_connected: z
    .boolean()
    .describe('always true: the venue needs no cache server (the original clients read it)'),
  dependencies: z
    .record(z.enum(DEPENDENCIES), z.enum(['ok', 'down']))
    .describe('each dependency by name, `ok` or `down` (no details: those are for the operator)'),
  uptime_seconds: z.number().optional(),
  event_store: componentSchema.optional(),
  database: componentSchema.optional(),
  projections: z
    .array(
      z.object({
        name: z.string(),
        version: z.number().int(),
        generation: z.number().int().nullable(),
        state: z.string(),
        checkpoint: z.string(),
        lag_events: z.number().int().optional(),
        lag_ms: z.number().optional(),
        last_error: z.string().optional(),
      }),
    )
    .optional(),
  checks: z.record(z.string(), componentSchema).optional(),
  process: z
    .object({
      pid: z.number().int(),
      projections: z.boolean().describe('whether this process folds the read models'),
      leaderships: z.record(z.string(), z.boolean()).describe('singleton roles held by this process'),
      memory_rss_bytes: z.number().int(),
    })
    .optional(),
});

/** How long one probe of `/health` may take before it counts as down (ms). */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * `GET /health` (outside `/api/v1`, ARCHITECTURE §14). Public answer, for load balancers and uptime checks:
 * `{status, version}` and the dependencies by name, up or down (`database`, `event_store`, `market_feed`,
 * `projections`, with the original clients' `db_connected` and `redis_connected`, docs/compatibility.md) with 200 while the process serves (`ok`, or `degraded` when a check failed or the database
 * is away: the process stays in rotation and answers 503 `SERVICE_UNAVAILABLE` with `Retry-After` where it needs
 * the database). The operator view (`Authorization: Bearer <OPERATOR_TOKEN>`, docs/operations.md) adds the
 * details: event store head, database (kind, location, ping, outage), projections and their lag, the checks
 * capabilities add (market feed, matching engine) and this process (leaderships held).
 */
export const healthRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/health',
    {
      schema: {
        tags: ['health'],
        summary: 'Service health; details (database, projections, market feed) for the operator only',
        description:
          'Public: `status`, `version`, `dependencies` (database, event_store, market_feed, projections: ok or ' +
          'down) and the booleans `db_connected`, `redis_connected` (always true: no cache server). With `Authorization: Bearer <OPERATOR_TOKEN>`: event store, database, ' +
          'projection lag, checks (market feed, matching engine) and the process.',
        response: { 200: healthSchema, 503: healthSchema },
      },
    },
    async (request, reply) => {
      const { eventStore, database, projections, startedAt, leaderships } = app.services;
      reply.header('cache-control', 'no-store');
      const { status, available, checks, checksOk } = await venueHealth(app.services);
      // By name, from what this process already knows (no probe: load balancers call this often). The event
      // store lives in the database unless it is EventStoreDB, which is probed.
      const eventStoreUp =
        eventStore.name === 'esdb'
          ? (await timed(async () => ({ head: formatPosition(await eventStore.headPosition()) }))).status ===
            'ok'
          : available;
      const dependencies = {
        database: up(available),
        event_store: up(eventStoreUp),
        market_feed: up(checks['market_feed'] === undefined || checks['market_feed'].status === 'ok'),
        projections: up(available && projections.failed.length === 0),
      };
      const compat = { db_connected: available, redis_connected: true, dependencies };
      if (!app.operator.allows(request)) {
        return {
          status,
          version: VERSION,
          ...compat,
        };
      }
      const outage = database.availability.snapshot();
      const eventStoreStatus = available
        ? await timed(async () => {
            const head = await eventStore.headPosition();
            return { adapter: eventStore.name, head: formatPosition(head) };
          })
        : { status: 'down' as const, adapter: eventStore.name, error: 'the database is unavailable' };
      const databaseStatus = {
        ...(available
          ? await timed(async () => ({ ping_ms: round(await pingDatabase(database.db)) }))
          : { status: 'down' as const, error: outage.lastError ?? 'unavailable' }),
        kind: database.kind,
        location: database.location,
        outages: outage.outages,
        ...(outage.downSince ? { down_since: new Date(outage.downSince).toISOString() } : {}),
      };
      const projectionStatus = available
        ? await withTimeout(projections.status(), PROBE_TIMEOUT_MS).catch(() => [])
        : [];
      const degraded =
        !checksOk ||
        eventStoreStatus.status === 'down' ||
        databaseStatus.status === 'down' ||
        projectionStatus.some((p) => p.state === 'failed');
      return {
        status: degraded ? ('degraded' as const) : ('ok' as const),
        version: VERSION,
        ...compat,
        uptime_seconds: Math.round((Date.now() - startedAt) / 1000),
        event_store: eventStoreStatus,
        database: databaseStatus,
        projections: projectionStatus,
        checks,
        process: {
          pid: process.pid,
          projections: projections.folding,
          leaderships: Object.fromEntries(leaderships.map((l) => [l.name, l.isLeader()])),
          memory_rss_bytes: process.memoryUsage.rss(),
        },
      };
    },
  );
};

/**
 * The venue's health as `/health` answers it to the public: `status` is `ok` when the database answers
 * (`available`, from what this process already knows: no probe) and every health check a capability adds
 * (`checks` by name, e.g. the market feed and the matching engine, each run once: `ok` or `down` with its details;
 * a check that throws is `down` with its message) passes, else `degraded`. Never throws. The Binance door's
 * `GET /sapi/v1/system/status` reads it too (src/binance/sapi-routes.ts).
 */
export const venueHealth = async (
  services: Services,
): Promise<{
  status: 'ok' | 'degraded';
  available: boolean;
  checks: Record<string, z.infer<typeof componentSchema>>;
  checksOk: boolean;
}> => {
  const available = services.database.availability.available;
  const checks: Record<string, z.infer<typeof componentSchema>> = {};
  for (const c of services.healthChecks) {
    const r = await c.check().catch((e: Error) => ({ ok: false, error: e.message }));
    const { ok, ...rest } = r;
    checks[c.name] = { status: ok ? 'ok' : 'down', ...rest };
  }
  const checksOk = Object.values(checks).every((c) => c.status === 'ok');
  return { status: available && checksOk ? 'ok' : 'degraded', available, checks, checksOk };
};

const up = (ok: boolean) => (ok ? ('ok' as const) : ('down' as const));

const round = (ms: number) => Math.round(ms * 100) / 100;

const withTimeout = <T>(work: Promise<T>, ms: number): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
    work.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });

const timed = async (probe: () => Promise<Record<string, unknown>>) => {
  const started = performance.now();
  try {
    const detail = await withTimeout(probe(), PROBE_TIMEOUT_MS);
    return { status: 'ok' as const, latency_ms: round(performance.now() - started), ...detail };
  } catch (error) {
    return { status: 'down' as const, error: (error as Error).message };
  }
};
