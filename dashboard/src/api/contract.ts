/**
 * The wire types of the venue, taken from the zod schemas its routes validate and serialise with
 * (`src/contract/*`): `z.output` of a response schema is what the venue sends, `z.input` of a body schema is
 * what it accepts. Type-only imports: nothing of the server reaches the bundle. Never copy a shape here by hand;
 * a field the dashboard needs and the API lacks is added to the API (docs/dashboard.md).
 */
import type { z } from 'zod';
import type { accountInfoResponse } from '../../../src/contract/account';
import type { agentListResponse } from '../../../src/contract/agent';
import type * as analytics from '../../../src/contract/analytics';
import type { loginBody, registerBody, registerResponse, tokenResponse } from '../../../src/contract/auth';
import type * as backtest from '../../../src/contract/backtest';
import type * as battle from '../../../src/contract/battle';
import type { errorEnvelopeSchema } from '../../../src/contract/common';
import type * as market from '../../../src/contract/market';
import type * as trading from '../../../src/contract/trading';
import type * as ws from '../../../src/contract/ws';

type Out<T extends z.ZodType> = z.output<T>;
type In<T extends z.ZodType> = z.input<T>;

// Authentication and account
export type LoginBody = In<typeof loginBody>;
export type RegisterBody = In<typeof registerBody>;
export type Registered = Out<typeof registerResponse>;
export type Token = Out<typeof tokenResponse>;
export type AccountInfo = Out<typeof accountInfoResponse>;
export type AgentList = Out<typeof agentListResponse>;

// Wallet and trading
export type Portfolio = Out<typeof trading.portfolioResponse>;
export type Position = Out<typeof trading.positionEntry>;
export type Order = Out<typeof trading.orderResponse>;
export type OrderList = Out<typeof trading.orderListResponse>;
export type OrderBody = In<typeof trading.placeOrderBody>;
export type PlacedOrder = Out<typeof trading.filledOrderResponse> | Out<typeof trading.pendingOrderResponse>;
export type Cancelled = Out<typeof trading.cancelResponse>;
export type CancelledAll = Out<typeof trading.cancelAllResponse>;
export type TradeHistory = Out<typeof trading.historyResponse>;
export type Trade = Out<typeof trading.tradeResponse>;
export type WalletEvents = Out<typeof trading.eventsResponse>;
export type WalletEvent = WalletEvents['events'][number];
export type WalletAudit = Out<typeof trading.walletAuditResponse>;

// Analytics
export type PortfolioHistory = Out<typeof analytics.historyResponse>;
export type HistoryInterval = PortfolioHistory['interval'];
export type Performance = Out<typeof analytics.performanceResponse>;
export type Leaderboard = Out<typeof analytics.leaderboardResponse>;
export type LeaderboardPeriod = Leaderboard['period'];
export type LeaderboardEntry = Leaderboard['rankings'][number];

// Market data
export type Pair = Out<typeof market.pairSchema>;
export type Pairs = Out<typeof market.pairsResponse>;
export type Prices = Out<typeof market.pricesResponse>;
export type Ticker = Out<typeof market.tickerResponse>;
export type Candles = Out<typeof market.candlesResponse>;
export type CandleInterval = Candles['interval'];
export type Candle = Candles['candles'][number];

// Backtests
export type BacktestList = Out<typeof backtest.listResponse>;
export type BacktestListItem = BacktestList['backtests'][number];
export type BacktestListQuery = Partial<Out<typeof backtest.listQuery>>;
export type BacktestStatus = BacktestListItem['status'];
export type BacktestResults = Out<typeof backtest.resultsResponse>;
export type BacktestCompare = Out<typeof backtest.compareResponse>;
export type EquityCurve = Out<typeof backtest.equityCurveResponse>;
export type BacktestTrades = Out<typeof backtest.tradesResponse>;

// Battles
export type Battle = Out<typeof battle.battleResponse>;
export type BattleList = Out<typeof battle.battleListResponse>;
export type BattleStatus = Battle['status'];
export type BattleLive = Out<typeof battle.liveResponse>;
export type BattleResults = Out<typeof battle.resultsResponse>;
export type BattleReplay = Out<typeof battle.replaySnapshotsResponse>;
export type Ranking = BattleLive['rankings'][number];

// WebSocket messages (`{channel, type, data}`)
export type TickerData = Out<typeof ws.tickerMessageData>;
export type BattleUpdate = Out<typeof ws.battleUpdateData>;
export type BattleTrade = Out<typeof ws.battleTradeData>;
export type BattleStatusChange = Out<typeof ws.battleStatusData>;

/** The error envelope of every failed request (spec "Errors"). */
export type ErrorBody = Out<typeof errorEnvelopeSchema>;
