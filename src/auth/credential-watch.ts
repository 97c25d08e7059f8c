import { type DomainError, isDomainError } from '../../domain/shared/errors';
import type { Principal } from './principal';
import type { AuthService } from './service';

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
