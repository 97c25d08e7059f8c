import { beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../domain/trading/decimal';
import type { PortfolioSnapshot } from '../../src/application/portfolio';
import { replayWallet } from '../../src/audit/wallet-audit';
import { api, keyHeader, registerAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';

/**
 * Answers that combine several read models come from one snapshot of them (`queries/snapshot.ts`). Before, a
 * fill committed between the queries of `GET /account/portfolio` (the session's fees and realized PnL read
 * first, cash and positions after) broke `total_equity − starting_balance = net_pnl` by the fill's fee; CI saw it
 * once in `trading.e2e.test.ts` when a stop-loss fired during the read. Here fills commit while readers read.
 * The real stack (PGlite, or PostgreSQL with DATABASE_URL).
 */
// Orders answer after their fold here (`on-response`): with `on-read` each read would first wait for the
// reader's own last order and then run right after a fold, where the next fold is furthest away, and the
// readers would rarely straddle one (the first test no longer failed without the fix).
const ENV = { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT', READ_YOUR_WRITES: 'on-response' };
const t = useTestApp({ env: ENV });
const { tick } = t;

beforeAll(async () => {
  tick('BTCUSDT', '40000', '10000');
  tick('ETHUSDT', '2000', '50000');
});

/** Every way a portfolio's figures can disagree with each other (spec "Portfolio snapshot"), in words. */
const disagreements = (p: PortfolioSnapshot): string[] => {
  const out: string[] = [];
  const equity = dec(p.total_equity);
  if (!equity.eq(dec(p.available_cash).plus(p.locked_cash).plus(p.total_position_value)))
    out.push(`equity ${p.total_equity} is not cash + locked + positions`);
  if (!dec(p.net_pnl).eq(dec(p.total_pnl).minus(p.fees_paid))) out.push('net_pnl is not total_pnl − fees');
  // equity − start = realized + unrealized − fees, up to the rounding of two 8-place figures
  const gap = equity.minus(p.starting_balance).minus(p.net_pnl).abs();
  if (gap.gt('0.00000002'))
    out.push(`equity − start differs from net_pnl by ${gap.toFixed()} (rev ${p.revision})`);
  return out;
};

describe('answers read one snapshot of the read models', () => {
  it('keeps every portfolio identity while market orders fill between and during the reads', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const headers = keyHeader(account.apiKey);
    let trading = true;
    let reads = 0;
    const orders = (async () => {
      try {
        // At least 30 orders, and more (within the 100 orders a minute of one key) until the readers have read
        // often enough: orders answer before their fold now, so 30 of them can be over before 30 reads.
        for (let i = 0; i < 90 && (i < 30 || reads <= 40); i++) {
          const symbol = i % 2 === 0 ? 'BTCUSDT' : 'ETHUSDT';
          const quantity = symbol === 'BTCUSDT' ? '0.005' : '0.1';
          const side = i % 4 < 2 ? 'buy' : 'sell';
          const r = await api(t.app, {
            method: 'POST',
            url: '/trade/order',
            headers,
            payload: { symbol, side, type: 'market', quantity },
          });
          expect(r.statusCode, r.body).toBe(201);
        }
      } finally {
        trading = false;
      }
    })();
    const seen: string[] = [];
    // Under the general group's 600 requests a minute (spec "Limits").
    const reader = async () => {
      for (let i = 0; i < 150 && trading; i++) {
        const r = await api(t.app, { method: 'GET', url: '/account/portfolio', headers });
        expect(r.statusCode, r.body).toBe(200);
        reads++;
        seen.push(...disagreements(r.json()));
      }
    };
    await Promise.all([orders, reader(), reader(), reader()]);
    expect(reads).toBeGreaterThan(30);
    expect(seen).toEqual([]);
  }, 60_000);

  it('audits a wallet against its read models while it trades, with no false difference', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const headers = keyHeader(account.apiKey);
    const first = await api(t.app, {
      method: 'POST',
      url: '/trade/order',
      headers,
      payload: { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.01' },
    });
    expect(first.statusCode, first.body).toBe(201);
    const owner = account.accountId;
    let trading = true;
    const orders = (async () => {
      try {
        for (let i = 0; i < 20; i++) {
          const r = await api(t.app, {
            method: 'POST',
            url: '/trade/order',
            headers,
            payload: {
              symbol: 'ETHUSDT',
              side: i % 2 === 0 ? 'buy' : 'sell',
              type: 'market',
              quantity: '0.1',
            },
          });
          expect(r.statusCode, r.body).toBe(201);
        }
      } finally {
        trading = false;
      }
    })();
    const mismatches: string[] = [];
    let audits = 0;
    const auditor = async () => {
      for (let i = 0; i < 40 && trading; i++) {
        const replay = await replayWallet(
          t.runtime.services.eventStore,
          t.runtime.services.database.db,
          owner,
        );
        expect(replay.checkedReadModels).toBe(true);
        audits++;
        mismatches.push(...replay.mismatches);
      }
    };
    await Promise.all([orders, auditor(), auditor()]);
    expect(audits).toBeGreaterThan(5);
    expect(mismatches).toEqual([]);
  }, 60_000);
});
