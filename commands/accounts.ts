import { randomUUID } from 'node:crypto';
import type { AccountCommand } from '../domain/account/commands';
import { accountDecider } from '../domain/account/decide';
import {
  type EmailReservationCommand,
  emailReservationDecider,
  emailStreamId,
} from '../domain/account/email-reservation';
import { accountStreamId } from '../domain/account/events';
import type { AccountState } from '../domain/account/state';
import { DomainError } from '../domain/shared/errors';
import type { RiskProfile } from '../domain/shared/risk-profile';
import type { EventStore, LogPosition } from '../ports/event-store';
import type { Keyring } from '../ports/keyring';
import {
  emailHash,
  generateApiKey,
  generateApiSecret,
  hashSecret,
  keyPreview,
  sha256Hex,
  signingSecretContext,
  verifySecret,
} from './credentials';
import type { CredentialsChangeListener } from './credentials-change';
import { createCommandHandler } from './handler';
import { createKeyIndex, type KeyIndex } from './key-index';
import { appendedPosition, handleLive } from './live';
import type { CommandMeta } from './metadata';

/** Password bounds (ARCHITECTURE §14b: 8–72 characters). */
export const PASSWORD_LENGTH = { min: 8, max: 72 } as const;

/** Input of {@link AccountCommands.register} (spec `POST /auth/register`, plus the design's `password`). */
export interface RegisterInput {
  displayName: string;
  email?: string | null;
  startingBalance?: string | number;
  password?: string | null;
}

/** Outcome of a registration: the only moment the plaintext key and secret exist outside the client. */
export interface Registration {
  accountId: string;
  apiKey: string;
  apiSecret: string;
  account: AccountState;
  position: LogPosition;
}

/** Outcome of a command on an existing account. */
export interface AccountCommandResult {
  account: AccountState;
  /** Position of the last new event; absent when nothing changed. */
  position?: LogPosition;
}

/** A status change an operator can make (ARCHITECTURE §14b, CLI `accounts …`). */
export type AccountStatusAction = 'suspend' | 'reactivate' | 'archive';

/** Account commands (the write side of accounts, ARCHITECTURE §4, §12). */
export interface AccountCommands {
  /**
   * Registers an account: key `ak_live_…` and secret `sk_live_…` from the CSPRNG, stored as SHA-256 and scrypt;
   * the optional password as scrypt. With an email, reserves it first (`DUPLICATE_ACCOUNT` when taken, also
   * under concurrent registration) and releases it if the account cannot be recorded.
   * Throws `VALIDATION_ERROR` (name, balance, password length, password without email), `DUPLICATE_ACCOUNT`.
   */
  register(input: RegisterInput, meta?: Omit<CommandMeta, 'actor'>): Promise<Registration>;
  /** The account's state from its stream (through the state cache); status `none` when unknown. */
  load(accountId: string): Promise<AccountState>;
  /**
   * Stores the account's verified API secret, encrypted, as its signing secret when it has none yet (an account
   * registered before signing secrets existed; called at key login). Nothing when one is stored or no keyring.
   */
  storeSigningSecret(accountId: string, apiSecret: string, meta: CommandMeta): Promise<AccountCommandResult>;
  /** The account's signing secret in plaintext (its API secret), or null when none is stored. */
  signingSecret(accountId: string): Promise<string | null>;
  /** The account holding `email` (from its reservation stream), or undefined. */
  accountIdByEmail(email: string): Promise<string | undefined>;
  /**
   * Sets or changes the password (`PUT /auth/password`). Changing an existing password needs the current one
   * (`VALIDATION_ERROR` when absent, `INVALID_TOKEN` when wrong). An account without email cannot use a
   * password (`VALIDATION_ERROR`).
   */
  setPassword(
    accountId: string,
    input: { password: string; currentPassword?: string | null },
    meta: CommandMeta,
  ): Promise<AccountCommandResult>;
  /** Replaces the account-level risk profile (bounds → `VALIDATION_ERROR`). */
  updateRiskProfile(
    accountId: string,
    riskProfile: Partial<RiskProfile>,
    meta: CommandMeta,
  ): Promise<AccountCommandResult>;
  /** Suspends, reactivates or archives (operator). `ACCOUNT_NOT_FOUND` for an unknown id. */
  changeStatus(
    accountId: string,
    action: AccountStatusAction,
    reason: string | null,
    meta: CommandMeta,
  ): Promise<AccountCommandResult>;
}

