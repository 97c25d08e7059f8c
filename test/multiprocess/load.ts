import BigNumber from 'bignumber.js';

/**
 * Agents and an order load over real HTTP for the multi-process tests: accounts registered, agents created
 * with their own keys, then market buys of a small, valid quantity (a lot of about 10 USDT: a hundred of them stay
 * far below the balance and the 25 % position limit, so the venue never refuses one for a business reason) at a
 * target total rate, spread round-robin over the API processes.
 * Records every acknowledged order and every refusal with its status, envelope and `Retry-After`.
 */

/** An agent with its key. */
export interface LoadAgent {
  agentId: string;
  apiKey: string;
}

/** One refused order (any non-2xx answer, or no answer at all: `status` 0). */
export interface Refusal {
  status: number;
  code?: string;
  retryAfter?: string | null;
  body: string;
  url: string;
  at: number;
}

/** What a load run saw. */
export interface LoadResult {
  sent: number;
  /** Acknowledged orders: id, the agent, and the process that answered. */
  acked: { orderId: string; agent: LoadAgent; base: string }[];
  refused: Refusal[];
}

const json = async (res: Response): Promise<any> => {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** `fetch` that fails the test with the answer when the status is not `expected`. */
const must = async (url: string, init: RequestInit, expected: number): Promise<any> => {
  const res = await fetch(url, init);
  const body = await json(res);
  if (res.status !== expected)
    throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
};

/**
 * Registers `accounts` accounts on `base` and creates `perAccount` agents under each (`accounts × perAccount`
 * agents). The registrations count against the auth group's 60 per minute per client IP.
 */
export const createAgents = async (
  base: string,
  accounts: number,
  perAccount: number,
): Promise<LoadAgent[]> => {
  const out: LoadAgent[] = [];
  for (let a = 0; a < accounts; a++) {
    const reg = await must(
      `${base}/api/v1/auth/register`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ display_name: `load ${a}` }),
      },
      201,
    );
    const login = await must(
      `${base}/api/v1/auth/login`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: reg.api_key, api_secret: reg.api_secret }),
      },
      200,
    );
    const agents = await Promise.all(
      Array.from({ length: perAccount }, (_, i) =>
        must(
          `${base}/api/v1/agents`,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${login.token}` },
            body: JSON.stringify({ display_name: `agent ${a}-${i}` }),
          },
          201,
        ),
      ),
    );
    for (const agent of agents) out.push({ agentId: agent.agent_id, apiKey: agent.api_key });
  }
  return out;
};

/** A quantity of `symbol` worth about `usdt` at the current price, a multiple of its step size. */
export const quantityWorth = async (base: string, symbol: string, usdt: number): Promise<string> => {
  const { pairs } = await must(`${base}/api/v1/market/pairs`, {}, 200);
  const pair = (pairs as { symbol: string; step_size: string; min_qty: string }[]).find(
    (p) => p.symbol === symbol,
  );
  if (!pair) throw new Error(`no pair ${symbol}`);
  const { price } = await must(`${base}/api/v1/market/price/${symbol}`, {}, 200);
  const step = new BigNumber(pair.step_size);
  const qty = BigNumber.max(
    new BigNumber(usdt).div(price).div(step).integerValue(BigNumber.ROUND_CEIL).times(step),
    pair.min_qty,
  );
  return qty.toFixed();
};

/** Options of {@link runOrderLoad}. */
export interface LoadOptions {
  /** API base URLs, used round-robin per order. */
  bases: string[];
  agents: LoadAgent[];
  symbol: string;
  quantity: string;
  /** Total orders per second over all agents. */
  ratePerSecond: number;
  /** Stops when this resolves (or `durationMs` passes). */
  until?: Promise<unknown>;
  durationMs?: number;
  /** Per-request timeout (ms, default 30 s): a request that never answers is a refusal with status 0. */
  timeoutMs?: number;
}

/**
 * Each agent sends market buys of `quantity`, paced so the agents together send `ratePerSecond`; each agent has
 * one request in flight at most. Resolves once stopped and
 * every request in flight has answered.
 */
export const runOrderLoad = async (options: LoadOptions): Promise<LoadResult> => {
  const result: LoadResult = { sent: 0, acked: [], refused: [] };
  let stop = false;
  const stopAt = options.durationMs ? Date.now() + options.durationMs : Number.POSITIVE_INFINITY;
  void options.until?.then(() => {
    stop = true;
  });
  const periodMs = (1000 * options.agents.length) / options.ratePerSecond;
  let next = 0;
  const run = async (agent: LoadAgent, k: number) => {
    // Spread the agents' first orders over one period.
    await new Promise((r) => setTimeout(r, (periodMs * k) / options.agents.length));
    while (!stop && Date.now() < stopAt) {
      const started = Date.now();
      const base = options.bases[next++ % options.bases.length]!;
      const url = `${base}/api/v1/trade/order`;
      result.sent++;
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': agent.apiKey },
          body: JSON.stringify({
            symbol: options.symbol,
            side: 'buy',
            type: 'market',
            quantity: options.quantity,
          }),
          signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
        });
        const body = await json(res);
        if (res.status >= 200 && res.status < 300) {
          result.acked.push({ orderId: body.order_id, agent, base });
        } else {
          result.refused.push({
            status: res.status,
            code: body?.error?.code,
            retryAfter: res.headers.get('retry-after'),
            body: JSON.stringify(body).slice(0, 500),
            url,
            at: Date.now(),
          });
        }
      } catch (error) {
        result.refused.push({ status: 0, body: String(error), url, at: Date.now() });
      }
      const wait = periodMs - (Date.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  };
  await Promise.all(options.agents.map((a, k) => run(a, k)));
  return result;
};

/** Reads each acknowledged order back (spread over `bases`); resolves to those that are not found or fail. */
export const unreadableOrders = async (
  bases: string[],
  acked: LoadResult['acked'],
): Promise<{ orderId: string; status: number; body: string }[]> => {
  const missing: { orderId: string; status: number; body: string }[] = [];
  const queue = [...acked];
  const worker = async (w: number) => {
    for (let item = queue.shift(); item; item = queue.shift()) {
      const base = bases[w % bases.length]!;
      const res = await fetch(`${base}/api/v1/trade/order/${item.orderId}`, {
        headers: { 'x-api-key': item.agent.apiKey },
      });
      const body = await res.text();
      if (res.status !== 200)
        missing.push({ orderId: item.orderId, status: res.status, body: body.slice(0, 300) });
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
  return missing;
};
