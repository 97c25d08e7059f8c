import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_DURATION_MINUTES } from '../../domain/battle/config';
import { MAX_STARTING_BALANCE } from '../../domain/shared/starting-balance';
import { selectTools } from '../../src/mcp/registry';
import { buildMcpCatalog } from '../../src/mcp/server';
import { TOOL_LIST_BEGIN, TOOL_LIST_END, toolListMarkdown } from '../../src/mcp/tool-list';

/** docs/mcp.md lists exactly the registry's tools (`UPDATE_DOCS=1` rewrites the list). */
const DOC = path.resolve(import.meta.dirname, '../../docs/mcp.md');

describe('docs/mcp.md', () => {
  it('holds the tool list generated from the registry', () => {
    const page = fs.readFileSync(DOC, 'utf8');
    const begin = page.indexOf(TOOL_LIST_BEGIN);
    const end = page.indexOf(TOOL_LIST_END);
    expect(begin, 'the page has the list markers').toBeGreaterThanOrEqual(0);
    const current = page.slice(begin, end + TOOL_LIST_END.length);
    const expected = toolListMarkdown();
    if (process.env['UPDATE_DOCS'] === '1' && current !== expected) {
      fs.writeFileSync(DOC, page.replace(current, expected));
      return;
    }
    expect(current, 'run UPDATE_DOCS=1 npx vitest run test/mcp/tool-list.unit.test.ts').toBe(expected);
  });
});

/**
 * Every argument a tool takes says its unit and its bounds (docs/mcp.md): an agent reads them before it calls, so
 * a starting balance names USDT and the bounds `normalizeStartingBalance` enforces, and a battle's duration its
 * range, wherever they appear (the top level, a battle's nested `config`, a replay's `override_config`).
 */
describe('the MCP tool list states units and bounds', () => {
  /** Every `[path, schema]` below `schema` whose last key is `name`. */
  const fieldsNamed = (name: string, schema: unknown, path = ''): [string, Record<string, unknown>][] => {
    if (schema === null || typeof schema !== 'object') return [];
    return Object.entries(schema as Record<string, unknown>).flatMap(([key, value]) => [
      ...(key === name && path.endsWith('properties')
        ? [[`${path}.${key}`, value as Record<string, unknown>]]
        : []),
      ...fieldsNamed(name, value, `${path}.${key}`),
    ]) as [string, Record<string, unknown>][];
  };
  const { list } = buildMcpCatalog(selectTools());

  it('starting balances: USDT, greater than 0 and at most MAX_STARTING_BALANCE', () => {
    const found = list.flatMap((tool) =>
      ['starting_balance', 'new_starting_balance'].flatMap((name) =>
        fieldsNamed(name, tool.inputSchema).map(([path, field]) => [`${tool.name}${path}`, field] as const),
      ),
    );
    expect(found.map(([path]) => path.split('.')[0])).toEqual(
      expect.arrayContaining([
        'reset_account',
        'create_backtest',
        'create_battle',
        'update_battle',
        'create_agent',
      ]),
    );
    for (const [path, field] of found) {
      expect(field['description'], path).toMatch(
        new RegExp(`^USDT, greater than 0 and at most ${MAX_STARTING_BALANCE}, up to 8 decimal places`),
      );
    }
  });

  it("a battle's duration_minutes: its range", () => {
    const found = list.flatMap((tool) =>
      fieldsNamed('duration_minutes', tool.inputSchema).map(
        ([path, field]) => [`${tool.name}${path}`, field] as const,
      ),
    );
    expect(found.length).toBeGreaterThanOrEqual(3);
    for (const [path, field] of found) {
      expect(field['description'], path).toContain(`an integer from 1 to ${MAX_DURATION_MINUTES}`);
    }
  });
});
