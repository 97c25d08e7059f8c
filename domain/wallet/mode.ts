import type { BaseContext, Decider, DomainEvent } from '../shared/decider';

/**
 * The owner's primary mode (`POST /account/mode`; ARCHITECTURE §14b: `live` or `backtest`, with a strategy
 * label), on its own stream `mode-{owner_id}`. Switching does not stop active backtests. A separate aggregate
 * from the wallet: the mode is a preference of the owner, not a ledger fact.
 */
export type TradingMode = 'live' | 'backtest';

export type TradingModeEvent = DomainEvent<
  'TradingModeChanged',
  { owner_id: string; mode: TradingMode; strategy_label: string | null; changed_at: string }
>;

export type TradingModeCommand = {
  type: 'SetTradingMode';
  data: { ownerId: string; mode: TradingMode; strategyLabel: string | null };
};

export interface TradingModeState {
  mode: TradingMode;
  strategyLabel: string | null;
  changedAt: string | null;
}

/** Stream of one owner's mode. */
export const modeStreamId = (ownerId: string): string => `mode-${ownerId}`;

/** Records a change of mode or label; nothing when both are what they already are. */
export const tradingModeDecider: Decider<
  TradingModeState,
  TradingModeCommand,
  TradingModeEvent,
  BaseContext
> = {
  initialState: () => ({ mode: 'live', strategyLabel: null, changedAt: null }),
  evolve: (_state, e) => ({
    mode: e.data.mode,
    strategyLabel: e.data.strategy_label,
    changedAt: e.data.changed_at,
  }),
  decide: (c, s, ctx) =>
    s.changedAt !== null && s.mode === c.data.mode && s.strategyLabel === c.data.strategyLabel
      ? []
      : [
          {
            type: 'TradingModeChanged',
            data: {
              owner_id: c.data.ownerId,
              mode: c.data.mode,
              strategy_label: c.data.strategyLabel,
              changed_at: ctx.now.toISOString(),
            },
          },
        ],
};
