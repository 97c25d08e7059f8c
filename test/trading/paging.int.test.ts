import { beforeAll, describe, expect, it } from 'vitest';
import { api, keyHeader, registerAccount, type TestAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';
import { settleTrading } from './log-head';

/**
 * Keyset paging of the order and trade lists (issue 20, item 3; docs/api.md "Paging"): `next_cursor` of a page,
 * sent back as `cursor`, gives the next page, and following the cursors lists exactly what `limit`/`offset` list
 * (the spec's fields keep their meaning); a cursor with a non-zero offset, or one no page gave, is a
 * `VALIDATION_ERROR` 422. Through the real stack (`app.inject`) on PGlite, or PostgreSQL with `DATABASE_URL`.
 */

const t = useTestApp({ env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' } });
let account: TestAccount;
const { tick } = t;
const get = (url: string) => api(t.app, { method: 'GET', url, headers: keyHeader(account.apiKey) });
const place = (payload: Record<string, unknown>) =>
  api(t.app, { method: 'POST', url: '/trade/order', headers: keyHeader(account.apiKey), payload });

const MARKET_ORDERS = 11;
const LIMIT_ORDERS = 4;

beforeAll(async () => {
  tick('BTCUSDT', '40000', '10000');
  account = await registerAccount(t.app, {}, { plain: true });
  for (let i = 0; i < MARKET_ORDERS; i++) {
    const res = await place({
      symbol: 'BTCUSDT',
      side: i % 2 ? 'sell' : 'buy',
      type: 'market',
      quantity: '0.01',
    });
    expect(res.statusCode, res.body).toBe(201);
  }
  for (let i = 0; i < LIMIT_ORDERS; i++) {
    const res = await place({
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'limit',
      quantity: '0.001',
      price: `${30000 + i}`,
    });
    expect(res.statusCode, res.body).toBe(201);
  }
  await settleTrading(t);
}, 120_000);

/** Every page of `path` by cursor, `limit` rows each: the rows' ids in order and each page's envelope. */
const byCursor = async (
  path: string,
  list: 'trades' | 'orders',
  id: 'trade_id' | 'order_id',
  limit: number,
) => {
  const ids: string[] = [];
  const pages: { total: number; offset: number; next_cursor: string | null; rows: number }[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res = await get(`${path}${sep}limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as Record<string, unknown> & {
      next_cursor: string | null;
      total: number;
      offset: number;
    };
    const rows = body[list] as Record<string, string>[];
    ids.push(...rows.map((r) => r[id]!));
    pages.push({ total: body.total, offset: body.offset, next_cursor: body.next_cursor, rows: rows.length });
    cursor = body.next_cursor;
    expect(pages.length).toBeLessThan(50);
  } while (cursor !== null);
  return { ids, pages };
};

describe('keyset paging of /trade/history, /trade/orders and /trade/orders/open', () => {
  it('follows next_cursor through the trade history: the same fills, in the same order, as limit/offset', async () => {
    const all = (await get('/trade/history?limit=500')).json();
    expect(all.total).toBe(MARKET_ORDERS);
    expect(all.next_cursor).toBeNull();
    const { ids, pages } = await byCursor('/trade/history', 'trades', 'trade_id', 4);
    expect(ids).toEqual(all.trades.map((r: { trade_id: string }) => r.trade_id));
    expect(pages.map((p) => p.rows)).toEqual([4, 4, 3]);
    expect(pages.every((p) => p.total === MARKET_ORDERS && p.offset === 0)).toBe(true);
    // An offset page gives the cursor of the page after it too, and agrees with the cursor page at that depth.
    const second = (await get('/trade/history?limit=4&offset=4')).json();
    expect(second.next_cursor).toBe(pages[1]!.next_cursor);
    expect(second.trades.map((r: { trade_id: string }) => r.trade_id)).toEqual(ids.slice(4, 8));
    // Filters hold across pages, and the total is the filter's.
    const sells = await byCursor('/trade/history?side=sell', 'trades', 'trade_id', 2);
    const allSells = (await get('/trade/history?side=sell&limit=500')).json();
    expect(sells.ids).toEqual(allSells.trades.map((r: { trade_id: string }) => r.trade_id));
    expect(sells.pages.every((p) => p.total === Math.floor(MARKET_ORDERS / 2))).toBe(true);
    // The totals come from the counts the orders projection keeps beside the fills: they agree with the rows.
    const db = t.app.services.database.db;
    const kept = await db
      .selectFrom('trade_counts')
      .select(['symbol', 'side', 'n'])
      .where('owner_id', '=', account.accountId)
      .orderBy('side')
      .execute();
    const counted = await db
      .selectFrom('trades')
      .select(['symbol', 'side', (eb) => eb.fn.countAll<string>().as('n')])
      .where('owner_id', '=', account.accountId)
      .groupBy(['symbol', 'side'])
      .orderBy('side')
      .execute();
    expect(kept.map((r) => [r.symbol, r.side, Number(r.n)])).toEqual(
      counted.map((r) => [r.symbol, r.side, Number(r.n)]),
    );
  });

  it('pages the order list and the open orders by cursor, with their filters', async () => {
    const all = (await get('/trade/orders?limit=500')).json();
    expect(all.total).toBe(MARKET_ORDERS + LIMIT_ORDERS);
    const { ids } = await byCursor('/trade/orders', 'orders', 'order_id', 6);
    expect(ids).toEqual(all.orders.map((r: { order_id: string }) => r.order_id));
    const filled = await byCursor('/trade/orders?status=filled&symbol=btcusdt', 'orders', 'order_id', 5);
    expect(filled.ids).toHaveLength(MARKET_ORDERS);
    const open = await byCursor('/trade/orders/open', 'orders', 'order_id', 3);
    expect(open.ids).toHaveLength(LIMIT_ORDERS);
    expect(open.pages.map((p) => [p.rows, p.total])).toEqual([
      [3, LIMIT_ORDERS],
      [1, LIMIT_ORDERS],
    ]);
  });

  it('refuses a cursor with a non-zero offset, or a cursor no page gave, with the spec envelope', async () => {
    const first = (await get('/trade/history?limit=2')).json();
    for (const url of [
      `/trade/history?cursor=${first.next_cursor}&offset=2`,
      '/trade/history?cursor=abc',
      '/trade/history?cursor=-1',
      '/trade/orders?cursor=99999999999',
      '/trade/orders/open?cursor=1.5',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(422);
      expect(res.json().error.code, url).toBe('VALIDATION_ERROR');
    }
    // One issue per bad field (docs/architecture.md, "HTTP"): a cursor that is not digits is not also reported
    // by the range check after the pattern.
    for (const url of ['/trade/history?cursor=abc', '/trade/orders/open?cursor=1.5']) {
      expect((await get(url)).json().error.details.issues, url).toEqual([
        { field: 'cursor', location: 'querystring', message: 'a next_cursor of a previous page' },
      ]);
    }
    // A cursor past the oldest row is an empty last page, not an error.
    const end = (await get('/trade/history?cursor=0')).json();
    expect(end).toMatchObject({ trades: [], total: MARKET_ORDERS, next_cursor: null });
  });
});
