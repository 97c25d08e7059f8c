import type { BaseContext, Decider } from '../../domain/shared/decider';
import { DomainError } from '../../domain/shared/errors';

/** A tiny decider for framework tests: a cash box that can be funded and spent, never below zero. */
export type CashEvent =
  | { type: 'Funded'; data: { amount: number; at: string } }
  | { type: 'Spent'; data: { amount: number; id: string; at: string } };
export type CashCommand = { type: 'Fund'; amount: number } | { type: 'Spend'; amount: number };
export interface CashState {
  balance: number;
  spends: number;
}

export const cashDecider: Decider<CashState, CashCommand, CashEvent, BaseContext> = {
  initialState: () => ({ balance: 0, spends: 0 }),
  evolve: (s, e) =>
    e.type === 'Funded'
      ? { ...s, balance: s.balance + e.data.amount }
      : { balance: s.balance - e.data.amount, spends: s.spends + 1 },
  decide: (c, s, ctx) => {
    if (c.amount <= 0) throw new DomainError('VALIDATION_ERROR', 'amount must be positive');
    if (c.type === 'Fund') return [{ type: 'Funded', data: { amount: c.amount, at: ctx.now.toISOString() } }];
    if (c.amount > s.balance) {
      throw new DomainError('INSUFFICIENT_BALANCE', 'not enough cash', {
        available: s.balance,
        required: c.amount,
      });
    }
    return [{ type: 'Spent', data: { amount: c.amount, id: ctx.newId(), at: ctx.now.toISOString() } }];
  },
};
