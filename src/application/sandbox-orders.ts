import { DomainError } from '../../domain/shared/errors';
import type { WalletEvent } from '../../domain/wallet/events';
import { placementOut } from '../trading/present';

/** A sandbox order's answer: the same body as a live `POST /trade/order` (filled at once, or pending). */
export type SandboxPlacement = NonNullable<ReturnType<typeof placementOut>>;

/**
 * The answer to an order in a sandbox wallet (a backtest session or a historical battle participant): the live
 * placement body built from the wallet events the order appended. `what` names the order in the error raised when
 * the events hold neither a placement nor a rejection (a rejection is thrown by the command before this).
 */
export const sandboxPlacement = (events: readonly { type: string; data: unknown }[], what: string) => {
  const wallet = events as WalletEvent[];
  const placed = wallet.find((e) => e.type === 'OrderPlaced');
  const body = placed ? placementOut(wallet, placed.data.order_id) : undefined;
  if (!body) throw new DomainError('INTERNAL_ERROR', `${what} was neither placed nor rejected`);
  return body;
};
