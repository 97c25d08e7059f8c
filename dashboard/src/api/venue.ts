import type * as C from './contract';
import { ApiError, request } from './http';

/**
 * The venue's REST endpoints the dashboard calls, typed from the routes' own schemas (./contract.ts). One
 * function per endpoint, no logic: what a page shows is what the venue answered.
 */
const enc = encodeURIComponent;

// Authentication (public) and the account
export const login = (body: C.LoginBody) => request<C.Token>('POST', '/auth/login', { body, auth: 'none' });
export const register = (body: C.RegisterBody) =>
  request<C.Registered>('POST', '/auth/register', { body, auth: 'none' });
/** The viewed wallet's owner: the account, or the agent chosen with `X-Agent-Id`. */
export const accountInfo = () => request<C.AccountInfo>('GET', '/account/info');
/** The account itself (no `X-Agent-Id`), whoever is viewed. */
export const ownAccount = () => request<C.AccountInfo>('GET', '/account/info', { auth: 'jwt' });
export const agents = () => request<C.AgentList>('GET', '/agents', { auth: 'jwt', query: { limit: 500 } });

// The viewed wallet
export const portfolio = (asOf?: string) =>
  request<C.Portfolio>('GET', '/account/portfolio', { query: { as_of: asOf } });
export const portfolioHistory = (interval: C.HistoryInterval, limit = 1000) =>
  request<C.PortfolioHistory>('GET', '/analytics/portfolio/history', { query: { interval, limit } });
export const performance = () => request<C.Performance>('GET', '/analytics/performance');
/**
 * The venue's leaderboard of `period` (every account's wallets, ranked by ROI; the spec's periods, though any
 * string is sent as given so the venue's refusal of another is what the page shows). Sent with the account's JWT
 * alone: the board is the same whoever asks, and a read with `X-Agent-Id` counts against the viewed agent's
 * analytics rate limit, which the agent's own `/analytics` calls need.
 */
export const leaderboard = (period: string) =>
  request<C.Leaderboard>('GET', '/analytics/leaderboard', { auth: 'jwt', query: { period } });
export const openOrders = () => request<C.OrderList>('GET', '/trade/orders/open', { query: { limit: 200 } });
export const tradeHistory = (limit = 20) =>
  request<C.TradeHistory>('GET', '/trade/history', { query: { limit } });
export const placeOrder = (body: C.OrderBody) => request<C.PlacedOrder>('POST', '/trade/order', { body });
export const cancelOrder = (orderId: string) =>
  request<C.Cancelled>('DELETE', `/trade/order/${enc(orderId)}`);
export const cancelAllOrders = () => request<C.CancelledAll>('DELETE', '/trade/orders/open');
export const walletEvents = (after: number, limit = 100) =>
  request<C.WalletEvents>('GET', '/account/events', { query: { after, limit } });
export const walletAudit = () => request<C.WalletAudit>('GET', '/account/audit');

// Market data (public)
export const pairs = () => request<C.Pairs>('GET', '/market/pairs', { auth: 'none' });
export const prices = () => request<C.Prices>('GET', '/market/prices', { auth: 'none' });
export const ticker = (symbol: string) =>
  request<C.Ticker>('GET', `/market/ticker/${enc(symbol)}`, { auth: 'none' });
export const candles = (symbol: string, interval: C.CandleInterval, limit = 500) =>
  request<C.Candles>('GET', `/market/candles/${enc(symbol)}`, { auth: 'none', query: { interval, limit } });

// Backtests (the account's sessions, or the viewed agent's)
export const backtests = (query: C.BacktestListQuery) =>
  request<C.BacktestList>('GET', '/backtest/list', { query });
export const backtestResults = (id: string) =>
  request<C.BacktestResults>('GET', `/backtest/${enc(id)}/results`);
export const backtestCompare = (ids: string[]) =>
  request<C.BacktestCompare>('GET', '/backtest/compare', { query: { sessions: ids.join(',') } });
export const backtestTrades = (id: string, offset: number, limit = 100) =>
  request<C.BacktestTrades>('GET', `/backtest/${enc(id)}/results/trades`, { query: { offset, limit } });

/** A session's whole equity curve (pages of 10,000 points, the endpoint's largest). */
export const backtestEquityCurve = async (id: string): Promise<C.EquityCurve['points']> => {
  const points: C.EquityCurve['points'] = [];
  for (;;) {
    const page = await request<C.EquityCurve>('GET', `/backtest/${enc(id)}/results/equity-curve`, {
      query: { offset: points.length, limit: 10_000 },
    });
    points.push(...page.points);
    if (page.points.length === 0 || points.length >= page.total) return points;
  }
};

// Battles (JWT only: the account's battles)
export const battles = () => request<C.BattleList>('GET', '/battles', { auth: 'jwt', query: { limit: 200 } });
export const battle = (id: string) => request<C.Battle>('GET', `/battles/${enc(id)}`, { auth: 'jwt' });
export const battleLive = (id: string) =>
  request<C.BattleLive>('GET', `/battles/${enc(id)}/live`, { auth: 'jwt' });
export const battleResults = (id: string) =>
  request<C.BattleResults>('GET', `/battles/${enc(id)}/results`, { auth: 'jwt' });
export const battleReplay = (id: string) =>
  request<C.BattleReplay>('GET', `/battles/${enc(id)}/replay`, { auth: 'jwt' });

/** True for the venue's answer to a route it does not have (`NOT_FOUND` "no route …"). */
export const isMissingRoute = (e: unknown): boolean =>
  e instanceof ApiError && e.status === 404 && e.code === 'NOT_FOUND' && e.message.startsWith('no route');
