import { type Kysely, type Selectable, sql } from 'kysely';
import type { MetricsFill } from '../domain/metrics/trades';
import type {
  EquitySnapshotsTable,
  EquitySnapshotTables,
  SnapshotInterval,
} from '../projections/equity-snapshots';
import type { ReadModels } from '../projections/read-models';
import { readSnapshot } from './snapshot';

/**
 * Read side of analytics (spec "Analytics endpoints"): equity snapshots, a period's fills in the shape of
 * `domain/metrics`, and the leaderboard's candidates. Typed kysely queries over read models; none writes.
 */

type DB = Kysely<ReadModels & EquitySnapshotTables>;
const withSnapshots = (db: Kysely<ReadModels>): DB => db as unknown as DB;

export type SnapshotRow = Selectable<EquitySnapshotsTable>;

/** The newest `limit` snapshots of an owner's wallet at `interval`, returned oldest first (every session). */
export const latestSnapshots = async (
  db: Kysely<ReadModels>,
  ownerId: string,
  interval: SnapshotInterval,
  limit: number,
): Promise<SnapshotRow[]> => {
  const rows = await withSnapshots(db)
    .selectFrom('equity_snapshots')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('interval', '=', interval)
    .orderBy('bucket', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse();
};

/** Snapshots of one session of a wallet at `interval` taken in [from, to] (ms), oldest first. */
export const sessionSnapshots = (
  db: Kysely<ReadModels>,
  ownerId: string,
  sessionId: string,
  interval: SnapshotInterval,
  from: number,
  to: number,
): Promise<SnapshotRow[]> =>
  withSnapshots(db)
    .selectFrom('equity_snapshots')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('interval', '=', interval)
    .where('session_id', '=', sessionId)
    .where('time', '>=', new Date(from))
    .where('time', '<=', new Date(to))
    .orderBy('bucket')
    .execute();

/** The fills of one session of a wallet executed in [from, to] (ms), in execution order, as the metrics read them. */
export const sessionFills = async (
  db: Kysely<ReadModels>,
  ownerId: string,
  sessionId: string,
  from: number,
  to: number,
): Promise<MetricsFill[]> => {
  const rows = await db
    .selectFrom('trades')
    .select(['symbol', 'side', 'quantity', 'price', 'notional', 'fee', 'realized_pnl', 'executed_at'])
    .where('owner_id', '=', ownerId)
    .where('session_id', '=', sessionId)
    .where('executed_at', '>=', new Date(from))
    .where('executed_at', '<=', new Date(to))
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({
    symbol: r.symbol,
    side: r.side,
    quantity: r.quantity,
    price: r.price,
    notional: r.notional,
    fee: r.fee,
    realizedPnl: r.realized_pnl,
    time: new Date(r.executed_at).getTime(),
  }));
};

/** A wallet that may be ranked: its owner, current session and who it shows as (spec leaderboard). */
export interface LeaderboardCandidate {
  ownerId: string;
  accountId: string;
  /** The agent owning the wallet, or null for the account's own wallet. */
  agentId: string | null;
  displayName: string;
  sessionId: string;
  sessionStartedAt: Date;
  startingBalance: string;
}

/**
 * Wallets of active accounts (and, for agents' wallets, active agents) with at least one closed trade (a sell:
 * ARCHITECTURE §11, spot only) executed in [from, to] (ms) in their current session (spec: the leaderboard
 * "includes only active accounts with at least one closed trade in the period").
 */
