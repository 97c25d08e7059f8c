import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/shared/errors';
import type { AuthMode, Principal } from './principal';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Credentials the route accepts: `public` (default: none needed), `jwt` (bearer token only: agent and
     * battle management), `key-or-jwt` (`X-API-Key` or bearer, `X-Agent-Id` honoured).
     */
    auth?: AuthMode;
  }
  interface FastifyRequest {
    /** The verified caller; null on public routes. */
    principal: Principal | null;
  }
}

/** The request's principal; throws `INTERNAL_ERROR` when the route was not declared authenticated. */
export const principalOf = (request: FastifyRequest): Principal => {
  if (!request.principal) throw new DomainError('INTERNAL_ERROR', 'route is missing its auth configuration');
  return request.principal;
};

/**
 * The authentication hook of the `/api/v1` scope (ARCHITECTURE §12, STYLE: one hook for the subtree). Each
 * route declares what it accepts in `config.auth` (`public` when absent, `jwt`, `key-or-jwt`); the hook runs on
 * `onRequest` (after the rate limiter, before body parsing and validation) and sets `request.principal`.
 * Registered with skip-override so the hook and the `principal` decoration apply to every sibling route plugin
 * registered after it.
 */
export const authPlugin: FastifyPluginAsync = async (app) => {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    const mode = request.routeOptions.config?.auth ?? 'public';
    if (mode === 'public') return;
    const auth = app.services.auth;
    if (!auth) throw new DomainError('SERVICE_UNAVAILABLE', 'authentication is not available');
    request.principal = await auth.authenticate(request, mode);
  });
};
Object.assign(authPlugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'auth',
});
