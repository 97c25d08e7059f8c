import { type Kysely, type Selectable, sql } from 'kysely';
import { valueWallet } from '../domain/analytics/equity';
import { MARKS_EVENT_TYPES, type MarksRecordedData } from '../domain/analytics/marks';
import { type Dec, dec, fmt, roundHalfEven8, ZERO } from '../domain/trading/decimal';
import { type WalletEvent, walletOwnerOf } from '../domain/wallet/events';
import { walletEventOf } from '../domain/wallet/recorded';
import type { RecordedEvent } from '../ports/event-store';
import { deletedStreamOf, type Numeric, type Timestamp } from './columns';
import { declareTables, type TableDefinitions } from './ddl';
import type { Projection } from './projection';

/** The DDL of its read-model tables. */
const EQUITY_SNAPSHOTS_TABLES: TableDefinitions = {
  equity_snapshots: {
    columns: {
      owner_id: 'text not null',
      interval: 'text not null',
      bucket: 'timestamptz not null',
      time: 'timestamptz not null',
      session_id: 'text not null',
      total_equity: 'numeric(38, 8) not null',
      unrealized_pnl: 'numeric(38, 8) not null',
      realized_pnl: 'numeric(38, 8) not null',
    },
    primaryKey: ['owner_id', 'interval', 'bucket'],
    indexes: {
      equity_snapshots_interval_time: ['interval', 'time'],
    },
  },
  equity_wallets: {
    columns: {
      owner_id: 'text primary key',
      session_id: 'text not null',
      cash: 'numeric(38, 8) not null',
      realized_pnl: 'numeric(38, 8) not null',
    },
  },
  equity_holdings: {
    columns: {
      owner_id: 'text not null',
      symbol: 'text not null',
      quantity: 'numeric(38, 8) not null',
      cost_basis: 'numeric(38, 8) not null',
    },
    primaryKey: ['owner_id', 'symbol'],
  },
  equity_marks: {
    columns: {
      symbol: 'text not null',
      source: 'text not null',
      price: 'numeric(38, 8) not null',
      time: 'timestamptz not null',
      commit_position: 'numeric(20, 0) not null',
      prepare_position: 'numeric(20, 0) not null',
    },
    primaryKey: ['symbol', 'source'],
  },
};

/** Snapshot intervals of `GET /analytics/portfolio/history` (spec), with their length in ms. */
export const SNAPSHOT_INTERVALS = { '1m': 60_000, '1h': 3_600_000, '1d': 86_400_000 } as const;
export type SnapshotInterval = keyof typeof SNAPSHOT_INTERVALS;

/**
 * How long `1m` snapshots are kept after the newest marks (25 h): enough for `limit` ≤ 1,000 and for the
 * `1d` performance period, which uses them; `1h` and `1d` snapshots are kept for good.
 */
export const MINUTE_SNAPSHOT_RETENTION_MS = 25 * 3_600_000;

/** Row of `equity_snapshots`: one wallet's equity at the first recorded marks of each interval bucket. */
export interface EquitySnapshotsTable {
  owner_id: string;
  interval: SnapshotInterval;
  /** Start of the bucket (the minute, hour or UTC day). */
  bucket: Timestamp;
  /** When the valuation was taken: the `at` of the marks (the first of the bucket). */
  time: Timestamp;
  session_id: string;
  /** cash + locked cash + Σ quantity × mark, USDT, rounded half to even to 8 places. */
  total_equity: Numeric;
  /** Σ (quantity × mark − cost basis) of the open positions. */
  unrealized_pnl: Numeric;
  /** Realized PnL of the session so far (the portfolio snapshot's `realized_pnl`). */
  realized_pnl: Numeric;
}

/** Row of `equity_wallets`: the projection's own fold of each wallet's cash (fills and sessions only). */
export interface EquityWalletsTable {
  owner_id: string;
  session_id: string;
  /** USDT available + locked: locks move cash between the two, so only fills and sessions change the sum. */
  cash: Numeric;
  realized_pnl: Numeric;
}

/** Row of `equity_holdings`: each non-zero position (quantity and cost basis after the last fill). */
export interface EquityHoldingsTable {
  owner_id: string;
  symbol: string;
  quantity: Numeric;
  cost_basis: Numeric;
}

