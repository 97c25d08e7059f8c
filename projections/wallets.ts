import { type Kysely, sql } from 'kysely';
import { type Dec, dec, fmt, ZERO } from '../domain/trading/decimal';
import { WALLET_EVENT_TYPES, walletOwnerOf } from '../domain/wallet/events';
import { walletEventOf } from '../domain/wallet/recorded';
import type { RecordedEvent } from '../ports/event-store';
import { deletedStreamOf, type NullableTimestamp, type Numeric, type Timestamp } from './columns';
import { declareTables, type TableDefinitions } from './ddl';
import { deleteRowsOf } from './entity-rows';
import type { Projection } from './projection';

/** Row of `wallets`: one per wallet (account or agent): its current session and trading day. */
export interface WalletsTable {
  owner_id: string;
  owner_type: 'account' | 'agent';
  account_id: string;
  session_id: string;
  /** The owner record's session the wallet follows (an agent reset changes the agent's; see SessionStarted). */
  owner_session_id: string;
  /** Current UTC trading day and the equity it opened with (daily loss breaker), or null. */
  trading_day: string | null;
  day_opening_equity: Numeric | null;
  opened_at: Timestamp;
  updated_at: Timestamp;
}

/** Row of `wallet_sessions`: one per session of each wallet; history is kept across resets. */
export interface WalletSessionsTable {
  owner_id: string;
  session_id: string;
  starting_balance: Numeric;
  reason: string;
  started_at: Timestamp;
  /** Set when a reset ended the session. */
  ended_at: NullableTimestamp;
  end_reason: string | null;
  ending_equity: Numeric | null;
  total_pnl: Numeric | null;
  realized_pnl: Numeric;
  fees_paid: Numeric;
  fills: number;
  closed_trades: number;
  winning_trades: number;
}

/** Row of `balances`: USDT and each held base asset of a wallet's current session. */
export interface BalancesTable {
  owner_id: string;
  asset: string;
  available: Numeric;
  locked: Numeric;
  updated_at: Timestamp;
}

/** Row of `positions`: each non-zero holding (spec "Position": any non-zero holding of a base asset). */
export interface PositionsTable {
  owner_id: string;
  asset: string;
  symbol: string;
  session_id: string;
  quantity: Numeric;
  cost_basis: Numeric;
  avg_entry_price: Numeric;
  opened_at: Timestamp;
  updated_at: Timestamp;
}

type DB = Kysely<{
  wallets: WalletsTable;
  wallet_sessions: WalletSessionsTable;
  balances: BalancesTable;
  positions: PositionsTable;
}>;

/** A wallet's changes within one batch, folded before writing. */
interface OwnerBatch {
  /** A session started in this batch: the balances and positions before it are replaced. */
  replaced: boolean;
  balances: Map<string, { available: Dec; locked: Dec; at: string }>;
  positions: Map<
    string,
    {
      symbol: string;
      sessionId: string;
      quantity: string;
      cost: string;
      avg: string;
      openedAt: string;
      at: string;
      reopened: boolean;
    }
  >;
  /** Assets whose position went flat during the batch (deleted unless reopened). */
  flat: Set<string>;
  sessions: Map<string, SessionDelta>;
  at: string;
}

interface SessionDelta {
  realized: Dec;
  fees: Dec;
  fills: number;
  closed: number;
  wins: number;
}

/** The DDL of its read-model tables. */
const WALLETS_TABLES: TableDefinitions = {
  wallets: {
    columns: {
      owner_id: 'text primary key',
      owner_type: 'text not null',
      account_id: 'text not null',
      session_id: 'text not null',
      owner_session_id: 'text not null',
      trading_day: 'text',
      day_opening_equity: 'numeric(38, 8)',
      opened_at: 'timestamptz not null',
      updated_at: 'timestamptz not null',
    },
    indexes: {
      wallets_account: ['account_id'],
    },
  },
  wallet_sessions: {
    columns: {
      owner_id: 'text not null',
      session_id: 'text not null',
      starting_balance: 'numeric(38, 8) not null',
      reason: 'text not null',
      started_at: 'timestamptz not null',
      ended_at: 'timestamptz',
      end_reason: 'text',
      ending_equity: 'numeric(38, 8)',
      total_pnl: 'numeric(38, 8)',
      realized_pnl: 'numeric(38, 8) not null',
      fees_paid: 'numeric(38, 8) not null',
      fills: 'integer not null',
      closed_trades: 'integer not null',
      winning_trades: 'integer not null',
    },
    primaryKey: ['owner_id', 'session_id'],
  },
  balances: {
    columns: {
      owner_id: 'text not null',
      asset: 'text not null',
      available: 'numeric(38, 8) not null',
      locked: 'numeric(38, 8) not null',
      updated_at: 'timestamptz not null',
    },
    primaryKey: ['owner_id', 'asset'],
  },
  positions: {
    columns: {
      owner_id: 'text not null',
      asset: 'text not null',
      symbol: 'text not null',
      session_id: 'text not null',
      quantity: 'numeric(38, 8) not null',
      cost_basis: 'numeric(38, 8) not null',
      avg_entry_price: 'numeric(38, 8) not null',
      opened_at: 'timestamptz not null',
      updated_at: 'timestamptz not null',
    },
    primaryKey: ['owner_id', 'asset'],
  },
};

