import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
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
