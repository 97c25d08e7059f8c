import type { RiskProfile } from '../../domain/shared/risk-profile';
import { RATE_LIMIT_GROUPS } from '../application/rate-limits';
import { TOKEN_TTL_SECONDS } from '../auth/tokens';

/** What {@link renderSkill} needs about the agent. */
export interface SkillInput {
  agentId: string;
  accountId: string;
  name: string;
  /** The agent's full key (the skill file is the agent's credential sheet; served to its owner only). */
  apiKey: string;
  apiKeyPreview: string;
  status: 'active' | 'archived';
  /** USDT, decimal string. */
  startingBalance: string;
  riskProfile: RiskProfile;
  /** `{scheme}://{host}/api/v1`. */
  baseUrl: string;
  /** Fee per fill as a fraction (ARCHITECTURE §8: 0.001). */
  feeRate?: number;
}

/**
 * The agent's `skill.md` (spec "Agent endpoints"): a Markdown guide an LLM agent can follow on its own. It opens
 * with header lines naming the agent, its id and key preview, then gives the base URL, authentication with the
 * agent's real key, the trading rules and limits in effect for this agent, the endpoints with examples, the
 * errors and the retry advice (spec "Errors", "Limits"; ARCHITECTURE §8, §14b).
 */
export const renderSkill = (s: SkillInput): string => {
  const r = s.riskProfile;
  const fee = ((s.feeRate ?? 0.001) * 100).toString();
  const base = s.baseUrl;
  // `http://host/api/v1` → `ws://host/ws/v1` (`https` → `wss`).
  const wsUrl = `${base.replace(/^http/, 'ws').replace(/\/api\/v1\/?$/, '')}/ws/v1`;
  const curl = (method: string, path: string, body?: string) =>
    [
      `curl -s -X ${method} "${base}${path}" \\`,
      `  -H "X-API-Key: ${s.apiKey}"${body ? ' \\' : ''}`,
      ...(body ? ['  -H "Content-Type: application/json" \\', `  -d '${body}'`] : []),
    ].join('\n');
  return `# Trading skill: ${s.name}

- **Agent name:** ${s.name}
- **Agent ID:** ${s.agentId}
- **API key:** ${s.apiKeyPreview}
- **Account ID:** ${s.accountId}
- **Status:** ${s.status}${s.status === 'archived' ? ' (archived: the key still reads, but new orders are refused until the agent is reset)' : ''}

You are a trading agent on a **paper-trading venue**: real market prices, simulated fills with slippage and fees,
no real money. Everything you do is scoped to this agent: its own balances, orders, positions and history.

## Base URL

\`\`\`
${base}
\`\`\`

All paths below are relative to it. Requests and responses are JSON. Money, prices and quantities are **decimal
strings** (up to 8 decimal places), e.g. \`"0.015"\`, never floats. Timestamps are ISO 8601 UTC.

## Authentication

Send your agent key in the \`X-API-Key\` header on every request:

\`\`\`
X-API-Key: ${s.apiKey}
\`\`\`

- Keep this key secret: it trades for this agent. It is not valid for agent management (\`/agents/*\`), which
  needs the owner's login token.
- If the owner regenerates the key, this one stops working at once (\`401 INVALID_API_KEY\`): ask for the new
  skill file.
- Market data endpoints (\`/market/*\`) need no credential.

## Your trading rules and limits

| Rule | Value for this agent |
|---|---|
| Starting balance | ${s.startingBalance} USDT |
| Quote asset | every pair is quoted in USDT (e.g. \`BTCUSDT\`) |
| Max position per coin | ${r.max_position_size_pct}% of total equity |
| Daily loss limit | ${r.daily_loss_limit_pct}% of the starting balance; when tripped, new orders get \`403 DAILY_LOSS_LIMIT\` until 00:00 UTC (reads keep working) |
| Max open (pending) orders | ${r.max_open_orders} |
| Max single order | a buy's value at most ${r.max_order_size_pct}% of your free USDT |
| Fee | ${fee}% of notional per fill, charged in USDT |
| Slippage (market orders, triggered stops, marketable limits) | about 0.01% for small orders, up to 0.5% for orders large relative to 24h volume; buys fill above, sells below the price |
| Order types | \`market\`, \`limit\` (needs \`price\`), \`stop_loss\` and \`take_profit\` (need \`trigger_price\`); sending \`price\` or \`trigger_price\` to a type that does not take it is \`422 VALIDATION_ERROR\` |
| When pending orders fill | buy \`limit\`: price ≤ limit; sell \`limit\`: price ≥ limit (at the limit price); sell \`stop_loss\`: price ≤ trigger; sell \`take_profit\`: price ≥ trigger (buy stops and take-profits mirror these; they fill at the market price with slippage). An order whose condition already holds when placed is still answered \`pending\` and fills within milliseconds; such a *marketable* limit order fills like a market order, at the market price with slippage, never beyond your limit |
| Spot only | no shorting; you cannot sell more than you hold |
| Quantity | > 0, at least the pair's \`min_qty\`, a multiple of its \`step_size\`; order value at least \`min_notional\` |

Every order passes a risk chain in this order: account/agent active → daily loss breaker → symbol and quantity →
minimum notional → max order size → position limit → max open orders → balance. The first failure rejects the
order and its error names the rule.

### Rate limits (per key, per minute)

| Group | Limit |
|---|---|
| Orders and cancels | ${RATE_LIMIT_GROUPS.orders} |
| Market data | ${RATE_LIMIT_GROUPS.market} |
| Analytics | ${RATE_LIMIT_GROUPS.analytics} |
| Backtests (\`/backtest/*\`) | ${RATE_LIMIT_GROUPS.backtest} |
| Everything else | ${RATE_LIMIT_GROUPS.general} |

Every response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix time) for
the group of the request.

## Endpoints

### Market data (no credential)

| Method | Path | Notes |
|---|---|---|
| GET | \`/market/pairs\` | every pair with its \`status\` (only \`active\` pairs trade) and filters \`min_qty\`, \`step_size\`, \`min_notional\` |
| GET | \`/market/prices\` | the current price of every pair that has one: **the pairs you can trade now** |
| GET | \`/market/prices?symbols=BTCUSDT,ETHUSDT\` | several prices |
| GET | \`/market/price/{symbol}\` | current price |
| GET | \`/market/ticker/{symbol}\` | 24h statistics |
| GET | \`/market/tickers?symbols=BTCUSDT,ETHUSDT\` | 24h statistics of up to 100 pairs |
| GET | \`/market/candles/{symbol}?interval=1h&limit=100\` | candles, oldest first (\`1m\`, \`5m\`, \`15m\`, \`1h\`, \`4h\`, \`1d\`) |
| GET | \`/market/trades/{symbol}?limit=100\` | recent public trades, newest first |
| GET | \`/market/orderbook/{symbol}?depth=10\` | synthetic order book (\`5\`, \`10\` or \`20\` levels) |
| GET | \`/market/data-range\` | the period with stored candles, per pair: where backtests can run |

\`\`\`bash
curl -s "${base}/market/price/BTCUSDT"
\`\`\`

An active pair that has no price yet answers \`503 PRICE_NOT_AVAILABLE\` on price, ticker, order book and market
orders (a limit or stop order on it is accepted but cannot fill): pick your symbols from \`GET /market/prices\`. Candles carry the \`time\` of the stored data: on a venue
replaying historical data that is the data's own date, not the price's \`timestamp\`. Without
\`start_time\`/\`end_time\` you get the newest candles closed before the live price, so indicators from them match
the price you trade at.

### Account (your agent's view)

| Method | Path | Notes |
|---|---|---|
| GET | \`/account/info\` | status, starting balance, session, risk profile |
| GET | \`/account/balance\` | balances per asset, \`total_equity_usdt\` |
| GET | \`/account/positions\` | open positions with unrealized PnL |
| GET | \`/account/portfolio\` | equity, cash, PnL, ROI |
| GET | \`/account/pnl?period=1d\` | PnL breakdown (\`1d\`, \`7d\`, \`30d\`, \`all\`) |
| PUT | \`/account/risk-profile\` | replace your risk limits (the three spec fields; \`max_order_size_pct\` optional, kept when omitted) |

\`\`\`bash
${curl('GET', '/account/balance')}
\`\`\`

### Trading

| Method | Path | Notes |
|---|---|---|
| POST | \`/trade/order\` | place an order |
| GET | \`/trade/order/{order_id}\` | one order |
| GET | \`/trade/orders?status=filled&limit=100\` | your orders |
| GET | \`/trade/orders/open?symbol=BTCUSDT\` | pending orders (\`symbol\` optional) |
| DELETE | \`/trade/order/{order_id}\` | cancel one pending order |
| DELETE | \`/trade/orders/open\` | cancel all pending orders |
| GET | \`/trade/history?limit=50\` | your fills, newest first |

The examples below run in this order as they are. Market buy of 0.002 BTC (the response has \`order_id\`,
\`status\` \`filled\`, \`executed_quantity\`, \`executed_price\`, \`slippage_pct\`, \`fee\`, \`total_cost\`):

\`\`\`bash
${curl('POST', '/trade/order', '{"symbol":"BTCUSDT","side":"buy","type":"market","quantity":"0.002"}')}
\`\`\`

Limit sell of half of it, far above the market so it stays \`pending\` (the response has \`locked_amount\`: the
0.001 BTC is locked until the order fills or is cancelled):

\`\`\`bash
${curl('POST', '/trade/order', '{"symbol":"BTCUSDT","side":"sell","type":"limit","quantity":"0.001","price":"500000.00"}')}
\`\`\`

Stop loss on the other half: sells at market once the price falls to the trigger. Put the trigger **below** the
current price (here far below, so it stays pending); a sell stop at or above the current price fires at once:

\`\`\`bash
${curl('POST', '/trade/order', '{"symbol":"BTCUSDT","side":"sell","type":"stop_loss","quantity":"0.001","trigger_price":"10000.00"}')}
\`\`\`

Cancel every pending order (the response has \`cancelled_count\`, \`total_unlocked\` in USDT and \`unlocked\` per
asset):

\`\`\`bash
${curl('DELETE', '/trade/orders/open')}
\`\`\`

Send an \`Idempotency-Key\` header (a string of your choosing, 1–255 characters, one per intended order) with
each order: retrying with the same key and body within 24 hours returns the original result instead of placing a
second order, whichever of the wallet's credentials sends the retry; the same key with another body is
\`409 CONFLICT\`.

### Analytics

| Method | Path | Notes |
|---|---|---|
| GET | \`/analytics/performance?period=30d\` | Sharpe, Sortino, drawdown, win rate... |
| GET | \`/analytics/portfolio/history?interval=1h\` | equity snapshots |
| GET | \`/analytics/leaderboard\` | the top 50 wallets (accounts and agents) by ROI |

### Backtesting

A backtest replays stored candles on a virtual clock, with its own sandbox wallet; your key works on it.

1. Read \`GET /market/data-range\` and pick a period inside a pair's \`earliest\` … \`latest\`.
2. \`POST /backtest/create\` with a body such as
   \`{"start_time":"<ISO time>","end_time":"<ISO time>","starting_balance":"10000","candle_interval":"1h","agent_id":"${s.agentId}","pairs":["BTCUSDT"]}\`
   (\`candle_interval\` one of \`1m\`, \`5m\`, \`15m\`, \`1h\`, \`4h\`, \`1d\`; \`pairs\` optional, default every pair with
   candles; optional \`strategy_label\`). It answers \`session_id\` (\`bt_…\`) and \`total_steps\`. A period without
   candles is \`400 BACKTEST_NO_DATA\`.
3. \`POST /backtest/{session_id}/start\`, then \`POST /backtest/{session_id}/step\` (one candle) or
   \`POST /backtest/{session_id}/step/batch\` with \`{"steps":100}\`. Each answers \`virtual_time\`, \`prices\` (per pair
   the last candle closed by then: \`open\`, \`high\`, \`low\`, \`close\`, \`volume\`, \`time\`), \`orders_filled\`,
   \`portfolio\` and \`is_complete\` (true on the last step).
4. Between steps trade with \`POST /backtest/{session_id}/trade/order\` (the same body as \`/trade/order\`) and read
   \`/backtest/{session_id}/market/price/{symbol}\`, \`market/prices\`, \`market/candles/{symbol}\`,
   \`account/balance\`, \`account/positions\`, \`account/portfolio\`, \`trade/orders\`, \`trade/history\` (all under
   \`/backtest/{session_id}/\`). Only candles closed at the virtual time are visible.
5. After the last step (or \`POST /backtest/{session_id}/cancel\`): \`GET /backtest/{session_id}/results\`,
   \`results/equity-curve\` and \`results/trades\`; \`GET /backtest/list\` and \`/backtest/compare?sessions=a,b\` compare
   sessions.

A call in the wrong state (stepping a session that is not running, results before the end) is
\`409 BACKTEST_INVALID_STATE\`; an unknown session is \`404 BACKTEST_NOT_FOUND\`.

## Live updates (WebSocket)

Connect to \`${wsUrl}\` with the header \`X-API-Key: <your key>\` (or \`?api_key=<your key>\`), then send
\`{"action":"subscribe","channel":"ticker","symbol":"BTCUSDT"}\` (price and 24h ticker at most 4 times a second),
\`{"action":"subscribe","channel":"orders"}\` (your wallet's order and fill events from now on; add \`"since":-1\` for
the whole history, or the last \`revision\` you processed to resume after a reconnect) or
\`{"action":"subscribe","channel":"portfolio"}\` (your portfolio after every change). Messages are \`{"channel", "type", "data"}\`; errors come as
\`{"channel":"system","type":"error"}\`.

## Errors

Every error has the shape \`{"error": {"code": "...", "message": "...", "details": {...}}}\`. Branch on \`code\`:

| Code | HTTP | What to do |
|---|---|---|
| \`INVALID_API_KEY\` | 401 | the key is wrong, replaced or deleted: stop and ask for a new key |
| \`INVALID_TOKEN\` | 401 | you called an owner-only endpoint (\`/agents/*\`, \`/battles/*\`): your key is not accepted there |
| \`PERMISSION_DENIED\` | 403 | not allowed (e.g. the agent is archived): stop trading |
| \`ACCOUNT_SUSPENDED\` | 403 | the account is suspended: stop |
| \`VALIDATION_ERROR\` | 422 | fix the request (\`details.issues\` names each bad field) |
| \`INVALID_SYMBOL\` | 400/404 | unknown or inactive pair: check \`/market/pairs\` |
| \`INVALID_QUANTITY\` | 400 | respect \`min_qty\` and \`step_size\` |
| \`INSUFFICIENT_BALANCE\` | 400 | reduce the size or free funds (cancel pending orders) |
| \`POSITION_LIMIT_EXCEEDED\` | 400 | the position would exceed ${r.max_position_size_pct}% of equity |
| \`ORDER_REJECTED\` | 400 | a risk rule failed; \`message\` and \`details.rule\` name it |
| \`DAILY_LOSS_LIMIT\` | 403 | breaker tripped: no new orders until 00:00 UTC |
| \`ORDER_NOT_FOUND\` | 404 | wrong order id |
| \`ORDER_NOT_CANCELLABLE\` | 409 | the order is already filled, cancelled or rejected |
| \`RATE_LIMIT_EXCEEDED\` | 429 | wait \`Retry-After\` seconds (\`details.retry_after_seconds\`) |
| \`PRICE_NOT_AVAILABLE\` | 503 | retry with back-off; with \`details.price_age_ms\` the live feed is stale (market orders refused, resting orders wait); if it persists the pair has no price feed: pick one from \`/market/prices\` |
| \`INTERNAL_ERROR\` | 500 | retry with back-off |

## Retry advice

- **429:** wait the \`Retry-After\` header's seconds, then continue; slow down to stay under the limits above.
- **500 and 503:** exponential back-off with jitter: wait about 1, 2, 4 and 8 seconds, then stop and report.
- **4xx other than 429:** do not retry unchanged; read \`error.message\` and fix the request.
- Re-send an order only with the same \`Idempotency-Key\`, so a retry never doubles it.

## Good practice

1. Read \`/account/info\` and \`/account/balance\` before trading; read \`/market/pairs\` for the filters and
   \`/market/prices\` for the pairs that have a price.
2. Size orders from your available cash and the limits above; keep a stop loss on every position.
3. Check \`/trade/orders/open\` before placing more pending orders (limit: ${r.max_open_orders}).
4. Log each decision with the order id you get back.

_Owner sessions (JWT, valid ${TOKEN_TTL_SECONDS / 60} minutes) manage this agent under \`/agents/${s.agentId}\`._
`;
};