export const leaderboardCandidates = async (
  db: Kysely<ReadModels>,
  from: number,
  to: number,
): Promise<LeaderboardCandidate[]> => {
  const rows = await db
    .selectFrom('wallets as w')
    .innerJoin('wallet_sessions as s', (j) =>
      j.onRef('s.owner_id', '=', 'w.owner_id').onRef('s.session_id', '=', 'w.session_id'),
    )
    .innerJoin('accounts as a', (j) => j.on(sql<boolean>`a.account_id::text = w.account_id`))
    .leftJoin('agents as g', (j) => j.on(sql<boolean>`g.agent_id::text = w.owner_id`))
    .select([
      'w.owner_id',
      'w.owner_type',
      'w.account_id',
      'w.session_id',
      's.started_at',
      's.starting_balance',
      'a.display_name as account_name',
      'g.display_name as agent_name',
    ])
    .where('a.status', '=', 'active')
    .where((eb) =>
      eb.or([
        eb('w.owner_type', '=', 'account'),
        eb.and([eb('w.owner_type', '=', 'agent'), eb('g.status', '=', 'active')]),
      ]),
    )
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('trades as t')
          .select(sql`1`.as('one'))
          .whereRef('t.owner_id', '=', 'w.owner_id')
          .whereRef('t.session_id', '=', 'w.session_id')
          .where('t.side', '=', 'sell')
          .where('t.executed_at', '>=', new Date(from))
          .where('t.executed_at', '<=', new Date(to)),
      ),
    )
    .execute();
  return rows.map((r) => ({
    ownerId: r.owner_id,
    accountId: r.account_id,
    agentId: r.owner_type === 'agent' ? r.owner_id : null,
    displayName: r.owner_type === 'agent' ? (r.agent_name ?? r.account_name) : r.account_name,
    sessionId: r.session_id,
    sessionStartedAt: new Date(r.started_at),
    startingBalance: r.starting_balance,
  }));
};

/** USDT (available + locked) and open positions of each of `owners`' current sessions (valuation inputs). */
export const walletHoldings = async (
  db: Kysely<ReadModels>,
  owners: readonly string[],
): Promise<
  Map<string, { cash: string; positions: { symbol: string; quantity: string; cost: string }[] }>
> => {
  const out = new Map<
    string,
    { cash: string; positions: { symbol: string; quantity: string; cost: string }[] }
  >();
  if (owners.length === 0) return out;
  // One snapshot: a fill committed between the two queries would count its cash or its position twice or never.
  const { cash, positions } = await readSnapshot(db, async (trx) => ({
    cash: await trx
      .selectFrom('balances')
      .select(['owner_id', sql<string>`available + locked`.as('total')])
      .where('asset', '=', 'USDT')
      .where('owner_id', 'in', [...owners])
      .execute(),
    positions: await trx
      .selectFrom('positions')
      .select(['owner_id', 'symbol', 'quantity', 'cost_basis'])
      .where('owner_id', 'in', [...owners])
      .orderBy('owner_id')
      .orderBy('asset')
      .execute(),
  }));
  for (const owner of owners) out.set(owner, { cash: '0', positions: [] });
  for (const c of cash) out.get(c.owner_id)!.cash = c.total;
  for (const p of positions) {
    out.get(p.owner_id)!.positions.push({ symbol: p.symbol, quantity: p.quantity, cost: p.cost_basis });
  }
  return out;
};

/**
 * The first snapshot at `interval` taken at or after `from` (ms) in each wallet's current session: the opening
 * equity of a period for wallets whose session started before it. Keyed by owner.
 */
export const firstSnapshotsSince = async (
  db: Kysely<ReadModels>,
  owners: readonly { ownerId: string; sessionId: string }[],
  interval: SnapshotInterval,
  from: number,
): Promise<Map<string, SnapshotRow>> => {
  const out = new Map<string, SnapshotRow>();
  if (owners.length === 0) return out;
  const { rows } = await sql<SnapshotRow>`
    select distinct on (s.owner_id) s.*
    from equity_snapshots as s
    join unnest(${owners.map((o) => o.ownerId)}::text[], ${owners.map((o) => o.sessionId)}::text[])
      as w(owner_id, session_id) on s.owner_id = w.owner_id and s.session_id = w.session_id
    where s.interval = ${interval} and s.time >= ${new Date(from).toISOString()}::timestamptz
    order by s.owner_id, s.bucket`.execute(db);
  for (const r of rows) out.set(r.owner_id, r);
  return out;
};
