import type { BaseContext, Decider, DomainEvent } from '../shared/decider';
import { DomainError } from '../shared/errors';

/**
 * Email uniqueness (spec `DUPLICATE_ACCOUNT` 409) under concurrent registration: one stream per address,
 * `email-{sha256(lower-cased email)}` (the address itself is not in the stream name). Registration first
 * reserves the address on that stream; two concurrent reservations race on the stream's expected revision, so
 * exactly one wins and the other, retried by the command handler, sees the holder and gets `DUPLICATE_ACCOUNT`.
 * If registering the account then fails, the command layer releases the reservation (compensation), after
 * which the address can be reserved again.
 */
export type EmailReservationEvent =
  | DomainEvent<'EmailReserved', { email_hash: string; account_id: string; reserved_at: string }>
  | DomainEvent<'EmailReleased', { email_hash: string; account_id: string; released_at: string }>;

/** Commands of the reservation stream. */
export type EmailReservationCommand =
  | { type: 'ReserveEmail'; data: { emailHash: string; accountId: string } }
  | { type: 'ReleaseEmail'; data: { emailHash: string; accountId: string } };

/** Who holds the address, if anyone. */
export interface EmailReservationState {
  holder: string | null;
}

/** Reserve: free → `EmailReserved`; held by another → `DUPLICATE_ACCOUNT`; by the same account → nothing. */
export const emailReservationDecider: Decider<
  EmailReservationState,
  EmailReservationCommand,
  EmailReservationEvent,
  BaseContext
> = {
  initialState: () => ({ holder: null }),
  evolve: (_state, event) => ({ holder: event.type === 'EmailReserved' ? event.data.account_id : null }),
  decide: (command, state, context) => {
    const at = context.now.toISOString();
    const { emailHash, accountId } = command.data;
    if (command.type === 'ReserveEmail') {
      if (state.holder === accountId) return [];
      if (state.holder !== null) {
        throw new DomainError('DUPLICATE_ACCOUNT', 'an account with this email is already registered');
      }
      return [
        { type: 'EmailReserved', data: { email_hash: emailHash, account_id: accountId, reserved_at: at } },
      ];
    }
    if (state.holder !== accountId) return [];
    return [
      { type: 'EmailReleased', data: { email_hash: emailHash, account_id: accountId, released_at: at } },
    ];
  },
};

/** Stream of the reservation of an address, given the SHA-256 (hex) of the lower-cased address. */
export const emailStreamId = (emailHash: string): string => `email-${emailHash}`;
