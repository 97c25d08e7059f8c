import { ROUTES_WITHOUT_TOOLS } from './coverage';
import { TOOLS } from './registry';
import type { ToolDef } from './tool';

/**
 * The tool list of docs/mcp.md, generated from the registry (test/mcp/tool-list.unit.test.ts checks that the page
 * holds exactly this text between its markers, and rewrites it with `UPDATE_DOCS=1`).
 */

/** The markers around the generated list in docs/mcp.md. */
export const TOOL_LIST_BEGIN = '<!-- tool list: generated from src/mcp/registry.ts -->';
export const TOOL_LIST_END = '<!-- end of tool list -->';

const hints = (t: ToolDef): string =>
  [
    t.annotations.readOnlyHint ? 'read-only' : 'write',
    t.annotations.destructiveHint ? 'destructive' : '',
    t.annotations.idempotentHint ? 'idempotent' : '',
  ]
    .filter(Boolean)
    .join(', ');

const args = (t: ToolDef): string => {
  const keys = Object.keys(t.input.shape);
  return keys.length === 0 ? '—' : keys.map((k) => `\`${k}\``).join(', ');
};

const routes = (t: ToolDef): string => t.routes.map((r) => `\`${r}\``).join('<br>');

/**
 * Markdown: one table per toolset, a row per tool (name, arguments, credential, hints, the REST routes it stands
 * for, description), then the REST routes without a tool and why.
 */
export const toolListMarkdown = (): string => {
  const sets = [...new Set(TOOLS.map((t) => t.toolset))];
  const out: string[] = [TOOL_LIST_BEGIN, ''];
  for (const set of sets) {
    const tools = TOOLS.filter((t) => t.toolset === set);
    out.push(
      `### ${set} (${tools.length})`,
      '',
      '| tool | arguments | credential | hints | REST (`/api/v1`) | what it does |',
    );
    out.push('|---|---|---|---|---|---|');
    for (const t of tools) {
      out.push(
        `| \`${t.name}\` | ${args(t)} | ${t.auth} | ${hints(t)} | ${routes(t)} | ${t.description.replaceAll('|', '\\|')} |`,
      );
    }
    out.push('');
  }
  out.push(
    `${TOOLS.length} tools.`,
    '',
    '### REST routes without a tool',
    '',
    '| route | why |',
    '|---|---|',
  );
  for (const [route, why] of Object.entries(ROUTES_WITHOUT_TOOLS)) out.push(`| \`${route}\` | ${why} |`);
  out.push('', TOOL_LIST_END);
  return out.join('\n');
};