/**
 * `wallets`, `wallet_sessions`, `balances`, `positions` (ARCHITECTURE §6). Balances move by the amounts the
 * events record (locks, fills, releases); positions take the fill's `position_after`; a `SessionStarted`
 * replaces a wallet's balances and positions with the new session's cash. A batch is folded per wallet in memory
 * and written with one upsert per table. Deterministic: values from event data only. A `StreamDeleted` of
 * `wallet-{owner}` removes the owner's rows.
 */
export const walletsProjection: Projection = {
  name: 'wallets',
  version: 1,
  ...declareTables(WALLETS_TABLES),
  eventTypes: [...WALLET_EVENT_TYPES, 'StreamDeleted'],
  async apply(db: DB, events: readonly RecordedEvent[]) {
    let batches = new Map<string, OwnerBatch>();
    const batchOf = (owner: string, at: string): OwnerBatch => {
      let b = batches.get(owner);
      if (!b) {
        b = {
          replaced: false,
          balances: new Map(),
          positions: new Map(),
          flat: new Set(),
          sessions: new Map(),
          at,
        };
        batches.set(owner, b);
      }
      b.at = at;
      return b;
    };
    const move = (b: OwnerBatch, asset: string, available: Dec, locked: Dec) => {
      const cur = b.balances.get(asset) ?? { available: ZERO, locked: ZERO, at: b.at };
      b.balances.set(asset, {
        available: cur.available.plus(available),
        locked: cur.locked.plus(locked),
        at: b.at,
      });
    };
    const session = (b: OwnerBatch, id: string): SessionDelta => {
      let s = b.sessions.get(id);
      if (!s) {
        s = { realized: ZERO, fees: ZERO, fills: 0, closed: 0, wins: 0 };
        b.sessions.set(id, s);
      }
      return s;
    };

    const flush = async () => {
      await writeOwners(db, batches);
      batches = new Map();
    };

    for (const e of events) {
      const deleted = deletedStreamOf(e);
      if (deleted !== undefined) {
        const owner = walletOwnerOf(deleted);
        if (!owner) continue;
        await flush();
        await deleteRowsOf(db, ['wallets', 'wallet_sessions', 'balances', 'positions'], 'owner_id', owner);
        continue;
      }
      const wallet = walletEventOf(e);
      if (!wallet) continue;
      const { owner, event } = wallet;
      switch (event.type) {
        case 'WalletOpened': {
          const d = event.data;
          // The session id is filled by the SessionStarted of the same append.
          await flush();
          await db
            .insertInto('wallets')
            .values({
              owner_id: d.owner_id,
              owner_type: d.owner_type,
              account_id: d.account_id,
              session_id: '',
              owner_session_id: '',
              trading_day: null,
              day_opening_equity: null,
              opened_at: d.opened_at,
              updated_at: d.opened_at,
            })
            .execute();
          break;
        }
        case 'SessionStarted': {
          const d = event.data;
          await flush();
          await db
            .updateTable('wallets')
            .set({
              session_id: d.session_id,
              owner_session_id: d.owner_session_id,
              trading_day: null,
              day_opening_equity: null,
              updated_at: d.started_at,
            })
            .where('owner_id', '=', owner)
            .execute();
          await db
            .insertInto('wallet_sessions')
            .values({
              owner_id: owner,
              session_id: d.session_id,
              starting_balance: d.starting_balance,
              reason: d.reason,
              started_at: d.started_at,
              ended_at: null,
              end_reason: null,
              ending_equity: null,
              total_pnl: null,
              realized_pnl: '0',
              fees_paid: '0',
              fills: 0,
              closed_trades: 0,
              winning_trades: 0,
            })
            .execute();
          const b = batchOf(owner, d.started_at);
          b.replaced = true;
          b.balances.set('USDT', { available: dec(d.starting_balance), locked: ZERO, at: d.started_at });
          break;
        }
        case 'WalletReset': {
          const d = event.data;
          await flush();
          await db
            .updateTable('wallet_sessions')
            .set({
              ended_at: d.reset_at,
              end_reason: d.reason,
              ending_equity: d.ending_equity,
              total_pnl: d.total_pnl,
            })
            .where('owner_id', '=', owner)
            .where('session_id', '=', d.previous_session_id)
            .execute();
          break;
        }
        case 'TradingDayOpened': {
          const d = event.data;
          await db
            .updateTable('wallets')
            .set({ trading_day: d.day, day_opening_equity: d.equity, updated_at: d.opened_at })
            .where('owner_id', '=', owner)
            .execute();
          break;
        }
        case 'OrderPlaced': {
          const d = event.data;
          // An OCO leg after the first shares its first leg's lock (`lock_shared`): nothing more is locked.
          if (d.type === 'market' || d.lock_shared) break;
          const lock = dec(d.locked_amount);
          move(batchOf(owner, d.placed_at), d.lock_asset, lock.negated(), lock);
          break;
        }
        case 'OrderCancelled': {
          const d = event.data;
          const amount = dec(d.unlocked_amount);
          move(batchOf(owner, d.cancelled_at), d.unlocked_asset, amount, amount.negated());
          break;
        }
        case 'OrderFilled': {
          const d = event.data;
          const b = batchOf(owner, d.filled_at);
          const qty = dec(d.quantity);
          const locked = dec(d.locked_amount);
          const total = dec(d.total);
          if (d.side === 'buy') {
            move(b, 'USDT', locked.minus(total), locked.negated());
            move(b, d.base_asset, qty, ZERO);
          } else {
            move(b, d.base_asset, locked.minus(qty), locked.negated());
            move(b, 'USDT', total, ZERO);
          }
          const after = d.position_after;
          const prev = b.positions.get(d.base_asset);
          if (dec(after.quantity).isZero()) {
            b.positions.delete(d.base_asset);
            b.flat.add(d.base_asset);
          } else {
            const reopened = b.replaced || b.flat.has(d.base_asset) || (prev?.reopened ?? false);
            b.positions.set(d.base_asset, {
              symbol: d.symbol,
              sessionId: d.session_id,
              quantity: after.quantity,
              cost: after.cost_basis,
              avg: after.avg_entry_price,
              // A position opened in this batch opens at this fill; an existing one keeps its stored time.
              openedAt: prev?.openedAt ?? d.filled_at,
              at: d.filled_at,
              reopened,
            });
          }
          const s = session(b, d.session_id);
          s.fees = s.fees.plus(d.fee);
          s.fills += 1;
          if (d.side === 'sell') {
            const realized = dec(d.realized_pnl);
            s.realized = s.realized.plus(realized);
            s.closed += 1;
            if (realized.gt(0)) s.wins += 1;
          }
          break;
        }
        default:
          break;
      }
    }
    await flush();
  },
};