/** Builds the account commands over the event store. */
export const createAccountCommands = (deps: {
  store: EventStore;
  onCredentialsChanged?: CredentialsChangeListener;
  /**
   * Told the account id and log position of every change appended to an account's stream after its registration
   * (a risk profile, a status…), as soon as it is durable (`UnfoldedChanges`, as for agents).
   */
  onChanged?: (accountId: string, position: LogPosition) => void;
  /** Encrypts the API secret as the signing secret (without one, accounts get no signing secret). */
  keyring?: Keyring;
  /** The write side's key index registration records the key in (default: one over `store`). */
  keyIndex?: KeyIndex;
}): AccountCommands => {
  const accounts = createCommandHandler(deps.store, accountDecider);
  const emails = createCommandHandler(deps.store, emailReservationDecider);
  const keyIndex = deps.keyIndex ?? createKeyIndex(deps.store);

  const run = async (accountId: string, command: AccountCommand, meta: CommandMeta) => {
    const result = await handleLive(accounts, accountStreamId(accountId), command, meta);
    if (result.append) deps.onChanged?.(accountId, result.append.position);
    return { account: result.state, ...appendedPosition(result) };
  };

  const reservation = async (hash: string, command: EmailReservationCommand, meta: CommandMeta) => {
    await handleLive(emails, emailStreamId(hash), command, meta);
  };

  return {
    async register(input, meta = {}) {
      const accountId = randomUUID();
      const commandMeta: CommandMeta = { ...meta, actor: accountId };
      const email = input.email?.trim().toLowerCase() || null;
      if (input.password != null) {
        checkPassword(input.password);
        if (!email) {
          throw new DomainError('VALIDATION_ERROR', 'a password needs an email: /auth/user-login uses both', {
            field: 'password',
          });
        }
      }
      const apiKey = generateApiKey();
      const apiSecret = generateApiSecret();
      const [apiSecretHash, passwordHash] = await Promise.all([
        hashSecret(apiSecret),
        input.password != null ? hashSecret(input.password) : Promise.resolve(null),
      ]);
      const apiKeyHash = sha256Hex(apiKey);
      const emailKey = email ? emailHash(email) : undefined;
      if (emailKey) {
        await reservation(
          emailKey,
          { type: 'ReserveEmail', data: { emailHash: emailKey, accountId } },
          commandMeta,
        );
      }
      try {
        // The key's index entry first: once the registration answers, a login or a keyed request finds the account
        // on the write side (`KeyIndex.inForce`) even before the read models include it. Should the account not be
        // recorded, the entry names an account that does not exist, for a key nobody was given.
        await keyIndex.issue(apiKeyHash, { accountId, agentId: null }, commandMeta);
        const result = await handleLive(
          accounts,
          accountStreamId(accountId),
          {
            type: 'RegisterAccount',
            data: {
              accountId,
              displayName: input.displayName,
              email,
              apiKeyHash,
              apiKeyPreview: keyPreview(apiKey),
              apiSecretHash,
              ...(deps.keyring
                ? { apiSecretCiphertext: deps.keyring.encrypt(apiSecret, signingSecretContext(accountId)) }
                : {}),
              passwordHash,
              startingBalance: input.startingBalance,
            },
          },
          commandMeta,
          'no_stream',
        );
        return { accountId, apiKey, apiSecret, account: result.state, position: result.append!.position };
      } catch (error) {
        if (emailKey) {
          await reservation(
            emailKey,
            { type: 'ReleaseEmail', data: { emailHash: emailKey, accountId } },
            commandMeta,
          ).catch(() => {});
        }
        throw error;
      }
    },

    async load(accountId) {
      return (await accounts.load(accountStreamId(accountId))).state;
    },

    async storeSigningSecret(accountId, apiSecret, meta) {
      const current = await this.load(accountId);
      if (!deps.keyring || current.status === 'none' || current.signingSecretCiphertext)
        return { account: current };
      const ciphertext = deps.keyring.encrypt(apiSecret, signingSecretContext(accountId));
      return run(accountId, { type: 'StoreAccountSigningSecret', data: { ciphertext } }, meta);
    },

    async signingSecret(accountId) {
      const current = await this.load(accountId);
      if (!deps.keyring || !current.signingSecretCiphertext) return null;
      return deps.keyring.decrypt(current.signingSecretCiphertext, signingSecretContext(accountId));
    },

    async accountIdByEmail(email) {
      const { state } = await emails.load(emailStreamId(emailHash(email)));
      return state.holder ?? undefined;
    },

    async setPassword(accountId, input, meta) {
      checkPassword(input.password);
      const current = await this.load(accountId);
      if (current.status === 'none') throw new DomainError('ACCOUNT_NOT_FOUND', 'account not found');
      if (!current.email) {
        throw new DomainError(
          'VALIDATION_ERROR',
          'this account has no email, so a password cannot be used (/auth/user-login needs both)',
          { field: 'password' },
        );
      }
      if (current.passwordHash) {
        if (!input.currentPassword) {
          throw new DomainError('VALIDATION_ERROR', 'current_password is required to change the password', {
            field: 'current_password',
          });
        }
        if (!(await verifySecret(input.currentPassword, current.passwordHash))) {
          throw new DomainError('INVALID_TOKEN', 'current password is wrong');
        }
      }
      const passwordHash = await hashSecret(input.password);
      const result = await run(accountId, { type: 'SetAccountPassword', data: { passwordHash } }, meta);
      // Tokens issued before this change stop working in this process at once (the cached credentials version
      // is bypassed until the read models include the change); other processes within their cache lifetime.
      deps.onCredentialsChanged?.({ accountId, ...(result.position ? { position: result.position } : {}) });
      return result;
    },

    updateRiskProfile(accountId, riskProfile, meta) {
      return run(accountId, { type: 'UpdateAccountRiskProfile', data: { riskProfile } }, meta);
    },

    async changeStatus(accountId, action, reason, meta) {
      const command: AccountCommand =
        action === 'suspend'
          ? { type: 'SuspendAccount', data: { reason } }
          : action === 'archive'
            ? { type: 'ArchiveAccount', data: { reason } }
            : { type: 'ReactivateAccount', data: {} };
      const result = await run(accountId, command, meta);
      deps.onCredentialsChanged?.({ accountId, ...(result.position ? { position: result.position } : {}) });
      return result;
    },
  };
};

const checkPassword = (password: string): void => {
  const n = [...password].length;
  if (n < PASSWORD_LENGTH.min || n > PASSWORD_LENGTH.max) {
    throw new DomainError(
      'VALIDATION_ERROR',
      `password must be ${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters`,
      { field: 'password' },
    );
  }
};
