import type { FastifySchema } from 'fastify';
import type { RateLimitGroup } from '../../application/rate-limits';
import type { AuthMode } from '../../auth/principal';

/** The OpenAPI security requirement of an auth mode (the `apiKey` and `bearer` schemes of `src/http/openapi.ts`). */
const SECURITY: Partial<Record<AuthMode, Record<string, string[]>[]>> = {
  'key-or-jwt': [{ apiKey: [] }, { bearer: [] }],
  jwt: [{ bearer: [] }],
};

/** What the auth and rate-limit plugins read of a route (`auth` default `public`, `rateLimitGroup` `general`). */
interface RouteConfig {
  readonly auth?: AuthMode;
  readonly rateLimitGroup?: RateLimitGroup;
}

/**
 * The options builder of a group of routes that share their OpenAPI tag, credentials and rate-limit group: each
 * route gives its summary and its schema (params, query, body, responses, description). The route's `config` carries
 * the auth mode and rate-limit group the plugins enforce; its OpenAPI `security` follows from the auth mode, so the
 * document and the check cannot disagree.
 */
export const routeGroup = <C extends RouteConfig>(tag: string, config: C) => {
  const security = config.auth ? SECURITY[config.auth] : undefined;
  return <S extends FastifySchema>(summary: string, schema: S) =>
    ({ config, schema: { tags: [tag], ...(security ? { security } : {}), summary, ...schema } }) as const;
};
