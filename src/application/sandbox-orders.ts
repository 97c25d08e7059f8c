import { DomainError } from '../../domain/shared/errors';
import type { WalletEvent } from '../../domain/wallet/events';
import { placementOut } from '../trading/present';
import type { Call } from './call';

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

/**
 * A sandbox wallet (a backtest session's, a historical battle participant's) knows only its session's pairs, so
 * an order on a real pair outside them comes back from the wallet decider as "unknown symbol". The handler this
 * returns (for the placement's `.catch`) rethrows that error saying what is wrong instead: the same code
 * (`INVALID_SYMBOL`), status and details plus `details.reason` `not_in_session`, the message "SYMBOL is not a pair
 * of {where}" (`where` names the session and where its pairs are listed). Any other error, and the error of a pair
 * the venue does not know (`call.services.market`), is rethrown unchanged. The rejection is recorded by the
 * decider as before (docs/backtesting.md, "Orders and fills").
 */
export const outsideSandboxPairs =
  (call: Call, symbol: string, where: string) =>
  (error: unknown): never => {
    const listed = call.services.market?.pair(symbol) !== undefined;
    if (!listed || !(error instanceof DomainError) || error.code !== 'INVALID_SYMBOL') throw error;
    if (error.details?.['symbol'] !== symbol || !/unknown symbol/.test(error.message)) throw error;
    throw new DomainError(
      'INVALID_SYMBOL',
      error.message.replace(`unknown symbol ${symbol}`, `${symbol} is not a pair of ${where}`),
      { ...error.details, reason: 'not_in_session' },
      error.status,
    );
  };
