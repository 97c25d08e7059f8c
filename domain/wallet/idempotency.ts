import { DomainError } from '../shared/errors';

/**
 * How long an idempotency key is remembered (ARCHITECTURE §8: 24 h, as Stripe's and most order APIs' keys): a
 * retry within the window is answered with the first order; after it the key is free again.
 */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

/**
 * The order a wallet recorded under an idempotency key: its `OrderPlaced`/`OrderRejected` event, which carries the
 * key's hash. Claims are not part of the wallet's folded state (a bot sending a key with every order would keep
 * ~144,000 of them a day in every snapshot, issue 20): before deciding a keyed order the wallet commands look the
 * key up in the wallet's own stream (`EventStore.findByIdempotencyKey`, an index on PostgreSQL/PGlite) and hand
 * the newest claim to the decider in its context. Claiming a key and placing the order are still one append with
 * optimistic concurrency on the wallet stream, so exactly one append can ever claim a key, whichever process or
 * door sends the request (issue 16): an append that raced another claim of the key conflicts, and its retry looks
 * the key up again and finds the claim.
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
 * The claim an event records: an `OrderPlaced` or `OrderRejected` with an `idempotency_key` (data as stored), at
 * stream revision `revision`; undefined for any other event.
 */
export const claimOfEvent = (event: {
  type: string;
  data: unknown;
  revision: number;
}): IdempotencyClaim | undefined => {
  if (event.type !== 'OrderPlaced' && event.type !== 'OrderRejected') return undefined;
  const d = event.data as {
    order_id: string;
    idempotency_key?: string | null;
    request_hash?: string | null;
    placed_at?: string;
    rejected_at?: string;
  };
  if (!d.idempotency_key) return undefined;
  const at = event.type === 'OrderPlaced' ? d.placed_at : d.rejected_at;
  return {
    orderId: d.order_id,
    requestHash: d.request_hash ?? null,
    at: Date.parse(at ?? ''),
    revision: event.revision,
  };
};

/** `claim` when it still binds its key at `nowMs` (ms since epoch), else undefined (an expired claim frees it). */
export const liveClaim = (
  claim: IdempotencyClaim | undefined,
  nowMs: number,
): IdempotencyClaim | undefined => (claim && nowMs - claim.at < IDEMPOTENCY_WINDOW_MS ? claim : undefined);

/**
 * The decision for an order request carrying an idempotency key, given the key's newest claim in the log:
 * `undefined` when the key is free (place the order), the claim when it is the same request again (replay it).
 * Throws `CONFLICT` 409 when the key was used with another request body (`details.reason =
 * 'idempotency_key_reused'`).
 */
export const checkClaim = (
  claim: IdempotencyClaim | undefined,
  requestHash: string | null | undefined,
  nowMs: number,
): IdempotencyClaim | undefined => {
  const live = liveClaim(claim, nowMs);
  if (!live) return undefined;
  if ((live.requestHash ?? null) !== (requestHash ?? null)) {
    throw new DomainError('CONFLICT', 'this Idempotency-Key was already used with a different request body', {
      reason: 'idempotency_key_reused',
      order_id: live.orderId,
    });
  }
  return live;
};
