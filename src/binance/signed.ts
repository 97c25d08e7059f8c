import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../../domain/shared/errors';
import { resolveSigningKey } from '../application/auth';
import type { PublicCall } from '../application/call';
import type { Principal } from '../auth/principal';
import { BinanceError, CODES, fromDomainError } from './errors';
import { type BinanceParams, intParam, optional, required } from './params';

/** Binance's default and largest `recvWindow` (ms; Spot API "Timing security"). */
export const RECV_WINDOW = { default: 5_000, max: 60_000 } as const;

/** How far ahead of the server's clock a `timestamp` may be (ms; Binance allows 1 s). */
const AHEAD_MS = 1_000;

/** The signed text of a request: its query string followed by its body, each without the `signature` parameter. */
export const totalParams = (p: BinanceParams): string => {
  const strip = (text: string) =>
    text
      .split('&')
      .filter((part) => part !== '' && !part.startsWith('signature='))
      .join('&');
  return strip(p.rawQuery) + strip(p.rawBody);
};

/** HMAC-SHA256 of `text` under `secret`, lower-case hex (what Binance calls the request's `signature`). */
export const sign = (secret: string, text: string): string =>
  createHmac('sha256', secret).update(text, 'utf8').digest('hex');

const sameSignature = (expected: string, given: string): boolean => {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given.toLowerCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
};

/** The key's caller from its resolution, with Binance's errors (absent or malformed -2014, refused -2015). */
const resolveKey = async (call: PublicCall, apiKey: string | undefined) => {
  if (!apiKey) throw new BinanceError(CODES.BAD_API_KEY_FMT, 'API-key format invalid.', 401);
  try {
    return await resolveSigningKey(call, apiKey.trim());
  } catch (error) {
    if (error instanceof DomainError && error.code === 'INVALID_API_KEY' && /malformed/.test(error.message)) {
      throw new BinanceError(CODES.BAD_API_KEY_FMT, 'API-key format invalid.', 401);
    }
    throw error instanceof DomainError ? fromDomainError(error, 'read') : error;
  }
};

/**
 * Authenticates a `USER_STREAM` request (Binance: the API key alone, no signature): the key's caller, as
 * {@link authenticateSigned} resolves it.
 */
export const authenticateApiKey = async (call: PublicCall, apiKey: string | undefined): Promise<Principal> =>
  (await resolveKey(call, apiKey)).principal;

/**
 * Authenticates a `SIGNED` request as Binance does (Spot API "SIGNED endpoint security"): the key in `X-MBX-APIKEY`
 * (an account's or an agent's API key; absent or malformed → -2014, unknown, suspended or without a signing secret →
 * -2015, 401), `signature` = HMAC-SHA256 of the query string and body under the key's signing secret
 * (docs/operations.md "Signing secrets"; absent → -1102, wrong → -1022), `timestamp` in ms within `recvWindow`
 * (default 5,000, at most 60,000 → -1131) of the server's clock and at most 1 s ahead (→ -1021). Resolves to the
 * key's caller: an agent key trades the agent's wallet, an account key the account's.
 */
export const authenticateSigned = async (
  call: PublicCall,
  apiKey: string | undefined,
  p: BinanceParams,
  now: number = Date.now(),
): Promise<Principal> => {
  const resolved = await resolveKey(call, apiKey);
  if (!resolved.secret) {
    throw new BinanceError(
      CODES.REJECTED_MBX_KEY,
      resolved.principal.via === 'agent_key'
        ? 'Invalid API-key, IP, or permissions for action. This agent key has no signing secret yet: POST /api/v1/agents/{agent_id}/signing-secret issues one.'
        : 'Invalid API-key, IP, or permissions for action. This account has no signing secret yet: log in once with POST /api/v1/auth/login (api_key and api_secret) to store it.',
      401,
    );
  }
  const signature = required(p, 'signature');
  if (!sameSignature(sign(resolved.secret, totalParams(p)), signature)) {
    throw new BinanceError(CODES.INVALID_SIGNATURE, 'Signature for this request is not valid.');
  }
  const timestamp = intParam(p, 'timestamp', { min: 0, max: Number.MAX_SAFE_INTEGER }, undefined);
  if (timestamp === undefined)
    throw new BinanceError(
      CODES.MANDATORY_PARAM_EMPTY_OR_MALFORMED,
      "Mandatory parameter 'timestamp' was not sent, was empty/null, or malformed.",
    );
  const recvText = optional(p, 'recvWindow');
  const recvWindow = recvText === undefined ? RECV_WINDOW.default : Number(recvText);
  if (!Number.isFinite(recvWindow) || recvWindow <= 0 || recvWindow > RECV_WINDOW.max) {
    throw new BinanceError(CODES.RECV_WINDOW_TOO_LARGE, `recvWindow must be less than ${RECV_WINDOW.max}`);
  }
  if (timestamp >= now + AHEAD_MS) {
    throw new BinanceError(
      CODES.INVALID_TIMESTAMP,
      "Timestamp for this request was 1000ms ahead of the server's time.",
    );
  }
  if (now - timestamp > recvWindow) {
    throw new BinanceError(
      CODES.INVALID_TIMESTAMP,
      'Timestamp for this request is outside of the recvWindow.',
    );
  }
  return resolved.principal;
};
