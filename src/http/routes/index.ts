import type { FastifyPluginAsync } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
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
 * A resource group's route plugin, typed for the zod provider, as the plain plugin `buildApp` registers (the
 * provider is set on the scope; the cast is the same for every group).
 */
const zodRoutes = (name: string, plugin: FastifyPluginAsyncZod) => ({
  name,
  plugin: plugin as FastifyPluginAsync,
});

/**
 * The `/api/v1` route plugins, one per resource group (ARCHITECTURE §3). Each capability appends its plugin
 * here; `buildApp` registers them inside the versioned scope, where the rate limiter and auth hooks apply.
 */
export const apiRoutes: { name: string; plugin: FastifyPluginAsync }[] = [
  // First: the auth hook (skip-override) covers every route plugin registered after it in `/api/v1`.
  { name: 'auth-hook', plugin: authPlugin },
  zodRoutes('auth', authRoutes),
  zodRoutes('account', accountRoutes),
  zodRoutes('agents', agentRoutes),
  zodRoutes('market', marketRoutes),
  zodRoutes('indicators', indicatorRoutes),
  zodRoutes('trade', tradeRoutes),
  zodRoutes('wallet', walletRoutes),
  zodRoutes('backtest-sessions', backtestSessionsRoutes),
  zodRoutes('backtest-sandbox', backtestSandboxRoutes),
  zodRoutes('backtest-results', backtestResultsRoutes),
  zodRoutes('battles', battleRoutes),
  zodRoutes('analytics', analyticsRoutes),
  zodRoutes('webhooks', webhookRoutes),
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
