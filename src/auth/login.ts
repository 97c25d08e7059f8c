import type { Kysely } from 'kysely';
import type { AccountCommands } from '../../commands/accounts';
import {
  API_SECRET_PREFIX,
  decoyHash,
  isWellFormedApiKey,
  sha256Hex,
  verifySecret,
} from '../../commands/credentials';
import type { KeyOnWriteSide } from '../../commands/key-index';
import { DomainError } from '../../domain/shared/errors';
import type { ReadModels } from '../../projections/read-models';
import { findApiKeyOwner } from '../../queries/api-keys';
import type { IssuedToken, TokenService } from './tokens';

/** What the login flows need. */
export interface LoginDeps {
  db: Kysely<ReadModels>;
  accounts: AccountCommands;
  tokens: TokenService;
  /** `AuthService.settleCredentials`: a key not found is looked up again once the credential read models caught up. */
  settleCredentials?: () => Promise<boolean>;
  /** `AuthService.keyOnWriteSide`: where a key the read model does not have yet is found first. */
  keyOnWriteSide?: (keyHash: string) => Promise<KeyOnWriteSide | undefined>;
}

/**
 * `POST /auth/login` (spec "Authentication endpoints"): the account key and secret for a 1-hour JWT. The key's
 * account comes from the `api_keys` read model, else from the write side (the key's `apikey-{hash}` stream and the
 * account's stream), so a login right after the registration answers works however far the read models lag. Order of
 * checks: unknown or malformed key, or an agent key → `INVALID_API_KEY` 401; key of a vanished account →
 * `ACCOUNT_NOT_FOUND` 404; wrong secret → `INVALID_TOKEN` 401; suspended or archived → `ACCOUNT_SUSPENDED` 403
 * (only after the secret matched, so the status is not revealed to someone without it).
 */
export const loginWithKey = async (
  deps: LoginDeps,
  input: { apiKey: string; apiSecret: string },
): Promise<IssuedToken & { accountId: string }> => {
  if (!isWellFormedApiKey(input.apiKey)) throw new DomainError('INVALID_API_KEY', 'API key is malformed');
  const hash = sha256Hex(input.apiKey);
  let owner = await findApiKeyOwner(deps.db, hash);
  if (!owner) {
    // Not in the read model yet (a registration it has not folded, however long it lags): the write side's key
    // index names the owner, whose own stream must still record this key (`KeyIndex.inForce`: an entry naming no
    // account, or an account whose key is another, is no key at all and says nothing of whether that account
    // exists). A key it does not know (an account's older than the index) is looked up once more after the
    // credential read models caught up.
    const written = await deps.keyOnWriteSide?.(hash);
    if (written) owner = { ownerType: written.holder.agentId ? 'agent' : 'account', ...written.holder };
    else if (await deps.settleCredentials?.()) owner = await findApiKeyOwner(deps.db, hash);
  }
  if (!owner) throw new DomainError('INVALID_API_KEY', 'API key not found');
  if (owner.agentId) {
    throw new DomainError('INVALID_API_KEY', 'agent keys cannot log in: use the account key and secret');
  }
  const account = await deps.accounts.load(owner.accountId);
  if (account.status === 'none') throw new DomainError('ACCOUNT_NOT_FOUND', 'no account for this key');
  const ok =
    input.apiSecret.startsWith(API_SECRET_PREFIX) &&
    (await verifySecret(input.apiSecret, account.apiSecretHash));
  if (!ok) throw new DomainError('INVALID_TOKEN', 'API secret does not match');
  if (account.status !== 'active') {
    throw new DomainError('ACCOUNT_SUSPENDED', `account is ${account.status}`, { status: account.status });
  }
  return {
    ...deps.tokens.issue(account.accountId, new Date(), account.credentialsVersion),
    accountId: account.accountId,
  };
};

/**
 * `POST /auth/user-login`: email and password for a JWT. Unknown email, no password set, or a wrong password →
 * `INVALID_TOKEN` 401 (one message for all, and the same scrypt cost, so addresses cannot be probed); suspended
 * or archived → `ACCOUNT_SUSPENDED` 403.
 */
export const loginWithPassword = async (
  deps: LoginDeps,
  input: { email: string; password: string },
): Promise<IssuedToken & { accountId: string }> => {
  const accountId = await deps.accounts.accountIdByEmail(input.email);
  const account = accountId ? await deps.accounts.load(accountId) : undefined;
  const stored = account?.status !== 'none' ? account?.passwordHash : undefined;
  const ok = await verifySecret(input.password, stored ?? (await decoyHash()));
  if (!ok || !stored || !account) throw new DomainError('INVALID_TOKEN', 'email or password is wrong');
  if (account.status !== 'active') {
    throw new DomainError('ACCOUNT_SUSPENDED', `account is ${account.status}`, { status: account.status });
  }
  return {
    ...deps.tokens.issue(account.accountId, new Date(), account.credentialsVersion),
    accountId: account.accountId,
  };
};
