import type { RegisterInput, Registration } from '../../commands/accounts';
import type { AccountState } from '../../domain/account/state';
import { identity } from '../auth/install';
import { loginWithKey, loginWithPassword } from '../auth/login';
import type { Principal } from '../auth/principal';
import type { IssuedToken } from '../auth/tokens';
import type { Call, PublicCall } from './call';
import { commandMeta } from './caller';
import { settled } from './read-your-writes';

/**
 * Authentication use cases (spec "Authentication endpoints"; ARCHITECTURE §12, §14b): registration, key login,
 * e-mail login and setting the password. Registration answers after the read models include the account, so its
 * key authenticates at once.
 */

/**
 * Registers an account: the only moment its API key and secret exist in plaintext outside the client. An e-mail
 * already registered is `DUPLICATE_ACCOUNT` 409; a password needs an e-mail (`VALIDATION_ERROR`).
 */
export const register = async (call: PublicCall, input: RegisterInput): Promise<Registration> => {
  return settled(call, identity(call.services).accounts.register(input, { requestId: call.requestId }));
};

/**
 * Exchanges the account's API key and secret for a 1-hour JWT. `INVALID_API_KEY` (unknown or an agent's key),
 * `INVALID_TOKEN` (wrong secret), `ACCOUNT_SUSPENDED`. An account registered before signing secrets existed gets
 * its verified secret stored (encrypted) as its signing secret here, once (docs/operations.md "Signing secrets").
 */
export const login = async (
  call: PublicCall,
  input: { apiKey: string; apiSecret: string },
): Promise<IssuedToken> => {
  const { accounts, auth } = identity(call.services);
  const issued = await loginWithKey(
    {
      db: call.services.database.db,
      accounts,
      tokens: auth.tokens,
      settleCredentials: auth.settleCredentials,
      keyOnWriteSide: auth.keyOnWriteSide,
    },
    input,
  );
  await accounts.storeSigningSecret(issued.accountId, input.apiSecret, {
    actor: issued.accountId,
    requestId: call.requestId,
  });
  return issued;
};

/** An API key's caller and the HMAC secret its signed requests are verified with. */
export interface SigningKey {
  principal: Principal;
  /** Null when the key has no signing secret yet (docs/operations.md "Signing secrets" says how to get one). */
  secret: string | null;
}

/**
 * Resolves an API key (account or agent key) for a signed request (the Binance door, HMAC-SHA256): its principal
 * and signing secret. Throws as {@link AuthService.resolveCredential} for a bad key (`INVALID_API_KEY`,
 * `ACCOUNT_SUSPENDED`).
 */
export const resolveSigningKey = async (call: PublicCall, apiKey: string): Promise<SigningKey> => {
  const { auth } = identity(call.services);
  const principal = await auth.resolveCredential({ apiKey });
  const secret = (await call.services.signingSecrets?.of(principal)) ?? null;
  return { principal, secret };
};

/** Exchanges e-mail and password for a 1-hour JWT; `INVALID_TOKEN` for either wrong (one message for both). */
export const loginWithEmail = (
  call: PublicCall,
  input: { email: string; password: string },
): Promise<IssuedToken> => {
  const { accounts, auth } = identity(call.services);
  return loginWithPassword({ db: call.services.database.db, accounts, tokens: auth.tokens }, input);
};

/** Sets or changes the account's password (the current one is needed to change it). */
export const setPassword = async (
  call: Call,
  input: { password: string; currentPassword: string | null },
): Promise<AccountState> => {
  const result = await settled(
    call,
    identity(call.services).accounts.setPassword(call.caller.accountId, input, commandMeta(call)),
  );
  return result.account;
};
