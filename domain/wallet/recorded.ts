import { type WalletEvent, walletOwnerOf } from './events';

/** The fields of an event read back from the log that name its stream and hold it (the port's `RecordedEvent`). */
interface LoggedEvent {
  readonly streamId: string;
  readonly type: string;
  readonly data: unknown;
}

/**
 * An event read back from the log, when it is of a wallet stream (`wallet-{owner}`): its owner id and the event as
 * a {@link WalletEvent}; undefined for an event of any other stream (another category, the deletions stream). The
 * data is not checked: a wallet stream holds only the events the wallet decider appended.
 */
export const walletEventOf = (e: LoggedEvent): { owner: string; event: WalletEvent } | undefined => {
  const owner = walletOwnerOf(e.streamId);
  return owner ? { owner, event: { type: e.type, data: e.data } as WalletEvent } : undefined;
};
