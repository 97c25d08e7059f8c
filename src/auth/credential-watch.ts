import type { Logger } from 'pino';
import { type DomainError, isDomainError } from '../../domain/shared/errors';
import { isConnectionError } from '../db/connection-errors';
import type { Principal } from './principal';
import type { AuthService, WatchedCredential } from './service';

/**
 * The codes a credential that no longer resolves is refused with (`AuthService.resolveCredential`,
 * `scopeToAgent`): a replaced or deleted key, an expired or revoked token, a suspended or unknown account, an
 * agent no longer the account's. Any other failure of a check (the database briefly away) is not a revocation.
 */
const REVOKED_CODES: ReadonlySet<string> = new Set([
  'INVALID_API_KEY',
  'INVALID_TOKEN',
  'ACCOUNT_NOT_FOUND',
  'ACCOUNT_SUSPENDED',
  'PERMISSION_DENIED',
]);

/** A running {@link watchCredential}. */
export interface CredentialWatch {
  /** Resolves the credential again now (e.g. on a heartbeat: a change made by another process, an expired JWT). */
  check(): void;
  /** Stops watching (the connection closed). */
  stop(): void;
}

/**
 * Keeps a long-lived connection (a WebSocket of any door) tied to the credential it was opened with (spec
 * "Authentication" rule 6: "a regenerated key invalidates the previous one at once"): `resolve` — the door's own
 * resolution of that credential, agent scope included — runs again on every credential change of this process
 * that touches `principal`'s account or agent (`AuthService.onChange`) and whenever the door calls `check`; the
 * first time it is refused with a credential error (`INVALID_API_KEY`, `INVALID_TOKEN`, `ACCOUNT_NOT_FOUND`,
 * `ACCOUNT_SUSPENDED`, `PERMISSION_DENIED`), the watch stops and `onRevoked` gets that error, which the door sends
 * before it closes the connection. Other failures are ignored (the next check decides). At most one check runs at
 * a time; a change during it runs one more after it.
 */
export const watchCredential = (
  auth: Pick<AuthService, 'onChange'>,
  principal: Principal,
  resolve: () => Promise<Principal>,
  onRevoked: (error: DomainError) => void,
): CredentialWatch => {
  let stopped = false;
  let running = false;
  let again = false;
  const check = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    resolve().then(
      () => {
        running = false;
        if (again) {
          again = false;
          check();
        }
      },
      (e: unknown) => {
        running = false;
        if (stopped) return;
        if (isDomainError(e) && REVOKED_CODES.has(e.code)) {
          stop();
          onRevoked(e);
        } else if (again) {
          again = false;
          check();
        }
      },
    );
  };
  const unsubscribe = auth.onChange((change) => {
    const touches =
      change.accountId === principal.accountId ||
      (change.agentId !== undefined && change.agentId === principal.agentId);
    if (touches) check();
  });
  const stop = () => {
    stopped = true;
    unsubscribe();
  };
  return { check, stop };
};

/**
 * The credential watches of every long-lived connection of a process (`/ws/v1`, the Binance door's listen keys and
 * ws-api subscriptions), checked together once per `intervalMs` (`WS_HEARTBEAT_MS`): one
 * `AuthService.prefetch` of all their credentials (at most three statements, `= any($1)`, however many sockets are
 * open), then each watch's `check`, answered from the cache it filled. A connection's heartbeat thus no longer
 * sends a statement of its own (issue: thousands of sockets were thousands of statements per heartbeat); a change
 * made by another process still ends a connection within one interval, with the close its door gives today.
 */