/**
 * Row of `equity_marks`: the last price each source gave a symbol — `source` `''` for recorded marks, else the
 * wallet owner whose fill's reference price it is — with the log position of that event. A symbol is valued at
 * its row with the highest position. Keeping the sources apart is what lets a deleted wallet's fills be taken
 * back (its rows deleted), so the table equals one rebuilt from the log, where those fills no longer exist.
 */
export interface EquityMarksTable {
  symbol: string;
  source: string;
  price: Numeric;
  time: Timestamp;
  commit_position: Numeric;
  prepare_position: Numeric;
}

/** The read models of this projection (joined into a query's database type by `queries/analytics.ts`). */
export interface EquitySnapshotTables {
  equity_snapshots: EquitySnapshotsTable;
  equity_wallets: EquityWalletsTable;
  equity_holdings: EquityHoldingsTable;
  equity_marks: EquityMarksTable;
}

type DB = Kysely<EquitySnapshotTables>;

interface WalletFold {
  sessionId: string;
  cash: Dec;
  realized: Dec;
  holdings: Map<string, { quantity: Dec; cost: Dec }>;
  /** Symbols held when loaded or since: written back as deletions when they reach zero. */
  touched: Set<string>;
}

interface Snapshot {
  owner: string;
  interval: SnapshotInterval;
  bucket: string;
  time: string;
  session: string;
  equity: string;
  unrealized: string;
  realized: string;
}

/** Loads the wallets (all of them, or `owners`) with their holdings. */
const loadWallets = async (db: DB, owners: readonly string[] | 'all'): Promise<Map<string, WalletFold>> => {
  const out = new Map<string, WalletFold>();
  if (owners !== 'all' && owners.length === 0) return out;
  let q = db
    .selectFrom('equity_wallets as w')
    .leftJoin('equity_holdings as h', 'h.owner_id', 'w.owner_id')
    .select([
      'w.owner_id',
      'w.session_id',
      'w.cash',
      'w.realized_pnl',
      'h.symbol',
      'h.quantity',
      'h.cost_basis',
    ]);
  if (owners !== 'all') q = q.where('w.owner_id', 'in', [...owners]);
  for (const r of await q.execute()) {
    let w = out.get(r.owner_id);
    if (!w) {
      w = {
        sessionId: r.session_id,
        cash: dec(r.cash),
        realized: dec(r.realized_pnl),
        holdings: new Map(),
        touched: new Set(),
      };
      out.set(r.owner_id, w);
    }
    if (r.symbol !== null) {
      w.holdings.set(r.symbol, { quantity: dec(r.quantity!), cost: dec(r.cost_basis!) });
      w.touched.add(r.symbol);
    }
  }
  return out;
};

const floorTo = (ms: number, size: number): number => Math.floor(ms / size) * size;

/** One source's last price of a symbol (see {@link EquityMarksTable}). */
interface SourcedMark {
  price: Dec;
  time: string;
  commit: bigint;
  prepare: bigint;
}

const RECORDED = '';

/**
 * Rows of `equity_marks` as the `unnest` arguments of their upsert: one text array per column (symbol, source,
 * price, time, commit and prepare position), a mark appended to each by {@link MarkColumns.add}.
 */
class MarkColumns {
  readonly symbol: string[] = [];
  readonly source: string[] = [];
  readonly price: string[] = [];
  readonly time: string[] = [];
  readonly commit: string[] = [];
  readonly prepare: string[] = [];

  /** Adds the mark of `symbol` by `source` (an owner, or {@link RECORDED}) at `time`, from the event at `at`. */
  add(
    symbol: string,
    source: string,
    price: Dec,
    time: string,
    at: { commit: bigint; prepare: bigint },
  ): void {
    this.symbol.push(symbol);
    this.source.push(source);
    this.price.push(fmt(price));
    this.time.push(time);
    this.commit.push(at.commit.toString());
    this.prepare.push(at.prepare.toString());
  }
}

