import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_MODELS } from '../../projections/registry';
import { parseAsOf } from '../../src/cli/audit-options';
import { CliError, describeError } from '../../src/cli/errors';
import { canonicalJson, hashableMetadata, linkHash } from '../../src/eventstore/hash-chain';
import { createPostgresEventStore } from '../../src/eventstore/postgres';
import { api, createAgent, keyHeader, registerAccount, startApp, type TestApp } from '../accounts/support';
import { type CliRun, runCli } from '../support/cli-process';
import { createPostgresTestDatabase, postgresUnavailableReason } from '../support/databases';
import { priceTicker } from '../support/price-ticks';
import { agentWalletOpening, limitBuyPlaced } from '../support/wallet-events';
import { marketBuy } from '../trading/key-calls';
import { settleTrading } from '../trading/log-head';

/**
 * The auditors' and analysts' command line on PostgreSQL, as a user runs it: a venue with real trading (the real
 * stack, in-process, on a fresh database of the local server), then the real CLI process (`src/main.ts`) against
 * that database: `audit replay` cross-checked with `GET /account/events`, `/trade/history` and
 * `/account/portfolio?as_of=`, `audit verify` before and after rows of `events` are tampered with, `events tail`,
 * `projections rebuild --verify`, and the one-line errors with their exit codes. Regressions of the CLI audit.
 */
const reason = await postgresUnavailableReason();
if (reason) console.log(`[cli audit, PostgreSQL] skipped: ${reason}`);

let t: TestApp;
let env: Record<string, string>;
let dataDir: string;
const tick = priceTicker(() => t.app.services.market!);
let agentId: string;
let accountId: string;
/** An account that never traded on its own wallet (no wallet stream), like most accounts whose agents trade. */
let idleAccountId: string;
/** `GET /account/events` of the agent, every page. */
let httpEvents: { revision: number; type: string; occurred_at: string; hash: string }[];
let tradeIds: string[];
/** `GET /account/portfolio?as_of=` at the time of the agent's fifth event. */
let portfolioAsOf: { as_of: string; revision: number; available_cash: string };

/**
 * `audit verify` against a server that refuses connections, started at the beginning of the setup: the CLI waits
 * out the database's 5 s connect window (`CONNECT_WAIT_MS`) before it gives up, seconds it spends asleep while the
 * setup below trades instead of after it. Its test checks what it printed.
 */
let unreachable: Promise<CliRun> | undefined;