/**
 * True when a balance delta can leave a non-USDT row at zero (so the zero-balance sweep is needed): a new row
 * taking a zero delta, or any decrease. Rows that only grow can never reach zero (balances are never negative).
 */
const mayEmpty = (asset: string, v: { available: Dec; locked: Dec }): boolean =>
  asset !== 'USDT' &&
  (v.available.isNegative() || v.locked.isNegative() || (v.available.isZero() && v.locked.isZero()));

/**
 * Writes the accumulated deltas of every owner of a batch with a fixed number of statements (not a few per
 * owner), in the order one owner's rows need: replaced sessions cleared, closed or reopened positions removed,
 * then balance deltas added, positions upserted and session totals added in one statement (three tables, so the
 * parts cannot see or collide with each other), then empty non-USDT balances dropped (only when a delta could
 * have emptied one). A page of market buys costs one statement.
 */
const writeOwners = async (db: DB, batches: ReadonlyMap<string, OwnerBatch>): Promise<void> => {
  if (batches.size === 0) return;
  const replaced: string[] = [];
  const bal = {
    owner: [] as string[],
    asset: [] as string[],
    available: [] as string[],
    locked: [] as string[],
    at: [] as string[],
  };
  const emptied = new Set<string>();
  const gone = { owner: [] as string[], asset: [] as string[] };
  const pos = {
    owner: [] as string[],
    asset: [] as string[],
    symbol: [] as string[],
    session: [] as string[],
    quantity: [] as string[],
    cost: [] as string[],
    avg: [] as string[],
    opened: [] as string[],
    at: [] as string[],
  };
  const ses = {
    owner: [] as string[],
    session: [] as string[],
    realized: [] as string[],
    fees: [] as string[],
    fills: [] as number[],
    closed: [] as number[],
    wins: [] as number[],
  };
  for (const [owner, b] of batches) {
    if (b.replaced) replaced.push(owner);
    for (const [asset, v] of b.balances) {
      bal.owner.push(owner);
      bal.asset.push(asset);
      bal.available.push(fmt(v.available));
      bal.locked.push(fmt(v.locked));
      bal.at.push(v.at);
      if (mayEmpty(asset, v)) emptied.add(owner);
    }
    // Closed positions, and reopened ones (their opening time restarts) unless the whole owner was cleared.
    for (const asset of b.flat) {
      if (b.positions.has(asset)) continue;
      gone.owner.push(owner);
      gone.asset.push(asset);
    }
    for (const [asset, p] of b.positions) {
      if (p.reopened && !b.replaced) {
        gone.owner.push(owner);
        gone.asset.push(asset);
      }
      pos.owner.push(owner);
      pos.asset.push(asset);
      pos.symbol.push(p.symbol);
      pos.session.push(p.sessionId);
      pos.quantity.push(p.quantity);
      pos.cost.push(p.cost);
      pos.avg.push(p.avg);
      pos.opened.push(p.openedAt);
      pos.at.push(p.at);
    }
    for (const [sessionId, d] of b.sessions) {
      ses.owner.push(owner);
      ses.session.push(sessionId);
      ses.realized.push(fmt(d.realized));
      ses.fees.push(fmt(d.fees));
      ses.fills.push(d.fills);
      ses.closed.push(d.closed);
      ses.wins.push(d.wins);
    }
  }
  if (replaced.length > 0) {
    await db.deleteFrom('balances').where('owner_id', 'in', replaced).execute();
    await db.deleteFrom('positions').where('owner_id', 'in', replaced).execute();
  }
  if (gone.owner.length > 0) {
    await sql`
      delete from positions as p
      using unnest(${gone.owner}::text[], ${gone.asset}::text[]) as g(owner_id, asset)
      where p.owner_id = g.owner_id and p.asset = g.asset`.execute(db);
  }
  if (bal.owner.length + pos.owner.length + ses.owner.length > 0) {
    await sql`
      with b as (
        insert into balances (owner_id, asset, available, locked, updated_at)
        select * from unnest(${bal.owner}::text[], ${bal.asset}::text[], ${bal.available}::numeric[],
                             ${bal.locked}::numeric[], ${bal.at}::timestamptz[])
        on conflict (owner_id, asset) do update
          set available = balances.available + excluded.available, locked = balances.locked + excluded.locked,
              updated_at = excluded.updated_at
      ), p as (
        insert into positions (owner_id, asset, symbol, session_id, quantity, cost_basis, avg_entry_price,
                               opened_at, updated_at)
        select * from unnest(${pos.owner}::text[], ${pos.asset}::text[], ${pos.symbol}::text[],
                             ${pos.session}::text[], ${pos.quantity}::numeric[], ${pos.cost}::numeric[],
                             ${pos.avg}::numeric[], ${pos.opened}::timestamptz[], ${pos.at}::timestamptz[])
        on conflict (owner_id, asset) do update
          set quantity = excluded.quantity, cost_basis = excluded.cost_basis,
              avg_entry_price = excluded.avg_entry_price, session_id = excluded.session_id,
              updated_at = excluded.updated_at
      )
      update wallet_sessions as w
      set realized_pnl = w.realized_pnl + d.realized, fees_paid = w.fees_paid + d.fees,
          fills = w.fills + d.fills, closed_trades = w.closed_trades + d.closed,
          winning_trades = w.winning_trades + d.wins
      from unnest(${ses.owner}::text[], ${ses.session}::text[], ${ses.realized}::numeric[],
                  ${ses.fees}::numeric[], ${ses.fills}::int[], ${ses.closed}::int[], ${ses.wins}::int[])
        as d(owner_id, session_id, realized, fees, fills, closed, wins)
      where w.owner_id = d.owner_id and w.session_id = d.session_id`.execute(db);
  }
  if (emptied.size > 0) {
    await db
      .deleteFrom('balances')
      .where('owner_id', 'in', [...emptied])
      .where('asset', '!=', 'USDT')
      .where('available', '=', '0')
      .where('locked', '=', '0')
      .execute();
  }
};