/** The marks of a batch: every source's last price per symbol, the changed ones, and each symbol's latest. */
class MarkBook {
  private readonly bySymbol = new Map<string, Map<string, SourcedMark>>();
  /** Changed rows, by `symbol` then `source`. */
  readonly dirty = new Map<string, Set<string>>();

  load(rows: readonly Selectable<EquityMarksTable>[]): void {
    for (const r of rows) {
      this.sources(r.symbol).set(r.source, {
        price: dec(r.price),
        time: new Date(r.time).toISOString(),
        commit: BigInt(r.commit_position),
        prepare: BigInt(r.prepare_position),
      });
    }
  }

  set(symbol: string, source: string, price: Dec, time: string, e: RecordedEvent): void {
    this.sources(symbol).set(source, { price, time, commit: e.position.commit, prepare: e.position.prepare });
    const dirty = this.dirty.get(symbol) ?? new Set<string>();
    dirty.add(source);
    this.dirty.set(symbol, dirty);
  }

  /** Forgets a deleted wallet's fills (their rows are deleted by `write`). */
  dropSource(source: string): void {
    for (const sources of this.bySymbol.values()) sources.delete(source);
    for (const sources of this.dirty.values()) sources.delete(source);
  }

  /** The symbol's price from the latest event that gave one, if any. */
  price(symbol: string): Dec | undefined {
    let latest: SourcedMark | undefined;
    for (const m of this.bySymbol.get(symbol)?.values() ?? []) {
      if (!latest || m.commit > latest.commit || (m.commit === latest.commit && m.prepare > latest.prepare))
        latest = m;
    }
    return latest?.price;
  }

  get(symbol: string, source: string): SourcedMark | undefined {
    return this.bySymbol.get(symbol)?.get(source);
  }

  private sources(symbol: string): Map<string, SourcedMark> {
    let sources = this.bySymbol.get(symbol);
    if (!sources) {
      sources = new Map();
      this.bySymbol.set(symbol, sources);
    }
    return sources;
  }
}

/**
 * `equity_snapshots` (ARCHITECTURE §6) and its inputs: each wallet's cash and positions folded from its own
 * events, the last known price of each symbol, and at every `MarksRecorded` one valuation of every wallet,
 * stored as the snapshot of its minute, hour and UTC day unless that bucket already has one (the first marks of
 * a bucket win). Equity = cash + locked + Σ quantity × mark (`valueWallet`), a position without a recorded mark
 * at its last fill's reference price. `1m` snapshots older than {@link MINUTE_SNAPSHOT_RETENTION_MS} before the
 * newest marks are dropped. Deterministic: values and times come from event data only, so a rebuild gives the
 * same rows (docs/analytics.md).
 *
 * Per batch: the wallets touched (all of them when the batch records marks) are loaded with one query, folded in
 * memory and written back with one statement; a batch of fills alone is one statement (`applyFills`).
 */