beforeAll(async () => {
  if (reason) return;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-cli-audit-pg-'));
  unreachable = runCli(['audit', 'verify'], {
    DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:1/none',
    DATA_DIR: dataDir,
  });
  const database = await createPostgresTestDatabase();
  t = await startApp({ database, env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' } });
  tick('BTCUSDT', '40000', '10000');
  tick('ETHUSDT', '2000', '50000');
  const account = await registerAccount(t.app, {}, { plain: true });
  accountId = account.accountId;
  const agent = await createAgent(t.app, account, { display_name: 'Audited' });
  agentId = agent.agentId;
  const key = keyHeader(agent.apiKey);
  const order = async (payload: Record<string, unknown>) => {
    const res = await api(t.app, { method: 'POST', url: '/trade/order', headers: key, payload });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { order_id: string };
  };
  await order({ symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.05' });
  await order({ symbol: 'ETHUSDT', side: 'buy', type: 'market', quantity: '1' });
  await order({ symbol: 'BTCUSDT', side: 'sell', type: 'market', quantity: '0.02' });
  const far = await order({
    symbol: 'BTCUSDT',
    side: 'buy',
    type: 'limit',
    quantity: '0.01',
    price: '30000',
  });
  await order({ symbol: 'ETHUSDT', side: 'sell', type: 'limit', quantity: '0.5', price: '2500' });
  const cancel = await api(t.app, { method: 'DELETE', url: `/trade/order/${far.order_id}`, headers: key });
  expect(cancel.statusCode, cancel.body).toBe(200);
  const reset = await api(t.app, {
    method: 'POST',
    url: '/account/reset',
    headers: key,
    payload: { confirm: true },
  });
  expect(reset.statusCode, reset.body).toBe(200);
  await order({ symbol: 'ETHUSDT', side: 'buy', type: 'market', quantity: '0.3' });
  await order({ symbol: 'ETHUSDT', side: 'sell', type: 'limit', quantity: '0.1', price: '2600' });
  // The account's own wallet too.
  const own = await marketBuy(t.app, keyHeader(account.apiKey), '0.01');
  expect(own.statusCode, own.body).toBe(201);
  await settleTrading(t);

  httpEvents = [];
  for (let after = -1; ; ) {
    const page = (
      await api(t.app, { method: 'GET', url: `/account/events?after=${after}&limit=5`, headers: key })
    ).json() as { events: typeof httpEvents; next_after: number; has_more: boolean };
    httpEvents.push(...page.events);
    after = page.next_after;
    if (!page.has_more) break;
  }
  const history = (
    await api(t.app, { method: 'GET', url: '/trade/history?limit=100', headers: key })
  ).json() as {
    trades: { trade_id: string }[];
  };
  tradeIds = history.trades.map((x) => x.trade_id);
  portfolioAsOf = (
    await api(t.app, {
      method: 'GET',
      url: `/account/portfolio?as_of=${encodeURIComponent(httpEvents[5]!.occurred_at)}`,
      headers: key,
    })
  ).json();
  idleAccountId = (await registerAccount(t.app, {}, { plain: true })).accountId;
  // The CLI runs beside a stopped app (a running one would be fine on PostgreSQL too, but would append).
  await t.stop();
  env = { DATABASE_URL: database.url!, DATA_DIR: dataDir };
  // Ended before the tests: the first one finds DATA_DIR untouched by every reading command, this one too.
  await unreachable;
}, 120_000);

afterAll(async () => {
  if (reason) return;
  await t?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(reason)('audit replay on PostgreSQL', () => {
  it('prints the timeline of GET /account/events, the fills of /trade/history and a match with the read models', async () => {
    const run = await runCli(['audit', 'replay', '--agent', agentId], env);
    expect(run.stderr).toBe(''); // no key-file warning, no market feed warning
    expect(run.code, run.stdout).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe(`wallet-${agentId} (agent ${agentId}): ${httpEvents.length} events`);
    const timeline = lines.filter((l) => l.startsWith('#'));
    expect(timeline.map((l) => l.split(/\s+/).slice(1, 4))).toEqual(
      httpEvents.map((e) => [String(e.revision), e.occurred_at, e.type]),
    );
    // Every fill names its trade id, the key of /trade/history.
    const fills = timeline.filter((l) => l.includes('OrderFilled'));
    expect(fills.map((l) => /trade ([0-9a-f-]{36})\)$/.exec(l)?.[1]).sort()).toEqual([...tradeIds].sort());
    expect(run.stdout).toContain(
      `hash chain: intact (${httpEvents.length} events, head ${httpEvents.at(-1)!.hash})`,
    );
    expect(run.stdout).toContain('read models: match the folded state');
    // The DATA_DIR of a reading command stays untouched: no secrets.json generated there.
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });

  it('--as-of folds what GET /account/portfolio?as_of= folds', async () => {
    // Two reading processes, independent: side by side.
    const [run, before] = await Promise.all([
      runCli(['audit', 'replay', '--agent', agentId, '--as-of', portfolioAsOf.as_of, '--json'], env),
      runCli(['audit', 'replay', '--agent', agentId, '--as-of', '2020-01-01'], env),
    ]);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.revision).toBe(portfolioAsOf.revision);
    expect(out.events).toBe(portfolioAsOf.revision + 1);
    expect(out.events_total).toBe(httpEvents.length);
    expect(out.state.cash).toBe(portfolioAsOf.available_cash);
    expect(out.read_models).toMatch(/^not compared/);
    // Before the first event: an empty wallet, not an error.
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toContain(`0 of ${httpEvents.length} events`);
  });

  it('folds the prefix of the stream up to --as-of even when business times are not in order', async () => {
    const owner = '0b5e7c1e-0000-4000-8000-0000000000aa';
    const session = '0b5e7c1e-0000-4000-8000-0000000000bb';
    const orderId = '0b5e7c1e-0000-4000-8000-0000000000cc';
    const at = (m: number) => `2026-01-01T10:0${m}:00.000Z`;
    const writer = createPostgresEventStore(t.database);
    try {
      await writer.append(`wallet-${owner}`, [
        ...agentWalletOpening({ owner, accountId, session, at: at(0) }),
        {
          type: 'OrderPlaced',
          data: limitBuyPlaced({ order_id: orderId, session_id: session, placed_at: at(5) }),
          metadata: { occurred_at: at(5) },
        },
        {
          // Decided after the placement, stamped earlier (a retried command keeps its first clock reading).
          type: 'OrderCancelled',
          data: {
            order_id: orderId,
            session_id: session,
            symbol: 'BTCUSDT',
            reason: 'user',
            unlocked_amount: '300.30000000',
            unlocked_asset: 'USDT',
            cancelled_at: at(2),
          },
          metadata: { occurred_at: at(2) },
        },
      ]);
    } finally {
      await writer.close();
    }
    const run = await runCli(['audit', 'replay', '--agent', owner, '--as-of', at(3), '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout);
    // Revisions 0 and 1: not the cancel (revision 3) without the order it cancels (revision 2).
    expect(out.revision).toBe(1);
    expect(out.state.cash).toBe('10000.00000000');
    expect(out.state.open_orders).toEqual([]);
  });

  it('answers bad arguments and unknown owners with one line and exit codes 2 and 1', async () => {
    const cases: [string[], number, RegExp][] = [
      [['audit', 'replay', '--agent', 'nope'], 2, /^--agent must be an agent id \(a UUID\), got "nope"$/],
      [['audit', 'replay', '--agent', agentId, '--as-of', '1'], 2, /^--as-of must be an ISO 8601 date-time/],
      [['audit', 'replay', '--agent', agentId, '--as-of', '2026-01-31T12:00:00'], 2, /^--as-of must be/],
      [
        ['audit', 'replay', '--agent', agentId, '--account', agentId],
        2,
        /^give either --agent ID or --account ID/,
      ],
      [['audit', 'replay'], 2, /^give --agent ID/],
      [
        ['audit', 'replay', '--account', agentId],
        2,
        new RegExp(`^${agentId} is an agent, not an account: use --agent`),
      ],
      // An idle account's id is recognised all the same (found by helper sweepd).
      [
        ['audit', 'replay', '--agent', idleAccountId],
        2,
        new RegExp(`^${idleAccountId} is an account, not an agent: use --account ${idleAccountId}$`),
      ],
      [['accounts', 'suspend', 'nope'], 2, /^not an account id \(a UUID\): nope$/],
      [
        ['audit', 'replay', '--agent', '00000000-0000-4000-8000-000000000000'],
        1,
        /^no agent 0{8}-.* in the event log/,
      ],
      [['audit', 'verify', '--stream', 'nope'], 1, /^$/],
      [['events', 'tail', '--stream', 'nope'], 1, /^stream not found: nope$/],
      [['events', 'tail', '-n', '0'], 2, /^--limit must be a positive integer, got "0"$/],
      [['projections', 'rebuild', 'balances'], 2, /^unknown projection: balances \(known: .*wallets/],
      [['audit', 'replay', '--bogus'], 2, /unknown option '--bogus'/],
    ];
    // Three at a time: the machine is shared.
    const runs: CliRun[] = [];
    for (let i = 0; i < cases.length; i += 3) {
      runs.push(...(await Promise.all(cases.slice(i, i + 3).map(([args]) => runCli(args, env)))));
    }
    runs.forEach((run, i) => {
      const [args, code, message] = cases[i]!;
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(code);
      expect(run.stderr.trim(), args.join(' ')).toMatch(message);
      expect(run.stderr.trim().split('\n').length, args.join(' ')).toBeLessThanOrEqual(1);
    });
    expect(runs[9]!.stdout).toContain('NOT FOUND nope: no such stream in the event log');
    // Fourteen processes, each compiling the CLI with tsx: 20–35 s alone, over 60 s beside the rest of the suite.
  }, 240_000);

  it('names the database it cannot reach, in one line, without a stack trace', async () => {
    const run = await unreachable!;
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(
      /^cannot use the database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/none: connect ECONNREFUSED/,
    );
    expect(run.stderr).not.toContain('secret');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe.skipIf(reason)('events tail and projections on PostgreSQL', () => {
  it('tails the log and one stream, readable or as JSON lines', async () => {
    const [log, stream, json] = await Promise.all([
      runCli(['events', 'tail', '-n', '3'], env),
      runCli(['events', 'tail', '--stream', `wallet-${agentId}`, '-n', '2'], env),
      runCli(['events', 'tail', '--stream', `wallet-${agentId}`, '-n', '2', '--json'], env),
    ]);
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout.trim().split('\n')).toHaveLength(3);
    expect(stream.code, stream.stderr).toBe(0);
    const last = httpEvents.slice(-2);
    expect(
      stream.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/).slice(1, 4)),
    ).toEqual(last.map((e) => [e.occurred_at, `wallet-${agentId}@${e.revision}`, e.type]));
    const parsed = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(parsed.map((e) => [e.revision, e.type, e.metadata.hash])).toEqual(
      last.map((e) => [e.revision, e.type, e.hash]),
    );
  });

  it('rebuilds every projection with --verify: identical, swapped, exit code 0', async () => {
    const run = await runCli(['projections', 'rebuild', '--verify'], env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout.match(/verify: \d+ table\(s\) identical row by row/g)).toHaveLength(READ_MODELS.length);
    const status = await runCli(['projections', 'status'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout.split('\n')[0]).toMatch(
      /^name\s+version\s+generation\s+checkpoint\s+lag_events\s+state$/,
    );
    expect(status.stdout.match(/up to date$/gm)).toHaveLength(READ_MODELS.length);
  });
});

describe.skipIf(reason)('audit verify on PostgreSQL', () => {
  const db = () => t.database.db;
  const stream = () => `wallet-${agentId}`;
  /** Runs `fn` on the events table and undoes it afterwards (the table is restored from a copy). */
  const tampered = async (fn: () => Promise<void>): Promise<CliRun> => {
    await sql`create table events_copy as select * from events`.execute(db());
    await sql`create table streams_copy as select * from streams`.execute(db());
    try {
      await fn();
      return await runCli(['audit', 'verify'], env);
    } finally {
      await sql`delete from events`.execute(db());
      await sql`insert into events overriding system value select * from events_copy`.execute(db());
      await sql`delete from streams`.execute(db());
      await sql`insert into streams select * from streams_copy`.execute(db());
      await sql`drop table events_copy`.execute(db());
      await sql`drop table streams_copy`.execute(db());
    }
  };

  it('finds every chain intact in the untouched log', async () => {
    const run = await runCli(['audit', 'verify'], env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout.trim()).toMatch(/^\d+ streams, \d+ events: every hash chain intact$/);
  });

  it('detects an edited event, naming the stream and revision', async () => {
    const run = await tampered(async () => {
      await sql`update events set data = jsonb_set(data, '{fee}', '"0.00000001"')
        where stream_id = ${stream()} and revision = 4`.execute(db());
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      new RegExp(`^BROKEN ${stream()} at revision 4: hash_mismatch \\(expected [0-9a-f]{64}`, 'm'),
    );
    expect(run.stdout).toMatch(/: 1 broken stream\(s\)$/m);
  });

  it('detects the last event removed, and the last event removed with its stream head moved back', async () => {
    const last = httpEvents.at(-1)!.revision;
    const removed = await tampered(async () => {
      await sql`delete from events where stream_id = ${stream()} and revision = ${last}`.execute(db());
    });
    expect(removed.code).toBe(1);
    expect(removed.stdout).toContain(`BROKEN ${stream()} at revision ${last}: events missing at the end`);
    const covered = await tampered(async () => {
      await sql`delete from events where stream_id = ${stream()} and revision = ${last}`.execute(db());
      await sql`update streams set revision = revision - 1, last_hash = ${httpEvents.at(-2)!.hash}
        where stream_id = ${stream()}`.execute(db());
    });
    expect(covered.code).toBe(1);
    expect(covered.stdout).toContain(
      `BROKEN ${stream()} events missing: the read model folded up to revision ${last}, the log ends at revision ${last - 1}`,
    );
  });

  it('detects a chain recomputed after an edit, and a stream deleted with its head', async () => {
    const rechained = await tampered(async () => {
      const { rows } = await sql<{
        global_position: string;
        revision: string;
        event_id: string;
        type: string;
        data: Record<string, unknown>;
        metadata: Record<string, unknown>;
      }>`select global_position::text, revision::text, event_id::text, type, data, metadata from events
         where stream_id = ${stream()} order by events.revision desc limit 1`.execute(db());
      const e = rows[0]!;
      const data = { ...e.data, quantity: '99.00000000' };
      const hash = linkHash({
        prevHash: e.metadata.prev_hash as string,
        streamId: stream(),
        revision: Number(e.revision),
        eventId: e.event_id,
        type: e.type,
        dataText: canonicalJson(data),
        metadataText: canonicalJson(hashableMetadata(e.metadata)),
      });
      await sql`update events set data = ${JSON.stringify(data)}::jsonb,
        metadata = jsonb_set(metadata, '{hash}', to_jsonb(${hash}::text))
        where global_position = ${e.global_position}::bigint`.execute(db());
    });
    expect(rechained.code).toBe(1);
    expect(rechained.stdout).toMatch(
      new RegExp(
        `^BROKEN ${stream()} at revision \\d+: the chain was rewritten \\(the stream head records hash`,
        'm',
      ),
    );
    const gone = await tampered(async () => {
      await sql`delete from events where stream_id = ${`account-${accountId}`}`.execute(db());
      await sql`delete from streams where stream_id = ${`account-${accountId}`}`.execute(db());
    });
    expect(gone.code).toBe(1);
    expect(gone.stdout).toContain(
      `BROKEN account-${accountId} events missing: the read model folded up to revision`,
    );
  });

  it('checks only the streams asked for with --stream', async () => {
    const run = await runCli(['audit', 'verify', '--stream', stream(), `wallet-${accountId}`], env);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout.trim()).toMatch(/^2 streams, \d+ events: every hash chain intact$/);
  });
});

describe('the CLI error helpers', () => {
  it('parses --as-of like the portfolio endpoint: a zoned ISO 8601 time or a date', () => {
    expect(parseAsOf('2026-01-31T12:00:00Z').toISOString()).toBe('2026-01-31T12:00:00.000Z');
    expect(parseAsOf('2026-01-31T13:00:00.5+01:00').toISOString()).toBe('2026-01-31T12:00:00.500Z');
    expect(parseAsOf('2026-01-31').toISOString()).toBe('2026-01-31T00:00:00.000Z');
    for (const bad of ['', '1', 'yesterday', '2026-01-31T12:00:00', '2026-02-30', '31/01/2026']) {
      expect(() => parseAsOf(bad), bad).toThrow(CliError);
    }
  });

  it('describes an unreachable database in one line, with the password hidden', () => {
    const refused = Object.assign(
      new AggregateError([
        Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' }),
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      ]),
      { code: 'ECONNREFUSED' },
    );
    expect(describeError(refused, { databaseUrl: 'postgres://u:pw@localhost:5432/db' })).toBe(
      'cannot use the database postgres://u:***@localhost:5432/db: connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432',
    );
    expect(describeError(new Error('boom\n  at x'))).toBe('error: boom at x');
  });
});
