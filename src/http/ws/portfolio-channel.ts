import { isDomainError } from '../../../domain/shared/errors';
import { fmt } from '../../../domain/trading/decimal';
import { walletStreamId } from '../../../domain/wallet/events';
import { portfolio } from '../../application/account';
import { newCall } from '../../application/call';
import { liveMark, type PortfolioSnapshot } from '../../application/portfolio';
import { ownerIdOf, type Principal } from '../../auth/principal';
import { keepRunning, stopAll } from '../../core/running-set';
import type { Services } from '../../services';
import { errorData } from './error-data';
import type { WsChannel, WsChannelFactory, WsConnection } from './registry';
import { failSubscription } from './subscription-failure';

/** Least time between two snapshots sent to one subscriber, ms (changes in between coalesce into one). */
export const PORTFOLIO_MIN_INTERVAL_MS = 250;
/** Period of the price refresh: a snapshot is sent again when a held position's live price moved, ms. */
export const PORTFOLIO_PRICE_REFRESH_MS = 5_000;
/** Re-read period of the wallet's revision when this process folds no read models (nothing tells it), ms. */
const POLL_MS = 1_000;

/** Whether two snapshots hold the same figures (everything but the time they were built). */
const sameFigures = (a: PortfolioSnapshot, b: PortfolioSnapshot): boolean =>
  JSON.stringify({ ...a, timestamp: null }) === JSON.stringify({ ...b, timestamp: null });

/**
 * Sends one owner's portfolio snapshots to one socket: on request (the subscription, a wallet change, a price
 * move), at most once per {@link PORTFOLIO_MIN_INTERVAL_MS}; requests while one is built or too soon after the
 * last coalesce into a single later snapshot, built when it is sent, so the client always ends on the latest
 * state. A snapshot the socket could not take (its buffer full) is built and sent again later.
 */
class PortfolioFollower {
  private running = true;
  private building = false;
  private pending = false;
  private timer: NodeJS.Timeout | undefined;
  private sentAt = 0;
  /** The last snapshot sent: what price moves and the revision poll compare with. */
  private last: PortfolioSnapshot | undefined;
  /** Whether the snapshot being built is the subscription's first (the answer to the client's subscribe). */
  private first = true;

  constructor(
    private readonly services: Services,
    private readonly connection: WsConnection,
    private readonly principal: Principal,
    readonly stream: string,
    /** Ends the subscription (stops this follower, frees its slot): called when the first snapshot fails. */
    private readonly end: () => void,
  ) {}

  /** Asks for a snapshot: sent now, or as soon as the minimum interval since the last one has passed. */
  request(): void {
    if (!this.running) return;
    this.pending = true;
    this.schedule();
  }

  /**
   * True when a position of the last snapshot has a live price other than the one it was valued at (positions
   * are valued at live prices, so the snapshot is stale).
   */
  pricesMoved(): boolean {
    return (this.last?.positions ?? []).some((p) => {
      const mark = liveMark(this.services, p.symbol);
      return mark !== undefined && fmt(mark.price) !== p.current_price;
    });
  }

  /** Requests a snapshot when the wallet stream has events the last snapshot does not include (polling mode). */
  async checkRevision(): Promise<void> {
    if (!this.running || !this.last) return;
    if ((await this.services.eventStore.streamRevision(this.stream)) !== this.last.revision) this.request();
  }

