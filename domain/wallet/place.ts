import type { WalletCommand, WalletContext } from './commands';
import { walletDecider } from './decide';
import type { WalletEvent } from './events';
import { evolveWallet, type WalletState } from './state';

/**
 * Places an order and offers it the current price at once, as the live matching engine does with every new pending
 * order (`MatchingEngine`: the last tick, without volume): a limit order the price already reaches (marketable) and
 * a stop or take-profit already triggered fill now, at that price, as takers. A stale price (`QuotedPrice.stale`: a
 * silent live feed, a forward-filled candle) is not offered, as the engine does not offer it. Used where an order's
 * placement and that first offer are decided together: the backtest and battle sandboxes (`placeInSandbox`) and the
 * order preview. Returns the decider's events in order (a rejection alone when the risk chain refuses the order).
 */
export const placeAndOffer = (
  command: Extract<WalletCommand, { type: 'PlaceOrder' }>,
  state: WalletState,
  ctx: WalletContext,
): WalletEvent[] => {
  const events = walletDecider.decide(command, state, ctx);
  let after = state;
  for (const e of events) after = evolveWallet(after, e);
  // Every order the decision placed is offered, in placement order: both legs of an OCO, and the exits a bracket's
  // entry placed when it filled (those placed by an offer's fill are offered in turn).
  const out = [...events];
  for (let i = 0; i < out.length; i++) {
    const e = out[i]!;
    if (e.type !== 'OrderPlaced' || e.data.type === 'market') continue;
    const quoted = ctx.prices(e.data.symbol);
    if (!quoted || quoted.stale) continue;
    const offered = walletDecider.decide(
      {
        type: 'FillOrder',
        data: {
          orderId: e.data.order_id,
          price: quoted.price,
          time: quoted.timestamp,
          source: quoted.source,
        },
      },
      after,
      ctx,
    );
    for (const o of offered) after = evolveWallet(after, o);
    out.push(...offered);
  }
  return out;
};
