import type { CommandMeta } from '../../commands/metadata';
import type { OwnerRef } from '../../commands/wallet';
import { getWallet } from '../../queries/trading';
import type { TradingProfile } from '../../queries/trading-profile';
import type { Services } from '../services';
import { trading } from '../trading/install';

/**
 * Brings an owner's wallet into step with the owner's current session before anything reads it or answers for
 * it. An agent reset (`POST /agents/{id}/reset`) gives the agent a new session id; the wallet follows it on its
 * next command (cancels open orders, closes positions, restores the balance: `WalletReset`, reason
 * `owner_reset`). Calling this runs that command now and waits for the read models, so a reset agent shows no
 * open order and no lock at once. A wallet that was never opened, or already follows the session, is left alone.
 * Returns the owner's trading profile.
 */
export const syncWalletToOwner = async (
  services: Services,
  owner: OwnerRef,
  meta: CommandMeta,
): Promise<TradingProfile> => {
  const { wallets } = trading(services);
  const profile = await wallets.profile(owner);
  const wallet = await getWallet(services.database.db, profile.ownerId);
  if (wallet && wallet.wallet.owner_session_id !== profile.sessionId) {
    const synced = await wallets.sync(owner, meta);
    if (synced.position)
      await services.projections.waitFor(synced.position, services.config.READ_MODEL_WAIT_MS);
  }
  return profile;
};
