import { DomainError } from '../../domain/shared/errors';
import { TOOLSETS, type ToolDef, type Toolset } from './tool';
import { accountTools } from './toolsets/account';
import { agentTools } from './toolsets/agents';
import { analyticsTools } from './toolsets/analytics';
import { backtestTools } from './toolsets/backtest';
import { battleTools } from './toolsets/battle';
import { marketTools } from './toolsets/market';
import { tradingTools } from './toolsets/trading';
import { webhookTools } from './toolsets/webhooks';

/**
 * The one tool registry of the MCP server (docs/mcp.md): every toolset's table, in the order a host lists them.
 * Both transports — Streamable HTTP in the venue (`src/mcp/http.ts`) and stdio (`src/mcp/stdio.ts`) — register
 * these very definitions; only how a tool reaches its use case differs.
 */
export const TOOLS: readonly ToolDef[] = [
  ...accountTools,
  ...marketTools,
  ...tradingTools,
  ...backtestTools,
  ...analyticsTools,
  ...battleTools,
  ...agentTools,
  ...webhookTools,
];

/**
 * The toolsets of a `--toolsets` list (comma-separated, any case; `all` or empty: every toolset).
 * `VALIDATION_ERROR` naming the known toolsets for an unknown one.
 */
export const parseToolsets = (raw: string | undefined): Toolset[] => {
  const names = (raw ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (names.length === 0 || names.includes('all')) return [...TOOLSETS];
  for (const name of names) {
    if (!(TOOLSETS as readonly string[]).includes(name)) {
      throw new DomainError(
        'VALIDATION_ERROR',
        `unknown toolset ${name}: use ${TOOLSETS.join(', ')} or all`,
        {
          toolset: name,
        },
      );
    }
  }
  return names as Toolset[];
};

/** The tools of the given toolsets (every tool when none are given). */
export const selectTools = (toolsets: readonly Toolset[] = TOOLSETS): ToolDef[] =>
  TOOLS.filter((t) => toolsets.includes(t.toolset));
