import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresPassOnlyReason } from '../support/databases';
import { createAgents, type LoadAgent, quantityWorth } from './load';
import { type Cluster, spawnVenueProcess, startCluster, type VenueProcess } from './support';

/**
 * Issue 16, items 2 and 4, on several real processes over one PostgreSQL database:
 * - an `Idempotency-Key` holds across API processes: the same key sent to two processes, one after the other and
 *   at once, makes exactly one order per key, under both `READ_YOUR_WRITES` modes (the key is claimed in the wallet
 *   stream's own append, so exactly one append can claim it whichever process receives it);
 * - the order budget is the wallet owner's, shared by every process and credential: an agent's 101st order in a
 *   minute is refused whichever process and credential it comes through.
 */
const reason = await postgresPassOnlyReason();
if (reason) console.warn(`multi-process idempotency and rate-limit tests skipped: ${reason}`);

const PAIRS = 80;
/** Agents per mode: each sends its share of the pairs, both requests of a pair counting in its order budget. */
const AGENTS_PER_MODE = 8;

interface Answer {
  status: number;
  orderId?: string;
  replayed: boolean;
  body: string;
}

const placeKeyed = async (base: string, apiKey: string, key: string, quantity: string): Promise<Answer> => {
  const res = await fetch(`${base}/api/v1/trade/order`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'idempotency-key': key },
    body: JSON.stringify({ symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity }),
  });
  const text = await res.text();
  const body = JSON.parse(text) as { order_id?: string };
  return {
    status: res.status,
    ...(body.order_id ? { orderId: body.order_id } : {}),
    replayed: res.headers.get('idempotent-replayed') === 'true',
    body: text.slice(0, 300),
  };
};

const orderCount = async (base: string, apiKey: string): Promise<number> => {
  const res = await fetch(`${base}/api/v1/trade/orders?limit=1`, { headers: { 'x-api-key': apiKey } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { total: number }).total;
};

/** Waits (at most 30 s) until every read model has folded the whole log, as the operator's `/health` reports it. */
const foldedEverything = async (base: string, authorization: string): Promise<void> => {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${base}/health`, { headers: { authorization } });
    const body = (await res.json()) as { projections?: { name: string; lag_events?: number }[] };
    const behind = (body.projections ?? []).filter((p) => p.lag_events !== 0);
    if (body.projections?.length && behind.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`read models still behind after 30 s: ${JSON.stringify(behind)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe.skipIf(reason !== null)('several API processes, one venue', () => {
  let cluster: Cluster;
  const extra: VenueProcess[] = [];
  let onRead: [string, string];
  let onResponse: [string, string];

  beforeAll(async () => {
    cluster = await startCluster({ api: 2, workers: 1, apiEnv: { READ_YOUR_WRITES: 'on-read' } });
    onRead = [cluster.api[0]!.url, cluster.api[1]!.url];
    for (let i = 0; i < 2; i++) {
      extra.push(
        await spawnVenueProcess('serve', {
          ...cluster.env,
          // No READ_YOUR_WRITES: an API process that does not fold the read models defaults to on-response.
          PROJECTIONS: 'false',
        }),
      );
    }
    await Promise.all(extra.map((p) => p.ready()));
    onResponse = [extra[0]!.url, extra[1]!.url];
  }, 240_000);

  afterAll(async () => {
    await Promise.all(extra.map((p) => p.stop()));
    await cluster?.close();
  });

  for (const mode of ['on-read', 'on-response'] as const) {
    it(`makes one order per Idempotency-Key sent to two processes, in turn and at once (READ_YOUR_WRITES=${mode})`, async () => {
      const [a, b] = mode === 'on-read' ? onRead : onResponse;
      const agents: LoadAgent[] = await createAgents(a, 2, AGENTS_PER_MODE / 2);
      const quantity = await quantityWorth(a, 'BTCUSDT', 12);
      const failures: string[] = [];
      const check = (key: string, answers: Answer[]) => {
        const ids = new Set(answers.map((x) => x.orderId));
        if (
          answers.some((x) => x.status !== 201) ||
          ids.size !== 1 ||
          answers.filter((x) => x.replayed).length !== 1
        ) {
          failures.push(`${key}: ${JSON.stringify(answers)}`);
        }
      };
      const perAgent = (2 * PAIRS) / agents.length;
      await Promise.all(
        agents.map(async (agent, k) => {
          for (let i = 0; i < perAgent; i++) {
            const key = `${mode}-${k}-${i}`;
            if (i % 2 === 0) {
              // One after the other: the second process must find the key the first one claimed.
              const first = await placeKeyed(a, agent.apiKey, key, quantity);
              const second = await placeKeyed(b, agent.apiKey, key, quantity);
              check(key, [first, second]);
            } else {
              // At once: both processes decide on the same wallet revision; exactly one append claims the key.
              check(
                key,
                await Promise.all([
                  placeKeyed(a, agent.apiKey, key, quantity),
                  placeKeyed(b, agent.apiKey, key, quantity),
                ]),
              );
            }
          }
        }),
      );
      expect(failures).toEqual([]);
      // With `on-read` a read waits only for the writes its own process appended (docs/architecture.md, "Read
      // your writes on the read side"): an agent's last order may have gone through the other process, so the
      // counts wait until the worker has folded the whole log. `on-response` needs no wait: every write did.
      if (mode === 'on-read') await foldedEverything(a, cluster.operator.authorization);
      const counts = await Promise.all(agents.map((agent, k) => orderCount(k % 2 ? a : b, agent.apiKey)));
      expect(counts.reduce((s, n) => s + n, 0)).toBe(2 * PAIRS);
      expect(counts).toEqual(agents.map(() => perAgent));
    }, 240_000);
  }

  it("refuses an agent's 101st order in a minute whichever process and credential it comes through", async () => {
    const [a, b] = onRead;
    const reg = (await (
      await fetch(`${a}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ display_name: 'budget' }),
      })
    ).json()) as { api_key: string; api_secret: string };
    const { token } = (await (
      await fetch(`${b}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: reg.api_key, api_secret: reg.api_secret }),
      })
    ).json()) as { token: string };
    const agent = (await (
      await fetch(`${a}/api/v1/agents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ display_name: 'budgeted' }),
      })
    ).json()) as { agent_id: string; api_key: string };
    const quantity = await quantityWorth(a, 'BTCUSDT', 11);
    // Four doors to the same wallet: two processes × (the agent's key, the account's JWT with X-Agent-Id).
    type Door = { base: string; headers: Record<string, string> };
    const doors = [a, b].flatMap((base): Door[] => [
      { base, headers: { 'x-api-key': agent.api_key } },
      { base, headers: { authorization: `Bearer ${token}`, 'x-agent-id': agent.agent_id } },
    ]);
    const order = (door: (typeof doors)[number]) =>
      fetch(`${door.base}/api/v1/trade/order`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...door.headers },
        body: JSON.stringify({ symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity }),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await order(doors[i % doors.length]!)).status);
    expect(statuses.filter((s) => s !== 201)).toEqual([]);
    for (const door of doors) {
      const refused = await order(door);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMIT_EXCEEDED');
    }
    // The account's own wallet keeps a budget of its own.
    const own = await fetch(`${b}/api/v1/trade/orders`, { headers: { authorization: `Bearer ${token}` } });
    expect(own.status).toBe(200);
  }, 240_000);
});
