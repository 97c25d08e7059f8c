import { decodeState, encodeState } from '../shared/state-codec';
import type { WalletState } from './state';

/**
 * The version of the wallet state's shape and meaning, for snapshots (docs/architecture.md, "Snapshots"). Bump it
 * on ANY change of {@link WalletState}, of `evolveWallet`, of the idempotency claims or of the wallet events:
 * snapshots of another version are then ignored and rebuilt from the log on the next load. A test
 * (`test/core/snapshots.unit.test.ts`) fingerprints the code of those modules and fails when it changes while this
 * number does not.
 */
export const WALLET_STATE_VERSION = 13;

/** The schema tag a wallet snapshot is stored under (`snapshots.schema`). */
export const WALLET_SNAPSHOT_SCHEMA = `wallet@${WALLET_STATE_VERSION}`;

/** The wallet state's snapshot codec: exact decimals, the claims' `OrderedMap` in order (`state-codec.ts`). */
export const walletSnapshotCodec = {
  schema: WALLET_SNAPSHOT_SCHEMA,
  encode: (state: WalletState): string => encodeState(state),
  decode: (text: string): WalletState => decodeState<WalletState>(text),
};