export const equitySnapshotsProjection: Projection = {
  name: 'equity_snapshots',
  // 2: equity_marks keeps each source's mark (a deleted wallet's fills can be taken back).
  version: 2,
  ...declareTables(EQUITY_SNAPSHOTS_TABLES),
  eventTypes: ['SessionStarted', 'OrderFilled', ...MARKS_EVENT_TYPES, 'StreamDeleted'],
  async apply(db: DB, events: readonly RecordedEvent[]) {
    if (events.every((e) => e.type === 'OrderFilled')) {
      await applyFills(db, events);
      return;
    }
    const hasMarks = events.some((e) => e.type === 'MarksRecorded');
    const touched = new Set<string>();
    const deletedOwners = new Set<string>();
    for (const e of events) {
      const owner = walletOwnerOf(e.streamId);
      if (owner) touched.add(owner);
    }
    const wallets = await loadWallets(db, hasMarks ? 'all' : [...touched]);
    const marks = new MarkBook();
    // Marks are read only to value wallets; a batch without recorded marks just writes the ones it changes.
    if (hasMarks) marks.load(await db.selectFrom('equity_marks').selectAll().execute());
    const dirtyWallets = new Set<string>();
    const snapshots: Snapshot[] = [];
    const taken = new Set<string>();
    let newestMarks = Number.NEGATIVE_INFINITY;

    for (const e of events) {
      const deleted = deletedStreamOf(e);
      if (deleted !== undefined) {
        const owner = walletOwnerOf(deleted);
        if (!owner) continue;
        wallets.delete(owner);
        dirtyWallets.delete(owner);
        deletedOwners.add(owner);
        marks.dropSource(owner);
        for (let i = snapshots.length - 1; i >= 0; i--)
          if (snapshots[i]!.owner === owner) snapshots.splice(i, 1);
        continue;
      }
      if (e.type === 'MarksRecorded') {
        const d = e.data as MarksRecordedData;
        for (const m of d.marks) marks.set(m.symbol, RECORDED, dec(m.price), d.at, e);
        const at = Date.parse(d.at);
        newestMarks = Math.max(newestMarks, at);
        for (const [owner, w] of wallets) {
          const holdings = [...w.holdings].map(([symbol, h]) => ({ symbol, ...h }));
          const v = valueWallet(w.cash, holdings, (s) => marks.price(s));
          for (const [interval, size] of Object.entries(SNAPSHOT_INTERVALS) as [SnapshotInterval, number][]) {
            const bucket = new Date(floorTo(at, size)).toISOString();
            const key = `${owner}/${interval}/${bucket}`;
            if (taken.has(key)) continue;
            taken.add(key);
            snapshots.push({
              owner,
              interval,
              bucket,
              time: d.at,
              session: w.sessionId,
              equity: fmt(roundHalfEven8(v.equity)),
              unrealized: fmt(roundHalfEven8(v.unrealized)),
              realized: fmt(roundHalfEven8(w.realized)),
            });
          }
        }
        continue;
      }
      const wallet = walletEventOf(e);
      if (!wallet) continue;
      const { owner, event } = wallet;
      if (event.type === 'SessionStarted') {
        const prev = wallets.get(owner);
        const w: WalletFold = {
          sessionId: event.data.session_id,
          cash: dec(event.data.starting_balance),
          realized: ZERO,
          holdings: new Map(),
          touched: prev ? new Set([...prev.touched, ...prev.holdings.keys()]) : new Set(),
        };
        wallets.set(owner, w);
        dirtyWallets.add(owner);
      } else if (event.type === 'OrderFilled') {
        const d = event.data;
        const w = wallets.get(owner);
        if (!w) continue;
        w.cash = d.side === 'buy' ? w.cash.minus(d.total) : w.cash.plus(d.total);
        if (d.side === 'sell') w.realized = w.realized.plus(d.realized_pnl);
        const quantity = dec(d.position_after.quantity);
        if (quantity.isZero()) w.holdings.delete(d.symbol);
        else w.holdings.set(d.symbol, { quantity, cost: dec(d.position_after.cost_basis) });
        w.touched.add(d.symbol);
        dirtyWallets.add(owner);
        marks.set(d.symbol, owner, dec(d.reference_price), d.reference_time, e);
      }
    }
    await write(db, { wallets, dirtyWallets, deletedOwners, marks, snapshots });
    if (Number.isFinite(newestMarks)) {
      await db
        .deleteFrom('equity_snapshots')
        .where('interval', '=', '1m')
        .where('time', '<', new Date(newestMarks - MINUTE_SNAPSHOT_RETENTION_MS))
        .execute();
    }
  },
};

/**
 * A batch of fills alone (the usual page of live trading: no marks, sessions or deletions), folded without loading
 * the wallets (issue 23: the load was one statement per page, and its rows parsed into decimals): in one statement,
 * each wallet's cash and realized PnL move by the page's exact sums (every amount of a fill has at most 8 places, so
 * a sum has too; `fmt` refuses one with more, as the fold's write does, rather than let PostgreSQL round it); each
 * (wallet, symbol) filled takes its last fill's position (deleted at zero); each (symbol, wallet) its last fill's
 * reference price as its mark. A fill of a wallet without a row changes nothing, as in the fold
 * (`w` gives the wallets updated). Same rows as loading, folding and writing back (`apply`'s other path); the
 * rebuild tests compare the two (test/analytics: live pages against a rebuild in batches of 7 and 5,000).
 */
