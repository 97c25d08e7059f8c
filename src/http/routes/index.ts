import type { FastifyPluginAsync } from 'fastify';
import { authPlugin } from '../../auth/plugin';
import { binanceRoutes } from '../../binance/plugin';
import { mcpRoutes } from '../../mcp/http';
import { dashboardRoutes } from '../dashboard';
import { websocketRoutes } from '../ws/plugin';
import { accountRoutes } from './account';
import { agentRoutes } from './agents';
import { analyticsRoutes } from './analytics';
import { authRoutes } from './auth';
import { backtestResultsRoutes } from './backtest-results';
import { backtestSandboxRoutes } from './backtest-sandbox';
import { backtestSessionsRoutes } from './backtest-sessions';
import { battleRoutes } from './battles';
import { indicatorRoutes } from './indicators';
import { marketRoutes } from './market';
import { tradeRoutes } from './trade';
import { walletRoutes } from './wallet';
import { webhookRoutes } from './webhooks';

/**
 * The `/api/v1` route plugins, one per resource group (ARCHITECTURE §3). Each capability appends its plugin
 * here; `buildApp` registers them inside the versioned scope, where the rate limiter and auth hooks apply.
 */
export const apiRoutes: { name: string; plugin: FastifyPluginAsync }[] = [
  // First: the auth hook (skip-override) covers every route plugin registered after it in `/api/v1`.
  { name: 'auth-hook', plugin: authPlugin },
  { name: 'auth', plugin: authRoutes as FastifyPluginAsync },
  { name: 'account', plugin: accountRoutes as FastifyPluginAsync },
  { name: 'agents', plugin: agentRoutes as FastifyPluginAsync },
  { name: 'market', plugin: marketRoutes as FastifyPluginAsync },
  { name: 'indicators', plugin: indicatorRoutes as FastifyPluginAsync },
  { name: 'trade', plugin: tradeRoutes as FastifyPluginAsync },
  { name: 'wallet', plugin: walletRoutes as FastifyPluginAsync },
  { name: 'backtest-sessions', plugin: backtestSessionsRoutes as FastifyPluginAsync },
  { name: 'backtest-sandbox', plugin: backtestSandboxRoutes as FastifyPluginAsync },
  { name: 'backtest-results', plugin: backtestResultsRoutes as FastifyPluginAsync },
  { name: 'battles', plugin: battleRoutes as FastifyPluginAsync },
  { name: 'analytics', plugin: analyticsRoutes as FastifyPluginAsync },
  { name: 'webhooks', plugin: webhookRoutes as FastifyPluginAsync },
];

/**
 * Plugins mounted at the root (outside `/api/v1`): the WebSocket endpoint `/ws/v1`, the Binance-compatible door
 * under `/binance` (`src/binance`, a door of its own that this server only hosts), the MCP server `/mcp` (`src/mcp`,
 * likewise only hosted here: its tools call the use cases, never these routes), the dashboard at `/`.
 */
export const rootRoutes: { name: string; plugin: FastifyPluginAsync }[] = [
  { name: 'websocket', plugin: websocketRoutes },
  { name: 'binance', plugin: binanceRoutes },
  { name: 'mcp', plugin: mcpRoutes },
  { name: 'dashboard', plugin: dashboardRoutes() },
];
