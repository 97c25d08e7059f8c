import { describe, expect, it } from 'vitest';
import { DomainError } from '../../domain/shared/errors';
import type { WalletCommand } from '../../domain/wallet/commands';
import { walletDecider } from '../../domain/wallet/decide';
import { context } from './support';

describe('the wallet decider is exhaustive over its commands', () => {
  it('refuses a command type it has no case for (INTERNAL_ERROR), instead of deciding nothing', () => {
    const stray = { type: 'MintMoney', data: {} } as unknown as WalletCommand;
    let thrown: unknown;
    try {
      walletDecider.decide(stray, walletDecider.initialState(), context());
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    expect(thrown).toMatchObject({ code: 'INTERNAL_ERROR', message: 'unknown wallet command: MintMoney' });
  });
});
