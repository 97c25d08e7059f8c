import { walletDecider } from '../../domain/wallet/decide';
import type { WalletEvent } from '../../domain/wallet/events';

/**
 * The wallet decider that appends the events its command carries, in order: the benches and tests decide every order
 * beforehand with the real `walletDecider` (in-process, no per-order load) and append the result through the real
 * command handler with this. Its command is `{ events }`, the wallet events to append; everything else (initial
 * state, evolve) is the real decider's, so the stream's state and snapshots are the ones the venue would build.
 */
export const replayingWalletDecider = {
  ...walletDecider,
  decideWithState: undefined,
  decide: (command: { events: WalletEvent[] }) => command.events,
};
