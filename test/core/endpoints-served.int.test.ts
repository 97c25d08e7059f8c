import { describe, expect, it } from 'vitest';
import { accountEndpoints } from '../../src/endpoints/account';
import { agentEndpoints } from '../../src/endpoints/agents';
import { analyticsEndpoints } from '../../src/endpoints/analytics';
import { backtestEndpoints } from '../../src/endpoints/backtest';
import { battleEndpoints } from '../../src/endpoints/battles';
import { type Endpoint, openApiPath } from '../../src/endpoints/endpoint';
import { tradingEndpoints } from '../../src/endpoints/trading';
import { webhookEndpoints } from '../../src/endpoints/webhooks';
import { ROUTES_WITHOUT_TOOLS } from '../../src/mcp/coverage';
import { TOOLS } from '../../src/mcp/registry';
import { useTestApp } from '../support/test-app';

/**
 * Every endpoint of `src/endpoints/` that declares its REST route is served there, and by an MCP tool (or its route
 * has a written reason for none, src/mcp/coverage.ts). A route file serves a table's endpoints with `serveAll`, which
 * serves only those its docs name (a table may be served by several files), and a toolset's table names the
 * endpoints it makes tools of: an endpoint left out of both would vanish from the API, its OpenAPI document and the
 * tool list without a type error or a failing coverage test (test/mcp/coverage.int.test.ts reads the routes that
 * are served). Here it fails, named.
 */
const TABLES: Record<string, Record<string, Endpoint>> = {
  account: accountEndpoints,
  agents: agentEndpoints,
  analytics: analyticsEndpoints,
  backtest: backtestEndpoints,
  battles: battleEndpoints,
  trading: tradingEndpoints,
  webhooks: webhookEndpoints,
};

/** Each endpoint with a route: `table.name`, its method and its fastify path under `/api/v1`. */
const ROUTED = Object.entries(TABLES).flatMap(([table, endpoints]) =>
  Object.entries(endpoints).flatMap(([name, ep]) =>
    ep.route ? [{ endpoint: `${table}.${name}`, method: ep.route.method, path: ep.route.path }] : [],
  ),
);

const t = useTestApp();

describe('the endpoints with a REST route', () => {
  it('are each served at their method and path under /api/v1', () => {
    expect(ROUTED.length).toBeGreaterThan(80);
    const unserved = ROUTED.filter((r) => !t.app.hasRoute({ method: r.method, url: `/api/v1${r.path}` }));
    expect(unserved, 'serve it in a route file of src/http/routes').toEqual([]);
  });

  it('each have an MCP tool, or a reason for none', () => {
    const byTool = new Set<string>(TOOLS.flatMap((tool) => tool.routes));
    // The tools name routes as the OpenAPI document writes them (`openApiPath`: `{name}` for fastify's `:name`).
    const toolless = ROUTED.filter((r) => {
      const route = `${r.method} ${openApiPath(r.path)}`;
      return !byTool.has(route) && !(route in ROUTES_WITHOUT_TOOLS);
    });
    expect(toolless, 'add a tool in src/mcp/toolsets (or a reason in src/mcp/coverage.ts)').toEqual([]);
  });
});