const applyFills = async (db: DB, events: readonly RecordedEvent[]): Promise<void> => {
  const sums = new Map<string, { cash: Dec; realized: Dec }>();
  const positions = new Map<string, { owner: string; symbol: string; quantity: Dec; cost: Dec }>();
  const fillMarks = new Map<
    string,
    { symbol: string; owner: string; price: Dec; time: string; e: RecordedEvent }
  >();
  for (const e of events) {
    const owner = walletOwnerOf(e.streamId);
    if (!owner) continue;
    const d = e.data as Extract<WalletEvent, { type: 'OrderFilled' }>['data'];
    let sum = sums.get(owner);
    if (!sum) {
      sum = { cash: ZERO, realized: ZERO };
      sums.set(owner, sum);
    }
    sum.cash = d.side === 'buy' ? sum.cash.minus(d.total) : sum.cash.plus(d.total);
    if (d.side === 'sell') sum.realized = sum.realized.plus(d.realized_pnl);
    positions.set(`${owner}\n${d.symbol}`, {
      owner,
      symbol: d.symbol,
      quantity: dec(d.position_after.quantity),
      cost: dec(d.position_after.cost_basis),
    });
    fillMarks.set(`${d.symbol}\n${owner}`, {
      symbol: d.symbol,
      owner,
      price: dec(d.reference_price),
      time: d.reference_time,
      e,
    });
  }
  if (sums.size === 0) return;
  const w = { owner: [] as string[], cash: [] as string[], realized: [] as string[] };
  for (const [owner, sum] of sums) {
    w.owner.push(owner);
    w.cash.push(fmt(sum.cash));
    w.realized.push(fmt(sum.realized));
  }
  const h = { owner: [] as string[], symbol: [] as string[], quantity: [] as string[], cost: [] as string[] };
  const gone = { owner: [] as string[], symbol: [] as string[] };
  for (const p of positions.values()) {
    if (p.quantity.isZero()) {
      gone.owner.push(p.owner);
      gone.symbol.push(p.symbol);
      continue;
    }
    h.owner.push(p.owner);
    h.symbol.push(p.symbol);
    h.quantity.push(fmt(p.quantity));
    h.cost.push(fmt(p.cost));
  }
  const m = new MarkColumns();
  for (const mark of fillMarks.values())
    m.add(mark.symbol, mark.owner, mark.price, mark.time, mark.e.position);
  await sql`
    with w as (
      update equity_wallets as x
      set cash = x.cash + d.cash, realized_pnl = x.realized_pnl + d.realized
      from unnest(${w.owner}::text[], ${w.cash}::numeric[], ${w.realized}::numeric[]) as d(owner_id, cash, realized)
      where x.owner_id = d.owner_id
      returning x.owner_id
    ), g as (
      delete from equity_holdings as x
      using unnest(${gone.owner}::text[], ${gone.symbol}::text[]) as g(owner_id, symbol)
      where x.owner_id = g.owner_id and x.symbol = g.symbol and g.owner_id in (select owner_id from w)
    ), h as (
      insert into equity_holdings (owner_id, symbol, quantity, cost_basis)
      select h.* from unnest(${h.owner}::text[], ${h.symbol}::text[], ${h.quantity}::numeric[], ${h.cost}::numeric[])
        as h(owner_id, symbol, quantity, cost_basis)
      where h.owner_id in (select owner_id from w)
      on conflict (owner_id, symbol) do update
        set quantity = excluded.quantity, cost_basis = excluded.cost_basis
    )
    insert into equity_marks (symbol, source, price, time, commit_position, prepare_position)
    select m.* from unnest(${m.symbol}::text[], ${m.source}::text[], ${m.price}::numeric[], ${m.time}::timestamptz[],
                           ${m.commit}::numeric[], ${m.prepare}::numeric[])
      as m(symbol, source, price, time, commit_position, prepare_position)
    where m.source in (select owner_id from w)
    on conflict (symbol, source) do update
      set price = excluded.price, time = excluded.time, commit_position = excluded.commit_position,
          prepare_position = excluded.prepare_position`.execute(db);
};

/**
 * Writes a batch's outcome: deleted wallets' rows removed, then in one statement the changed wallets upserted,
 * their closed positions deleted and open ones upserted, the changed marks upserted and the new snapshots
 * inserted (a bucket that already has a snapshot keeps it).
 */
