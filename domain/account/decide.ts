import type { BaseContext, Decider } from '../shared/decider';
import { DomainError } from '../shared/errors';
import { DEFAULT_RISK_PROFILE, resolveRiskProfile, sameRiskProfile } from '../shared/risk-profile';
import { normalizeStartingBalance } from '../shared/starting-balance';
import { CONTROL_CHARACTER, CONTROL_CHARACTER_MESSAGE } from '../shared/text';
import type { AccountCommand } from './commands';
import type { AccountEvent } from './events';
import { type AccountState, evolveAccount, initialAccountState } from './state';

/** Display name bounds of an account (spec "Account": 1–64 characters at registration). */
export const ACCOUNT_NAME_MAX = 64;

/**
 * Decides an account command (ARCHITECTURE §4, §12, §14b). Rules:
 * - `RegisterAccount` only on an empty stream (else `CONFLICT`); display name 1–64 characters after trimming,
 *   starting balance positive (`VALIDATION_ERROR`); a new session id comes from the context.
 * - every other command needs a registered account (`ACCOUNT_NOT_FOUND`);
 * - password and risk-profile changes need an `active` account (`ACCOUNT_SUSPENDED`); risk bounds as in the
 *   spec (`VALIDATION_ERROR`); an unchanged risk profile records nothing;
 * - status changes (operator CLI): suspend `active` → `suspended` (an archived account cannot be suspended:
 *   `CONFLICT`), reactivate `suspended`/`archived` → `active`, archive `active`/`suspended` → `archived`;
 *   a command that would not change the status records nothing;
 * - storing the signing secret records it once (an account that has one records nothing).
 */
export const decideAccount = (
  command: AccountCommand,
  state: AccountState,
  context: BaseContext,
): AccountEvent[] => {
  const now = context.now.toISOString();
  if (command.type === 'RegisterAccount') {
    if (state.status !== 'none') throw new DomainError('CONFLICT', 'account already exists');
    const d = command.data;
    const displayName = d.displayName.trim();
    if (displayName.length < 1 || [...displayName].length > ACCOUNT_NAME_MAX) {
      throw new DomainError('VALIDATION_ERROR', `display_name must be 1 to ${ACCOUNT_NAME_MAX} characters`, {
        field: 'display_name',
      });
    }
    if (CONTROL_CHARACTER.test(displayName)) {
      throw new DomainError('VALIDATION_ERROR', `display_name ${CONTROL_CHARACTER_MESSAGE}`, {
        field: 'display_name',
      });
    }
    return [
      {
        type: 'AccountRegistered',
        data: {
          account_id: d.accountId,
          display_name: displayName,
          email: d.email?.toLowerCase() ?? null,
          api_key_hash: d.apiKeyHash,
          api_key_preview: d.apiKeyPreview,
          api_secret_hash: d.apiSecretHash,
          password_hash: d.passwordHash,
          ...(d.apiSecretCiphertext ? { api_secret_ciphertext: d.apiSecretCiphertext } : {}),
          starting_balance: normalizeStartingBalance(d.startingBalance),
          session_id: context.newId(),
          risk_profile: { ...DEFAULT_RISK_PROFILE },
          registered_at: now,
        },
      },
    ];
  }
  if (state.status === 'none') throw new DomainError('ACCOUNT_NOT_FOUND', 'account not found');
  const accountId = state.accountId;
  switch (command.type) {
    case 'SetAccountPassword':
      requireActive(state);
      return [
        {
          type: 'AccountPasswordSet',
          data: {
            account_id: accountId,
            password_hash: command.data.passwordHash,
            first_time: state.passwordHash === null,
            set_at: now,
          },
        },
      ];
    case 'UpdateAccountRiskProfile': {
      requireActive(state);
      const current = state.riskProfile ?? DEFAULT_RISK_PROFILE;
      const next = resolveRiskProfile(command.data.riskProfile, current);
      if (sameRiskProfile(current, next)) return [];
      return [
        {
          type: 'AccountRiskProfileUpdated',
          data: { account_id: accountId, risk_profile: next, updated_at: now },
        },
      ];
    }
    case 'SuspendAccount':
      if (state.status === 'suspended') return [];
      if (state.status === 'archived') {
        throw new DomainError('CONFLICT', 'account is archived; reactivate it before suspending it');
      }
      return [
        {
          type: 'AccountSuspended',
          data: { account_id: accountId, reason: command.data.reason, suspended_at: now },
        },
      ];
    case 'ReactivateAccount':
      if (state.status === 'active') return [];
      return [
        {
          type: 'AccountReactivated',
          data: { account_id: accountId, previous_status: state.status, reactivated_at: now },
        },
      ];
    case 'StoreAccountSigningSecret':
      if (state.signingSecretCiphertext) return [];
      return [
        {
          type: 'AccountSigningSecretStored',
          data: { account_id: accountId, api_secret_ciphertext: command.data.ciphertext, stored_at: now },
        },
      ];
    case 'ArchiveAccount':
      if (state.status === 'archived') return [];
      return [
        {
          type: 'AccountArchived',
          data: { account_id: accountId, reason: command.data.reason, archived_at: now },
        },
      ];
  }
};

const requireActive = (state: AccountState): void => {
  if (state.status !== 'active') {
    throw new DomainError('ACCOUNT_SUSPENDED', `account is ${state.status}`, { status: state.status });
  }
};

/** The account decider (`account-{account_id}` streams). */
export const accountDecider: Decider<AccountState, AccountCommand, AccountEvent, BaseContext> = {
  initialState: initialAccountState,
  evolve: evolveAccount,
  decide: decideAccount,
};
