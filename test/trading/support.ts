import fc from 'fast-check';
import type { FillModelName } from '../../domain/fill-model/model';
import { foldEvents } from '../../domain/shared/decider';
import { DEFAULT_RISK_PROFILE, type RiskProfile } from '../../domain/shared/risk-profile';
import { type Dec, dec } from '../../domain/trading/decimal';
import type { PairFilters } from '../../domain/trading/quantity';
import type { OwnerSnapshot, QuotedPrice, WalletCommand, WalletContext } from '../../domain/wallet/commands';
import { walletDecider } from '../../domain/wallet/decide';
import type { WalletEvent } from '../../domain/wallet/events';
import type { WalletState } from '../../domain/wallet/state';

/** Pairs of the decider tests (filters as Binance reports them for these symbols, simplified). */
export const PAIRS: Record<string, PairFilters> = {
  BTCUSDT: {
    symbol: 'BTCUSDT',
    baseAsset: 'BTC',
    status: 'active',
    minQty: '0.00001000',
    stepSize: '0.00001000',
    minNotional: '5.00000000',
  },
  ETHUSDT: {
    symbol: 'ETHUSDT',
    baseAsset: 'ETH',
    status: 'active',
    minQty: '0.00010000',
    stepSize: '0.00010000',
    minNotional: '5.00000000',
  },
  LUNAUSDT: {
    symbol: 'LUNAUSDT',
    baseAsset: 'LUNA',
    status: 'inactive',
    minQty: '0.01000000',
    stepSize: '0.01000000',
    minNotional: '5.00000000',
  },
};

/**
 * The plain decimal text of `digits` × 10^-`places` (`12345`, 2 → `123.45`; `5`, 3 → `0.005`): what the property
 * tests' decimal generators build their texts from.
 */
export const decimalTextOf = (digits: bigint, places: number): string => {
  const s = digits.toString().padStart(places + 1, '0');
  return places === 0 ? s : `${s.slice(0, -places)}.${s.slice(-places)}`;
};

export const OWNER_ID = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
export const SESSION_ID = 'ssssssss-0000-4000-8000-000000000001';

export const owner = (over: Partial<OwnerSnapshot> = {}): OwnerSnapshot => ({
  ownerId: OWNER_ID,
  ownerType: 'account',
  accountId: OWNER_ID,
  status: 'active',
  accountStatus: 'active',
  sessionId: SESSION_ID,
  startingBalance: '10000.00000000',
  // The decider tests pin the rules the fill model leaves alone (risk chain, locks, PnL): they open wallets
  // `instant`, touch-and-fill-in-full, explicitly. The fill models have their own tests (test/fill-model).
  fillModel: 'instant',
  ...over,
});

export const NOW = new Date('2024-01-05T10:00:00.000Z');
export const AT = NOW.toISOString();

/** A mutable market for tests: prices and 24h quote volumes by symbol. */
export interface TestMarket {
  prices: Map<string, string>;
  volumes: Map<string, string>;
}

export const market = (
  prices: Record<string, string> = { BTCUSDT: '40000', ETHUSDT: '2000' },
): TestMarket => ({
  prices: new Map(Object.entries(prices)),
  volumes: new Map([
    ['BTCUSDT', '400000000'],
    ['ETHUSDT', '100000000'],
  ]),
});

/** A context with sequential ids (`id-1`, `id-2`, …). */
export const context = (
  m: TestMarket = market(),
  over: Partial<Omit<WalletContext, 'newId' | 'riskProfile'>> & {
    riskProfile?: Partial<RiskProfile>;
    ids?: string;
  } = {},
): WalletContext => {
  let n = 0;
  const prefix = over.ids ?? 'id';
  return {
    now: over.now ?? NOW,
    newId: () => `${prefix}-${++n}`,
    prices: (symbol): QuotedPrice | undefined => {
      const p = m.prices.get(symbol);
      return p === undefined
        ? undefined
        : { price: p, timestamp: '2024-01-05T09:59:59.000Z', source: 'files' };
    },
    pairs: (symbol) => PAIRS[symbol],
    quoteVolume24h: (symbol): Dec | undefined => {
      const v = m.volumes.get(symbol);
      return v === undefined ? undefined : dec(v);
    },
    riskProfile: { ...DEFAULT_RISK_PROFILE, ...over.riskProfile },
    feeRate: over.feeRate ?? dec('0.001'),
  };
};

