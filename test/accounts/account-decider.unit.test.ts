import { describe, expect, it } from 'vitest';
import type { AccountCommand } from '../../domain/account/commands';
import { accountDecider } from '../../domain/account/decide';
import { emailReservationDecider } from '../../domain/account/email-reservation';
import type { AccountEvent } from '../../domain/account/events';
import { apiKeyIndexDecider, apiKeyStreamId } from '../../domain/account/key-index';
import type { BaseContext } from '../../domain/shared/decider';
import { DEFAULT_RISK_PROFILE } from '../../domain/shared/risk-profile';
import { deciderSpec } from '../support/decider-spec';

const now = new Date('2025-01-02T03:04:05.000Z');
const ctx: BaseContext = { now, newId: () => 'session-1' };
const ACCOUNT = '11111111-1111-4111-8111-111111111111';
const spec = deciderSpec(accountDecider);

const register = (over: Partial<Extract<AccountCommand, { type: 'RegisterAccount' }>['data']> = {}) =>
  ({
    type: 'RegisterAccount',
    data: {
      accountId: ACCOUNT,
      displayName: '  Alice  ',
      email: 'Alice@Example.com',
      apiKeyHash: 'keyhash',
      apiKeyPreview: 'ak_live_abcd...',
      apiSecretHash: 'scrypt$secret',
      passwordHash: null,
      startingBalance: undefined,
      ...over,
    },
  }) satisfies AccountCommand;

const registered: AccountEvent = {
  type: 'AccountRegistered',
  data: {
    account_id: ACCOUNT,
    display_name: 'Alice',
    email: 'alice@example.com',
    api_key_hash: 'keyhash',
    api_key_preview: 'ak_live_abcd...',
    api_secret_hash: 'scrypt$secret',
    password_hash: null,
    starting_balance: '10000.00000000',
    session_id: 'session-1',
    risk_profile: { ...DEFAULT_RISK_PROFILE },
    registered_at: now.toISOString(),
  },
};
const at = now.toISOString();