  private schedule(): void {
    if (!this.running || !this.pending || this.building || this.timer) return;
    const wait = this.sentAt + PORTFOLIO_MIN_INTERVAL_MS - Date.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.schedule();
      }, wait);
      this.timer.unref();
      return;
    }
    this.pending = false;
    this.building = true;
    const first = this.first;
    this.first = false;
    // The same use case as `GET /account/portfolio`: the owner's own orders that answered before their fold
    // (READ_YOUR_WRITES=on-read) are waited for, and a wallet behind its owner's session (agent reset) is brought
    // into step under the socket's id, as a request would be under its request id.
    void portfolio(newCall(this.services, this.principal, this.connection.id))
      .then(
        (snapshot) => {
          if (!this.running) return;
          // A request that found nothing new (e.g. a fold the snapshot being built already included) sends
          // nothing: each snapshot replaces the last, so an identical one is only noise.
          if (this.last && sameFigures(this.last, snapshot)) return;
          this.sentAt = Date.now();
          if (this.connection.send('portfolio', 'portfolio', snapshot)) this.last = snapshot;
          else this.pending = true; // the client reads too slowly: send a fresh one later
        },
        (error: unknown) => {
          if (!this.running) return;
          this.sentAt = Date.now();
          if (first) {
            // e.g. the agent was deleted: the first snapshot answers the client's subscribe, so the subscription
            // failed after its acknowledgement and ends as a battle's does (slot freed, the error names the
            // subscribe; docs/market-data.md).
            failSubscription(this.connection, 'portfolio', error, this.end, this.services.logger);
          } else if (isDomainError(error)) {
            // A later snapshot answers no message of the client's: the error names the channel alone, and the
            // subscription stays (the next change may be sent again).
            this.connection.send('system', 'error', { ...errorData(error), channel: 'portfolio' });
          } else {
            this.services.logger.warn(
              { err: error, stream: this.stream },
              'portfolio channel snapshot failed',
            );
          }
        },
      )
      .finally(() => {
        this.building = false;
        this.schedule();
      });
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
  }
}

/**
 * The private `portfolio` channel of `/ws/v1` (ARCHITECTURE §13): the authenticated owner's portfolio snapshot,
 * `{channel: 'portfolio', type: 'portfolio', data}` with `data` exactly the body of `GET /account/portfolio`
 * (the same use case, `portfolio` of `src/application/account.ts`). Subscribe with `{action: 'subscribe', channel: 'portfolio'}`: a
 * snapshot at once, then again after every committed change of the owner's wallet (the projection runner's
 * `onFolded`, so the snapshot includes it; a 1 s revision poll when this process folds no read models) and every
 * {@link PORTFOLIO_PRICE_REFRESH_MS} while a held position's live price moves, at most one per
 * {@link PORTFOLIO_MIN_INTERVAL_MS}. The owner is the socket's credential: an agent key follows that agent's
 * wallet, an account key or a JWT the account's. Not lossless: each snapshot replaces the previous one. A first
 * snapshot that fails (the agent deleted: `ACCOUNT_NOT_FOUND`) ends the subscription with a `system` error naming
 * the subscribe ({@link failSubscription}); a later one that fails is told with the channel alone and it goes on.
 */
class PortfolioChannel implements WsChannel {
  readonly name = 'portfolio';
  readonly requiresAuth = true;
  private readonly followers = new Set<PortfolioFollower>();
  private readonly unfollow: (() => void) | undefined;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly services: Services) {
    if (services.projections.folding) {
      this.unfollow = services.projections.onFolded((change) => {
        if (change === 'swapped') {
          for (const f of this.followers) f.request();
          return;
        }
        const streams = new Set(change.map((e) => e.streamId));
        for (const f of this.followers) if (streams.has(f.stream)) f.request();
      });
    } else {
      const poll = setInterval(() => {
        for (const f of this.followers) {
          f.checkRevision().catch((error: unknown) =>
            services.logger.warn({ err: error, stream: f.stream }, 'portfolio channel poll failed'),
          );
        }
      }, POLL_MS);
      poll.unref();
      this.timers.push(poll);
    }
    const prices = setInterval(() => {
      for (const f of this.followers) if (f.pricesMoved()) f.request();
    }, PORTFOLIO_PRICE_REFRESH_MS);
    prices.unref();
    this.timers.push(prices);
  }

  subscription(_message: unknown, connection: WsConnection) {
    const principal = connection.principal!;
    const ownerId = ownerIdOf(principal);
    return {
      key: `portfolio:${ownerId}`,
      ack: { owner_id: ownerId },
      start: (ended: () => void) => {
        let stop = (): void => {};
        const stream = walletStreamId(ownerId);
        const follower = new PortfolioFollower(this.services, connection, principal, stream, () => {
          stop();
          ended();
        });
        stop = keepRunning(this.followers, follower);
        follower.request();
        return stop;
      },
    };
  }

  close(): void {
    this.unfollow?.();
    for (const t of this.timers) clearInterval(t);
    stopAll(this.followers);
  }
}

/** Registers the `portfolio` channel (needs the trading capability). */
export const portfolioChannels: WsChannelFactory[] = [
  {
    name: 'portfolio',
    create: (services) => (services.trading ? new PortfolioChannel(services) : undefined),
  },
];
