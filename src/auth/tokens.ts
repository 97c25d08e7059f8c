import { randomUUID } from 'node:crypto';
import { createSigner, createVerifier, TokenError } from 'fast-jwt';
import { DomainError } from '../../domain/shared/errors';
import { isUuid } from '../../domain/shared/uuid';

/** JWT lifetime (spec "Authentication" rule 1 and "Limits": 1 hour). */
export const TOKEN_TTL_SECONDS = 3600;

/** An issued token (spec `POST /auth/login` response). */
export interface IssuedToken {
  token: string;
  /** ISO 8601 UTC. */
  expiresAt: string;
  tokenType: 'Bearer';
}

/** The verified claims of a token. */
export interface TokenClaims {
  /** Account id. */
  accountId: string;
  /** Token id (`jti`). */
  tokenId: string;
  issuedAt: number;
  expiresAt: number;
  /** The account's credentials version at issue (claim `cv`; 0 when absent). */
  credentialsVersion: number;
}

/** Signs and verifies the service's JWTs. */
export interface TokenService {
  /**
   * A new HS256 token for the account: claims `sub`, `iat`, `exp` (= iat + 1 h), `jti`, and `cv`, the account's
   * credentials version (`AccountState.credentialsVersion`, default 0): a later credential change refuses it.
   */
  issue(accountId: string, now?: Date, credentialsVersion?: number): IssuedToken;
  /**
   * Verifies signature (HS256 only, never `none`), expiry and the presence of every claim; throws
   * `DomainError('INVALID_TOKEN')` saying whether it was expired, malformed or wrongly signed.
   */
  verify(token: string): TokenClaims;
}

/**
 * Token service over `fast-jwt` (the signer and verifier `@fastify/jwt` wraps; used directly because the
 * WebSocket endpoint and the rate limiter verify tokens outside a route). HS256 with the server's JWT secret
 * (ARCHITECTURE §12).
 */
export const createTokenService = (secret: Buffer): TokenService => {
  const signer = createSigner({ key: secret, algorithm: 'HS256', noTimestamp: false });
  const verifier = createVerifier({
    key: secret,
    algorithms: ['HS256'],
    requiredClaims: ['sub', 'iat', 'exp', 'jti'],
    cache: 1000,
  });
  return {
    issue(accountId, now = new Date(), credentialsVersion = 0) {
      const iat = Math.floor(now.getTime() / 1000);
      const exp = iat + TOKEN_TTL_SECONDS;
      const token = signer({ sub: accountId, iat, exp, jti: randomUUID(), cv: credentialsVersion });
      return { token, expiresAt: new Date(exp * 1000).toISOString(), tokenType: 'Bearer' };
    },
    verify(token) {
      let payload: Record<string, unknown>;
      try {
        payload = verifier(token) as Record<string, unknown>;
      } catch (error) {
        throw invalidToken(error);
      }
      const { sub, jti, iat, exp, cv } = payload;
      if (typeof sub !== 'string' || !isUuid(sub) || typeof jti !== 'string') {
        throw new DomainError('INVALID_TOKEN', 'token is malformed: bad claims', { reason: 'malformed' });
      }
      return {
        accountId: sub.toLowerCase(),
        tokenId: jti,
        issuedAt: Number(iat),
        expiresAt: Number(exp),
        credentialsVersion: Number.isSafeInteger(cv) ? Number(cv) : 0,
      };
    },
  };
};

const invalidToken = (error: unknown): DomainError => {
  const code = error instanceof TokenError ? error.code : undefined;
  switch (code) {
    case TokenError.codes.expired:
      return new DomainError('INVALID_TOKEN', 'token expired: log in again to get a new one', {
        reason: 'expired',
      });
    case TokenError.codes.invalidSignature:
    case TokenError.codes.invalidAlgorithm:
    case TokenError.codes.missingSignature:
      return new DomainError('INVALID_TOKEN', 'token signature is invalid', { reason: 'bad_signature' });
    default:
      return new DomainError('INVALID_TOKEN', 'token is malformed', { reason: 'malformed' });
  }
};