const write = async (
  db: DB,
  b: {
    wallets: Map<string, WalletFold>;
    dirtyWallets: Set<string>;
    deletedOwners: Set<string>;
    marks: MarkBook;
    snapshots: Snapshot[];
  },
): Promise<void> => {
  if (b.deletedOwners.size > 0) {
    const owners = [...b.deletedOwners];
    for (const table of ['equity_snapshots', 'equity_holdings', 'equity_wallets'] as const) {
      await db.deleteFrom(table).where('owner_id', 'in', owners).execute();
    }
    await db.deleteFrom('equity_marks').where('source', 'in', owners).execute();
  }
  const w = {
    owner: [] as string[],
    session: [] as string[],
    cash: [] as string[],
    realized: [] as string[],
  };
  const h = { owner: [] as string[], symbol: [] as string[], quantity: [] as string[], cost: [] as string[] };
  const gone = { owner: [] as string[], symbol: [] as string[] };
  for (const owner of b.dirtyWallets) {
    const f = b.wallets.get(owner)!;
    w.owner.push(owner);
    w.session.push(f.sessionId);
    w.cash.push(fmt(f.cash));
    w.realized.push(fmt(f.realized));
    for (const [symbol, p] of f.holdings) {
      h.owner.push(owner);
      h.symbol.push(symbol);
      h.quantity.push(fmt(p.quantity));
      h.cost.push(fmt(p.cost));
    }
    for (const symbol of f.touched) {
      if (f.holdings.has(symbol)) continue;
      gone.owner.push(owner);
      gone.symbol.push(symbol);
    }
  }
  const m = new MarkColumns();
  for (const [symbol, sources] of b.marks.dirty) {
    for (const source of sources) {
      const mark = b.marks.get(symbol, source)!;
      m.add(symbol, source, mark.price, mark.time, mark);
    }
  }
  // The new snapshots, one array per field (the `unnest` arguments of the insert).
  const s = (field: keyof Snapshot): string[] => b.snapshots.map((x) => x[field]);
  if (w.owner.length + m.symbol.length + b.snapshots.length === 0) return;
  await sql`
    with w as (
      insert into equity_wallets (owner_id, session_id, cash, realized_pnl)
      select * from unnest(${w.owner}::text[], ${w.session}::text[], ${w.cash}::numeric[], ${w.realized}::numeric[])
      on conflict (owner_id) do update
        set session_id = excluded.session_id, cash = excluded.cash, realized_pnl = excluded.realized_pnl
    ), g as (
      delete from equity_holdings as x
      using unnest(${gone.owner}::text[], ${gone.symbol}::text[]) as g(owner_id, symbol)
      where x.owner_id = g.owner_id and x.symbol = g.symbol
    ), h as (
      insert into equity_holdings (owner_id, symbol, quantity, cost_basis)
      select * from unnest(${h.owner}::text[], ${h.symbol}::text[], ${h.quantity}::numeric[], ${h.cost}::numeric[])
      on conflict (owner_id, symbol) do update
        set quantity = excluded.quantity, cost_basis = excluded.cost_basis
    ), m as (
      insert into equity_marks (symbol, source, price, time, commit_position, prepare_position)
      select * from unnest(${m.symbol}::text[], ${m.source}::text[], ${m.price}::numeric[], ${m.time}::timestamptz[],
                           ${m.commit}::numeric[], ${m.prepare}::numeric[])
      on conflict (symbol, source) do update
        set price = excluded.price, time = excluded.time, commit_position = excluded.commit_position,
            prepare_position = excluded.prepare_position
    )
    insert into equity_snapshots (owner_id, interval, bucket, time, session_id, total_equity, unrealized_pnl,
                                  realized_pnl)
    select * from unnest(${s('owner')}::text[], ${s('interval')}::text[], ${s('bucket')}::timestamptz[],
                         ${s('time')}::timestamptz[], ${s('session')}::text[], ${s('equity')}::numeric[],
                         ${s('unrealized')}::numeric[], ${s('realized')}::numeric[])
    on conflict (owner_id, interval, bucket) do nothing`.execute(db);
};
