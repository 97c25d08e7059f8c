import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  BACKTEST_STEPPED_ELIDED,
  type BacktestSteppedData,
  backtestStreamId,
  upcastBacktestStepped,
} from '../../domain/backtest/events';
import { unpackUnits } from '../../domain/metrics/equity-points';
import { computePerformance } from '../../domain/metrics/performance';
import type { RecordedEvent } from '../../ports/event-store';
import { backtestsProjection, createBacktestsProjection } from '../../projections/backtests';
import { type SessionPerformanceInput, sessionPerformance } from '../../projections/equity-rows-text';
import { ok, useBacktestApp, useTrader } from './http-support';

/**
 * `BacktestStepped` version 2 carries a batch's equity as one packed text (`equity_units`); version 1 (events
 * recorded before 2026-11-29) a string per step; version 3 adds the points' peak (`equity_peak`). Auditors replay
 * old logs: the same session recorded any way must fold to the same `backtests`, `backtest_equity` and
 * `backtest_trades` rows, results included.
 */
const t = useBacktestApp();
const alice = useTrader(t);

/** The session's events with every `BacktestStepped` as version 1 wrote it (and no `schema_version`). */
const asVersion1 = (events: readonly RecordedEvent[]): RecordedEvent[] =>
  events.map((e) => {
    if (e.type !== 'BacktestStepped') return e;
    const { equity_units, equity_peak: _peak, ...rest } = e.data as BacktestSteppedData;
    const { schema_version: _, ...metadata } = e.metadata;
    return { ...e, data: { ...rest, equity: unpackUnits(equity_units) }, metadata };
  });

/** The session's events with every `BacktestStepped` as version 2 wrote it (no `equity_peak`). */
const asVersion2 = (events: readonly RecordedEvent[]): RecordedEvent[] =>
  events.map((e) => {
    if (e.type !== 'BacktestStepped') return e;
    const { equity_peak: _, ...rest } = e.data as BacktestSteppedData;
    return { ...e, data: rest, metadata: { ...e.metadata, schema_version: 2 } };
  });

/**
 * The session's events as the venue's subscriptions are handed them (`BACKTEST_STEPPED_ELIDED`): every version 3
 * `BacktestStepped` without its `equity_units`, which the projection copies from the stored event.
 */
const asElided = (events: readonly RecordedEvent[]): RecordedEvent[] =>
  events.map((e) => {
    if (e.type !== 'BacktestStepped') return e;
    const { equity_units: _, ...rest } = e.data as BacktestSteppedData;
    return { ...e, data: rest, elided: [BACKTEST_STEPPED_ELIDED.key] };
  });

/** Folds `events` by the `backtests` projection (or `projection`) into fresh tables of `schema`; answers their rows. */
const fold = async (schema: string, events: readonly RecordedEvent[], projection = backtestsProjection) =>
  t.database.db.transaction().execute(async (trx) => {
    await sql`create schema ${sql.id(schema)}`.execute(trx);
    // `public` after it, as the projection runner's search path has it: the event store's `events` table.
    await sql`select set_config('search_path', ${`${schema}, public`}, true)`.execute(trx);
    await projection.createTables(trx, schema);
    await projection.apply(trx.withSchema(schema), events);
    const rows = async (table: string, order: string) =>
      (await sql`select * from ${sql.table(table)} order by ${sql.ref(order)}`.execute(trx)).rows;
    return {
      backtests: await rows('backtests', 'session_id'),
      equity: await rows('backtest_equity', 'from_step'),
      trades: await rows('backtest_trades', 'seq'),
    };
  });

describe('BacktestStepped versions 1 (a string per step) and 2 (no peak)', () => {
  it('fold to the read models version 3 gives, results included', async () => {
    const { session_id: id } = await ok(t.app, alice.headers, 'POST', '/backtest/create', {
      start_time: '2022-01-01T00:00:00Z',
      end_time: '2022-01-09T00:00:00Z',
      starting_balance: '10000',
      candle_interval: '1h',
      agent_id: alice.agentId,
      pairs: ['BTCUSDT', 'ETHUSDT'],
    });
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step`);
    const order = (body: Record<string, string>) =>
      ok(t.app, alice.headers, 'POST', `/backtest/${id}/trade/order`, { symbol: 'BTCUSDT', ...body }, 201);
    await order({ side: 'buy', type: 'market', quantity: '0.05' });
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: 30 });
    await order({ symbol: 'ETHUSDT', side: 'buy', type: 'limit', quantity: '0.5', price: '3300' });
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: 60 });
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: 1000 });
    const results = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/results`);

    const events = await t.runtime.services.eventStore.readStream(backtestStreamId(id as string));
    const stepped = events.filter((e) => e.type === 'BacktestStepped');
    expect(stepped.length).toBe(4);
    expect(stepped.every((e) => e.metadata.schema_version === 3)).toBe(true);
    const old = asVersion1(events);
    const v2 = asVersion2(events);
    // The upcaster gives back exactly the recorded data.
    for (const [i, e] of events.entries()) {
      if (e.type !== 'BacktestStepped') continue;
      expect(upcastBacktestStepped(old[i]!.data as never)).toEqual(e.data);
      expect(upcastBacktestStepped(v2[i]!.data as never)).toEqual(e.data);
      expect(upcastBacktestStepped(e.data as never)).toBe(e.data);
    }

    const now = await fold('h_v3_fold', events);
    expect(await fold('h_v1_fold', old)).toEqual(now);
    expect(await fold('h_v2_fold', v2)).toEqual(now);
    // Handed without the packed text (the venue's subscriptions), the rows are the same: copied in the database.
    expect(await fold('h_elided_fold', asElided(events))).toEqual(now);
    expect(now.equity.reduce((n: number, r) => n + Number((r as { points: number }).points), 0)).toBe(
      8 * 24 + 1,
    );
    expect(now.trades.length).toBeGreaterThanOrEqual(2);
    const row = now.backtests[0] as { results: unknown; status: string };
    expect(row.status).toBe('completed');
    const stored = typeof row.results === 'string' ? JSON.parse(row.results) : row.results;
    expect(stored).toMatchObject({ summary: results.summary, metrics: results.metrics });

    // Issue 24: the results' computer is handed the session's rows as bytes (the server's COPY text), not their
    // strings and times; the figures are those of the curve the projection built from the rows before.
    const inputs: SessionPerformanceInput[] = [];
    const spying = createBacktestsProjection({
      performance: (input) => {
        inputs.push(input);
        return sessionPerformance(input);
      },
    });
    expect(await fold('h_bytes_fold', events, spying)).toEqual(now);
    expect(inputs.length).toBe(1);
    const handed = inputs[0]!;
    const parts = 'rows' in handed.equity ? handed.equity.rows : undefined;
    expect(parts?.length).toBeGreaterThan(0);
    expect(parts?.every((part) => part instanceof Uint8Array)).toBe(true);
    const start = Date.parse('2022-01-01T00:00:00Z');
    const rows = now.equity as { from_step: number; points: number; equity: string }[];
    const times = rows.flatMap((r) =>
      Array.from({ length: r.points }, (_, j) => start + (r.from_step + j) * 3_600_000),
    );
    const before = { times: Float64Array.from(times), chunks: rows.map((r) => r.equity) };
    expect(JSON.stringify(computePerformance({ ...handed, equity: before }))).toBe(
      JSON.stringify(sessionPerformance(handed)),
    );
  }, 120_000);
});