describe('account decider', () => {
  it('registers with defaults: trimmed name, lower-cased email, 10000 USDT, default risk profile, new session', () => {
    spec.given([]).when(register(), ctx).thenEmits([registered]);
  });

  it('normalises the starting balance to 8 places and accepts numbers', () => {
    spec
      .given([])
      .when(register({ startingBalance: '2500.5' }), ctx)
      .thenAssert(([e]) => {
        expect(e?.type === 'AccountRegistered' && e.data.starting_balance).toBe('2500.50000000');
      });
    spec
      .given([])
      .when(register({ startingBalance: 123.25 }), ctx)
      .thenAssert(([e]) => {
        expect(e?.type === 'AccountRegistered' && e.data.starting_balance).toBe('123.25000000');
      });
  });

  it.each([
    ['empty name', { displayName: '   ' }],
    ['65-character name', { displayName: 'x'.repeat(65) }],
    ['zero balance', { startingBalance: '0' }],
    ['negative balance', { startingBalance: '-5' }],
    ['9 decimal places', { startingBalance: '1.123456789' }],
    ['exponent form', { startingBalance: '1e5' }],
  ])('refuses %s with VALIDATION_ERROR', (_name, over) => {
    spec.given([]).when(register(over), ctx).thenThrows('VALIDATION_ERROR');
  });

  it('accepts a 64-character name', () => {
    spec
      .given([])
      .when(register({ displayName: 'y'.repeat(64) }), ctx)
      .thenAssert((events) => {
        expect(events).toHaveLength(1);
      });
  });

  it('refuses a second registration of the same stream', () => {
    spec.given([registered]).when(register(), ctx).thenThrows('CONFLICT');
  });

  it('needs a registered account for every other command', () => {
    spec
      .given([])
      .when({ type: 'SetAccountPassword', data: { passwordHash: 'h' } }, ctx)
      .thenThrows('ACCOUNT_NOT_FOUND');
    spec
      .given([])
      .when({ type: 'SuspendAccount', data: { reason: null } }, ctx)
      .thenThrows('ACCOUNT_NOT_FOUND');
  });

  it('sets a password the first time and changes it later', () => {
    spec
      .given([registered])
      .when({ type: 'SetAccountPassword', data: { passwordHash: 'h1' } }, ctx)
      .thenEmits([
        {
          type: 'AccountPasswordSet',
          data: { account_id: ACCOUNT, password_hash: 'h1', first_time: true, set_at: at },
        },
      ]);
    spec
      .given([
        registered,
        {
          type: 'AccountPasswordSet',
          data: { account_id: ACCOUNT, password_hash: 'h1', first_time: true, set_at: at },
        },
      ])
      .when({ type: 'SetAccountPassword', data: { passwordHash: 'h2' } }, ctx)
      .thenAssert(([e], state) => {
        expect(e?.type === 'AccountPasswordSet' && e.data.first_time).toBe(false);
        expect(state.passwordHash).toBe('h2');
      });
  });

  it('replaces the risk profile within bounds, records nothing when unchanged, refuses out of bounds', () => {
    const profile = { max_position_size_pct: 10, daily_loss_limit_pct: 5, max_open_orders: 200 };
    spec
      .given([registered])
      .when({ type: 'UpdateAccountRiskProfile', data: { riskProfile: profile } }, ctx)
      .thenEmits([
        {
          type: 'AccountRiskProfileUpdated',
          data: { account_id: ACCOUNT, risk_profile: { ...profile, max_order_size_pct: 50 }, updated_at: at },
        },
      ]);
    spec
      .given([registered])
      .when({ type: 'UpdateAccountRiskProfile', data: { riskProfile: { max_position_size_pct: 25 } } }, ctx)
      .thenEmits([]);
    for (const bad of [
      { max_position_size_pct: 0 },
      { max_position_size_pct: 101 },
      { daily_loss_limit_pct: 0 },
      { daily_loss_limit_pct: 101 },
      { max_open_orders: 0 },
      { max_open_orders: 201 },
      { max_open_orders: 2.5 },
    ]) {
      spec
        .given([registered])
        .when({ type: 'UpdateAccountRiskProfile', data: { riskProfile: bad } }, ctx)
        .thenThrows('VALIDATION_ERROR');
    }
  });

  it('moves between statuses: suspend, reactivate, archive; idempotent where nothing changes', () => {
    const suspended: AccountEvent = {
      type: 'AccountSuspended',
      data: { account_id: ACCOUNT, reason: 'abuse', suspended_at: at },
    };
    const archived: AccountEvent = {
      type: 'AccountArchived',
      data: { account_id: ACCOUNT, reason: null, archived_at: at },
    };
    spec
      .given([registered])
      .when({ type: 'SuspendAccount', data: { reason: 'abuse' } }, ctx)
      .thenEmits([suspended]);
    spec
      .given([registered, suspended])
      .when({ type: 'SuspendAccount', data: { reason: null } }, ctx)
      .thenEmits([]);
    spec
      .given([registered, suspended])
      .when({ type: 'ReactivateAccount', data: {} }, ctx)
      .thenEmits([
        {
          type: 'AccountReactivated',
          data: { account_id: ACCOUNT, previous_status: 'suspended', reactivated_at: at },
        },
      ]);
    spec.given([registered]).when({ type: 'ReactivateAccount', data: {} }, ctx).thenEmits([]);
    spec
      .given([registered, suspended])
      .when({ type: 'ArchiveAccount', data: { reason: null } }, ctx)
      .thenEmits([archived]);
    spec
      .given([registered, archived])
      .when({ type: 'ArchiveAccount', data: { reason: null } }, ctx)
      .thenEmits([]);
    spec
      .given([registered, archived])
      .when({ type: 'SuspendAccount', data: { reason: null } }, ctx)
      .thenThrows('CONFLICT');
    spec
      .given([registered, archived])
      .when({ type: 'ReactivateAccount', data: {} }, ctx)
      .thenAssert((_e, state) => expect(state.status).toBe('active'));
  });

  it('refuses password and risk changes of a suspended or archived account with ACCOUNT_SUSPENDED', () => {
    const suspended: AccountEvent = {
      type: 'AccountSuspended',
      data: { account_id: ACCOUNT, reason: null, suspended_at: at },
    };
    spec
      .given([registered, suspended])
      .when({ type: 'SetAccountPassword', data: { passwordHash: 'h' } }, ctx)
      .thenThrows('ACCOUNT_SUSPENDED');
    spec
      .given([registered, suspended])
      .when({ type: 'UpdateAccountRiskProfile', data: { riskProfile: { max_open_orders: 3 } } }, ctx)
      .thenThrows('ACCOUNT_SUSPENDED');
  });
});