export interface CredentialWatcher {
  /**
   * Watches one connection's credential as {@link watchCredential} does (changes of this process at once), and in
   * every round of the shared check; `onRevoked` as there. The returned watch's `stop` also leaves the round.
   */
  watch(
    credential: WatchedCredential,
    resolve: () => Promise<Principal>,
    onRevoked: (error: DomainError) => void,
  ): CredentialWatch;
  /**
   * One round now: the prefetch, then every watch's check (the timer runs it; tests call it). A prefetch that fails
   * is logged (warn, once per kind of failure until a prefetch succeeds again); when the database is away
   * (`isConnectionError`) the round checks nothing (the next one decides), after any other failure every watch is
   * checked on its own (its lookups go to the database one by one; a check that fails for another reason than a
   * refused credential closes nothing). Resolves once the checks started, or after one interval at most: a round
   * still waiting then (a stuck statement) no longer holds the next one, and checks nothing once another started.
   */
  checkAll(): Promise<void>;
  /**
   * Stops the watcher for good (the app closes): the timer is cleared, every watch is stopped and dropped (its
   * `onRevoked` is never called), and neither `checkAll` nor a later `watch` reads anything again, so no round
   * runs against a database closed after it.
   */
  close(): void;
  /** How many connections are watched. */
  readonly size: number;
}

/** Options of {@link createCredentialWatcher}. */
export interface CredentialWatcherOptions {
  /** Where a failed prefetch is reported (warn, once per kind of failure); absent: not reported. */
  logger?: Pick<Logger, 'warn'>;
}

/** What a failed prefetch is reported once for: a database outage, else the error's code or name. */
const failureKind = (error: unknown, outage: boolean): string => {
  if (outage) return 'outage';
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  return `${typeof code === 'string' ? code : ''}:${typeof name === 'string' ? name : typeof error}`;
};

/** Builds the process's {@link CredentialWatcher}; its timer runs only while something is watched (never holding the process). */
export const createCredentialWatcher = (
  auth: Pick<AuthService, 'onChange' | 'prefetch'>,
  intervalMs: number,
  options: CredentialWatcherOptions = {},
): CredentialWatcher => {
  const entries = new Set<{ credential: WatchedCredential; watch: CredentialWatch }>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let round: Promise<void> | undefined;
  /** Rounds started: a round still running once a later one started checks nothing. */
  let rounds = 0;
  let closed = false;
  /** Kinds of prefetch failure reported since the last prefetch that succeeded. */
  const reported = new Set<string>();
  const runRound = async (n: number): Promise<void> => {
    const watched = [...entries];
    if (watched.length === 0) return;
    try {
      await auth.prefetch(watched.map((e) => e.credential));
      reported.clear();
    } catch (error) {
      const outage = isConnectionError(error);
      const kind = failureKind(error, outage);
      if (!reported.has(kind)) {
        reported.add(kind);
        options.logger?.warn(
          { err: error, sockets: watched.length },
          outage
            ? 'credential check of open sockets: database unavailable, nothing checked until it answers'
            : 'credential check of open sockets: prefetch failed, each socket checked on its own',
        );
      }
      if (outage) return;
    }
    if (n !== rounds || closed) return;
    for (const e of watched) if (entries.has(e)) e.watch.check();
  };
  const checkAll = (): Promise<void> => {
    if (closed) return Promise.resolve();
    if (!round) {
      const n = ++rounds;
      let limit: ReturnType<typeof setTimeout> | undefined;
      round = Promise.race([
        runRound(n),
        new Promise<void>((resolve) => {
          limit = setTimeout(resolve, intervalMs);
          limit.unref?.();
        }),
      ]).finally(() => {
        clearTimeout(limit);
        round = undefined;
      });
    }
    return round;
  };
  return {
    watch(credential, resolve, onRevoked) {
      const entry = {
        credential,
        watch: watchCredential(auth, credential.principal, resolve, (e) => {
          leave();
          onRevoked(e);
        }),
      };
      const leave = () => {
        entries.delete(entry);
        if (entries.size === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      };
      if (closed) {
        entry.watch.stop();
        return { check: () => undefined, stop: () => undefined };
      }
      entries.add(entry);
      if (!timer) {
        timer = setInterval(() => void checkAll(), intervalMs);
        timer.unref();
      }
      return {
        check: entry.watch.check,
        stop: () => {
          entry.watch.stop();
          leave();
        },
      };
    },
    checkAll,
    close() {
      closed = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      for (const e of entries) e.watch.stop();
      entries.clear();
    },
    get size() {
      return entries.size;
    },
  };
};
