import type { FastifyPluginAsync } from 'fastify';

/**
 * The `/api/v1` route plugins, one per resource group (ARCHITECTURE §3). Each capability appends its plugin
 * here; `buildApp` registers them inside the versioned scope, where the rate limiter and auth hooks apply.
 */
export const apiRoutes: { name: string; plugin: FastifyPluginAsync }[] = [];

/** Plugins mounted at the root (outside `/api/v1`), e.g. the WebSocket endpoint `/ws/v1`. */
export const rootRoutes: { name: string; plugin: FastifyPluginAsync }[] = [];