describe('email reservation decider', () => {
  const email = deciderSpec(emailReservationDecider);
  const reserved = {
    type: 'EmailReserved' as const,
    data: { email_hash: 'h', account_id: 'a', reserved_at: at },
  };
  it('reserves a free address, refuses a held one with DUPLICATE_ACCOUNT, is idempotent for the holder', () => {
    email
      .given([])
      .when({ type: 'ReserveEmail', data: { emailHash: 'h', accountId: 'a' } }, ctx)
      .thenEmits([reserved]);
    email
      .given([reserved])
      .when({ type: 'ReserveEmail', data: { emailHash: 'h', accountId: 'b' } }, ctx)
      .thenThrows('DUPLICATE_ACCOUNT');
    email
      .given([reserved])
      .when({ type: 'ReserveEmail', data: { emailHash: 'h', accountId: 'a' } }, ctx)
      .thenEmits([]);
  });
  it('releases only for the holder, after which the address is free again', () => {
    const released = {
      type: 'EmailReleased' as const,
      data: { email_hash: 'h', account_id: 'a', released_at: at },
    };
    email
      .given([reserved])
      .when({ type: 'ReleaseEmail', data: { emailHash: 'h', accountId: 'b' } }, ctx)
      .thenEmits([]);
    email
      .given([reserved])
      .when({ type: 'ReleaseEmail', data: { emailHash: 'h', accountId: 'a' } }, ctx)
      .thenEmits([released]);
    email
      .given([reserved, released])
      .when({ type: 'ReserveEmail', data: { emailHash: 'h', accountId: 'b' } }, ctx)
      .thenAssert(([e]) => expect(e?.type).toBe('EmailReserved'));
  });
});

describe('API key index (apikey-{hash})', () => {
  const keys = deciderSpec(apiKeyIndexDecider);
  const issue = (accountId: string, agentId: string | null = null) =>
    ({ type: 'IssueApiKey', data: { keyHash: 'k', accountId, agentId } }) as const;
  const issued = apiKeyIndexDecider.decide(issue('a'), apiKeyIndexDecider.initialState(), ctx);
  it('names the account a key was issued to; the same again is nothing; another holder is a CONFLICT', () => {
    expect(issued).toEqual([
      { type: 'AccountKeyIssued', data: { key_hash: 'k', account_id: 'a', issued_at: now.toISOString() } },
    ]);
    keys.given(issued).when(issue('a'), ctx).thenEmits([]);
    keys.given(issued).when(issue('b'), ctx).thenThrows('CONFLICT');
    keys.given(issued).when(issue('a', 'g'), ctx).thenThrows('CONFLICT');
    expect(apiKeyStreamId('k')).toBe('apikey-k');
  });
  it("names an agent key's account and agent; the same again is nothing; the account's own key is another holder", () => {
    const agentKey = apiKeyIndexDecider.decide(issue('a', 'g'), apiKeyIndexDecider.initialState(), ctx);
    expect(agentKey).toEqual([
      {
        type: 'AgentKeyIssued',
        data: { key_hash: 'k', account_id: 'a', agent_id: 'g', issued_at: now.toISOString() },
      },
    ]);
    keys.given(agentKey).when(issue('a', 'g'), ctx).thenEmits([]);
    keys.given(agentKey).when(issue('a'), ctx).thenThrows('CONFLICT');
    keys.given(agentKey).when(issue('a', 'h'), ctx).thenThrows('CONFLICT');
  });
});