/** Shorthands for commands. */
export const place = (
  order: Partial<Extract<WalletCommand, { type: 'PlaceOrder' }>['data']['order']>,
  o: Partial<OwnerSnapshot> = {},
): WalletCommand => ({
  type: 'PlaceOrder',
  data: {
    owner: owner(o),
    order: { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.01', ...order },
  },
});

export const fill = (orderId: string, price: string, time = AT, source = 'files'): WalletCommand => ({
  type: 'FillOrder',
  data: { orderId, price, time, source },
});

/** The `FillOrder` each open order of `state` gets from one market print: its price, time and base volume. */
export const printFills = (
  state: WalletState,
  price: string,
  time: string,
  volume: string,
): WalletCommand[] =>
  Object.keys(state.openOrders).map((orderId) => ({
    type: 'FillOrder',
    data: { orderId, price, time, source: 'files', volume },
  }));

/** A `CancelOrder` of the open order of `state` that `pick` chooses (modulo their count); none when none is open. */
export const cancelPicked = (state: WalletState, pick: number): WalletCommand[] => {
  const ids = Object.keys(state.openOrders);
  return ids.length > 0 ? [{ type: 'CancelOrder', data: { orderId: ids[pick % ids.length]! } }] : [];
};

/** The opening events of a fresh wallet (account owner, 10,000 USDT), and the day opened at 10,000. */
export const opened = (startingBalance = '10000.00000000'): WalletEvent[] => [
  {
    type: 'WalletOpened',
    data: {
      owner_id: OWNER_ID,
      owner_type: 'account',
      account_id: OWNER_ID,
      opened_at: AT,
      fill_model: 'instant',
      participation_pct: 10,
    },
  },
  {
    type: 'SessionStarted',
    data: {
      session_id: SESSION_ID,
      starting_balance: startingBalance,
      owner_session_id: SESSION_ID,
      reason: 'opened',
      started_at: AT,
    },
  },
];

/** Runs commands one after another from `given` events; returns every event and the final state. */
export const run = (commands: WalletCommand[], ctx: WalletContext = context(), given: WalletEvent[] = []) => {
  let state = foldEvents(walletDecider, given);
  const events: WalletEvent[] = [...given];
  const produced: WalletEvent[][] = [];
  for (const command of commands) {
    const out = walletDecider.decide(command, state, ctx);
    produced.push(out);
    events.push(...out);
    state = foldEvents(walletDecider, out, state);
  }
  return { events, state, produced, last: produced[produced.length - 1] ?? [] };
};

/** The data of the first event of `type` in `events`. */
export const dataOf = <T extends WalletEvent['type']>(
  events: WalletEvent[],
  type: T,
): Extract<WalletEvent, { type: T }>['data'] => {
  const e = events.find((x) => x.type === type);
  if (!e) throw new Error(`no ${type} in ${events.map((x) => x.type).join(', ')}`);
  return e.data as never;
};

/**
 * Asserts the property `check` (fast-check, `numRuns` runs) over random sessions: a sequence of up to 30 `step`s,
 * each under a fill model drawn from both (`realistic`, `instant`). The shape of the wallet decider's random-session
 * properties (order lists, time in force); `check` throws (an `expect`) where the property does not hold.
 */
export const holdsForRandomSessions = <S>(
  step: fc.Arbitrary<S>,
  numRuns: number,
  check: (model: FillModelName, steps: S[]) => void,
): void =>
  fc.assert(
    fc.property(
      fc.constantFrom<FillModelName>('realistic', 'instant'),
      fc.array(step, { maxLength: 30 }),
      check,
    ),
    { numRuns },
  );
