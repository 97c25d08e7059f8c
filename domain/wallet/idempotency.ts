import { OrderedMap } from 'immutable';
import { DomainError } from '../shared/errors';

/**
 * How long an idempotency key is remembered (ARCHITECTURE §8: 24 h, as Stripe's and most order APIs' keys): a
 * retry within the window is answered with the first order; after it the key is free again.
 */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

/**
 * The order a wallet recorded under an idempotency key. The claim is part of the wallet's own state, folded from
 * its `OrderPlaced`/`OrderRejected` events (which carry the key's hash), so claiming a key and placing the order
 * are one append: with optimistic concurrency on the wallet stream exactly one append can ever claim a key,
 * whichever process or door sends the request (issue 16: idempotency in the write, not in a process's memory).
 */
export interface IdempotencyClaim {
  /** The order recorded under the key (placed or rejected). */
  orderId: string;
  /** SHA-256 of the canonical request the key was first used with (another body under the key is a conflict). */
  requestHash: string | null;
  /** Business time of the order (ms since epoch); the claim expires {@link IDEMPOTENCY_WINDOW_MS} later. */
  at: number;
  /** Stream revision of the `OrderPlaced`/`OrderRejected` event: where a replay reads the first answer. */
  revision: number;
}

/**
 * The live claims of a wallet by key hash, oldest first. A persistent map (Immutable.js `OrderedMap`): folding a
 * claim shares the rest of the map instead of copying it, so a bot that sends a key with every order (100 per
 * minute, 144,000 claims a day) pays O(log n) per order, and expired claims are dropped from the old end.
 */
export type IdempotencyClaims = OrderedMap<string, IdempotencyClaim>;

/** No claims. */
export const noClaims = (): IdempotencyClaims => OrderedMap<string, IdempotencyClaim>();

/** `claims` with `key` claimed, after dropping the claims expired at the new claim's time. */
export const addClaim = (
  claims: IdempotencyClaims,
  key: string,
  claim: IdempotencyClaim,
): IdempotencyClaims => {
  let out = claims;
  for (;;) {
    const oldest = out.first();
    if (!oldest || claim.at - oldest.at < IDEMPOTENCY_WINDOW_MS) break;
    out = out.rest();
  }
  return out.set(key, claim);
};

/** The live claim of `key` at `nowMs`, if any (an expired claim no longer binds the key). */
export const liveClaim = (
  claims: IdempotencyClaims,
  key: string,
  nowMs: number,
): IdempotencyClaim | undefined => {
  const claim = claims.get(key);
  return claim && nowMs - claim.at < IDEMPOTENCY_WINDOW_MS ? claim : undefined;
};

/**
 * The decision for an order request carrying an idempotency key: `undefined` when the key is free (place the
 * order), the earlier claim when it is the same request again (replay it). Throws `CONFLICT` 409 when the key was
 * used with another request body (`details.reason = 'idempotency_key_reused'`).
 */
export const checkClaim = (
  claims: IdempotencyClaims,
  key: string,
  requestHash: string | null | undefined,
  nowMs: number,
): IdempotencyClaim | undefined => {
  const claim = liveClaim(claims, key, nowMs);
  if (!claim) return undefined;
  if ((claim.requestHash ?? null) !== (requestHash ?? null)) {
    throw new DomainError('CONFLICT', 'this Idempotency-Key was already used with a different request body', {
      reason: 'idempotency_key_reused',
      order_id: claim.orderId,
    });
  }
  return claim;
};
