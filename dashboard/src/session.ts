import type { Token } from './api/contract';
import { createStore } from './store';

/**
 * Who is looking (docs/dashboard.md "Login"): the JWT from `POST /auth/login` and the wallet being viewed (the
 * account's own, or an agent's through `X-Agent-Id`). The token and the chosen agent live in sessionStorage (this
 * tab only, gone when it closes); the API secret is kept in memory only, to renew the token before it expires,
 * and is never stored.
 */
export interface Session {
  token: string;
  /** ISO time the token expires (one hour after login). */
  expiresAt: string;
  /** The agent whose wallet the pages show, or null for the account's own wallet. */
  agentId: string | null;
}

const KEY = 'ptv.session';

const load = (): Session | null => {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const s = JSON.parse(raw) as Session;
    return typeof s.token === 'string' && Date.parse(s.expiresAt) > Date.now() ? s : null;
  } catch {
    return null;
  }
};

/** The current session, or null when logged out. */
export const session = createStore<Session | null>(load());

/** Why the last session ended, shown on the login page (e.g. the token expired). */
export const loggedOutReason = createStore<string | null>(null);

session.subscribe((s) => {
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
});

let credentials: { apiKey: string; apiSecret: string } | null = null;
let renewTimer: ReturnType<typeof setTimeout> | undefined;

type Renew = (c: { apiKey: string; apiSecret: string }) => Promise<Token>;

/**
 * Renews the token a minute before it expires when the secret is at hand (a login in this page), else ends the
 * session when it expires (a session resumed after a reload).
 */
const armExpiry = (expiresAt: string, renew: Renew): void => {
  clearTimeout(renewTimer);
  const left = Date.parse(expiresAt) - Date.now();
  renewTimer = setTimeout(
    () => {
      const c = credentials;
      if (!c) {
        endSession('Your session expired (tokens last one hour): log in again.');
        return;
      }
      renew(c).then(
        (t) => startSession(t, null, renew),
        () => endSession('Your session expired and could not be renewed: log in again.'),
      );
    },
    Math.max(0, credentials ? left - 60_000 : left),
  );
};

/** Starts a session from a login answer; `login` (kept in memory only) lets it renew itself. */
export const startSession = (
  token: Token,
  login: { apiKey: string; apiSecret: string } | null,
  renew: Renew,
): void => {
  credentials = login ?? credentials;
  session.set((s) => ({ token: token.token, expiresAt: token.expires_at, agentId: s?.agentId ?? null }));
  loggedOutReason.set(null);
  armExpiry(token.expires_at, renew);
};

/** Arms the expiry of a session restored from sessionStorage (after a reload). */
export const resumeSession = (renew: Renew): void => {
  const s = session.get();
  if (s) armExpiry(s.expiresAt, renew);
};

/** Ends the session (logout, or a token the venue refused), forgetting the secret. */
export const endSession = (reason: string | null = null): void => {
  credentials = null;
  clearTimeout(renewTimer);
  loggedOutReason.set(reason);
  session.set(null);
};

/** Chooses the wallet the pages show: an agent's, or the account's own (null). */
export const selectAgent = (agentId: string | null): void => {
  session.set((s) => (s ? { ...s, agentId } : s));
};
