import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { walletStreamId } from '../../domain/wallet/events';
import { api, registerAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';
import { until } from '../support/until';

/**
 * `GET /account/portfolio?as_of=` fills in a wallet's sparse history of older snapshots when it folds through a
 * part of the history that has none (written only going forward: a wallet older than migration 0010, or than a
 * state version bump), so the next time in that part starts near it (issue 20; docs/architecture.md, "History of
 * older snapshots"). With `SNAPSHOT_EVERY=1` the history spacing is 10 events.
 */
const t = useTestApp({ env: { SNAPSHOT_EVERY: '1' } });

describe('portfolio as of a past time over a history without older snapshots', () => {
  it('keeps the historical snapshots its fold passed, and answers the same from them', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    t.tick('BTCUSDT', '40000');
    const headers = { 'x-api-key': account.apiKey };
    const buy = () =>
      api(t.app, {
        method: 'POST',
        url: '/trade/order',
        headers,
        payload: { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.001' },
      });
    // 3 opening events, then 2 per market order: the 7th order's events are revisions 15 and 16.
    for (let i = 0; i < 7; i++) expect((await buy()).statusCode).toBe(201);
    const between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 3; i++) expect((await buy()).statusCode).toBe(201);

    const streamId = walletStreamId(account.accountId);
    const db = t.runtime.services.database.db;
    const historyOf = async () =>
      (
        await sql<{ revision: string }>`select revision from snapshot_history
          where stream_id = ${streamId} order by revision`.execute(db)
      ).rows.map((r) => Number(r.revision));
    // Once the last order's snapshot is written (revision 22), the history written going forward has buckets 1
    // and 2; remove it, as for a wallet older than the history.
    await until(async () => {
      const newest = await sql<{ revision: string }>`select revision from snapshots
        where stream_id = ${streamId}`.execute(db);
      return Number(newest.rows[0]?.revision) === 22;
    });
    expect(await historyOf()).toHaveLength(2);
    await sql`delete from snapshot_history where stream_id = ${streamId}`.execute(db);

    const asOf = async () =>
      (
        await api(t.app, {
          method: 'GET',
          url: `/account/portfolio?as_of=${encodeURIComponent(between)}`,
          headers,
        })
      ).json();
    const first = await asOf();
    expect(first).toMatchObject({ as_of: between, revision: 16 });
    expect(first.positions[0]).toMatchObject({ quantity: '0.00700000' });
    // Its fold from event 0 passed revision 9, the first event of bucket 1: kept after the answer.
    await until(async () => (await historyOf()).includes(9));
    expect(await historyOf()).toEqual([9]);
    expect(await asOf()).toEqual(first);
  });
});
