import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStrict } from '../../src/endpoints/endpoint';
import { ROUTES_WITHOUT_TOOLS } from '../../src/mcp/coverage';
import { TOOLS } from '../../src/mcp/registry';
import { createTestApp, type TestApp } from '../support/runtime';

/**
 * Every REST route of `/api/v1` has an MCP tool or a written reason for having none (src/mcp/coverage.ts), read
 * from the venue's own OpenAPI document: a new endpoint without a tool fails here, as does a tool naming a route
 * that no longer exists.
 */

const METHODS = ['get', 'post', 'put', 'delete', 'patch'] as const;

/** The part of an OpenAPI operation read here: its JSON request body's schema. */
interface Operation {
  requestBody?: { content?: Record<string, { schema?: { additionalProperties?: unknown } }> };
}
const PREFIX = '/api/v1';

let t: TestApp;
let routes: string[];
/**
 * The routes that refuse unknown input on the REST door (422): those whose JSON body refuses unknown fields
 * (`additionalProperties: false`), and the writes (any method but GET) without a body, which refuse any body and any
 * query parameter they do not declare (`refuseIgnoredInput`).
 */
let refusingRoutes: Set<string>;

beforeAll(async () => {
  t = await createTestApp();
  const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
    paths: Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>;
  };
  const operations = Object.entries(doc.paths)
    .filter(([path]) => path.startsWith(`${PREFIX}/`))
    .flatMap(([path, ops]) =>
      METHODS.filter((m) => ops[m] !== undefined).map((m) => ({
        route: `${m.toUpperCase()} ${path.slice(PREFIX.length)}`,
        refuses:
          ops[m]?.requestBody?.content?.['application/json']?.schema?.additionalProperties === false ||
          (m !== 'get' && ops[m]?.requestBody === undefined),
      })),
    );
  refusingRoutes = new Set(operations.filter((o) => o.refuses).map((o) => o.route));
  routes = operations.map((o) => o.route).sort();
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('MCP coverage of the REST API', () => {
  it('has a tool, or a reason for none, for every /api/v1 route', () => {
    expect(routes.length).toBeGreaterThan(90);
    const byTool = new Set<string>(TOOLS.flatMap((tool) => tool.routes));
    const uncovered = routes.filter((r) => !byTool.has(r) && !(r in ROUTES_WITHOUT_TOOLS));
    expect(uncovered, 'add a tool in src/mcp/toolsets (or a reason in src/mcp/coverage.ts)').toEqual([]);
  });

  it('refuses in a tool the unknown arguments its REST route refuses', () => {
    // A tool standing for a route that refuses unknown input (a strict body, or a write without a body: a 422
    // there) is strict too, so a misspelt or misplaced argument (`step_backtest_batch` with `step`,
    // `cancel_all_orders` with `symbol`) is an error in both doors, not ignored in one of them.
    expect(refusingRoutes.size).toBeGreaterThan(30);
    const loose = TOOLS.filter((tool) => tool.routes.some((r) => refusingRoutes.has(r)))
      .filter((tool) => !isStrict(tool.input))
      .map((tool) => tool.name);
    expect(loose).toEqual([]);
  });

  it('names only routes that exist, and no exempt route has a tool', () => {
    const named = [...TOOLS.flatMap((tool) => tool.routes), ...Object.keys(ROUTES_WITHOUT_TOOLS)];
    expect(named.filter((r) => !routes.includes(r))).toEqual([]);
    const exempt = Object.keys(ROUTES_WITHOUT_TOOLS);
    expect(TOOLS.flatMap((tool) => tool.routes).filter((r) => exempt.includes(r))).toEqual([]);
  });
});
