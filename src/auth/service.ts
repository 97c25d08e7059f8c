import type { IncomingHttpHeaders } from 'node:http';
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import { isWellFormedApiKey, sha256Hex } from '../../commands/credentials';
import type { CredentialsChange } from '../../commands/credentials-change';
import type { KeyOnWriteSide } from '../../commands/key-index';
import type { ApiKeyHolder } from '../../domain/account/key-index';
import type { AccountStatus } from '../../domain/account/state';
import type { AgentStatus } from '../../domain/agent/state';
import { DomainError } from '../../domain/shared/errors';
import { isUuid } from '../../domain/shared/uuid';
import { isAfter, type LogPosition, START } from '../../ports/event-store';
import type { ReadModels } from '../../projections/read-models';
import { getAccountAuthState, getAccountsAuthState } from '../../queries/accounts';
import { getAgentOwnership, getAgentsOwnership } from '../../queries/agents';
import { type ApiKeyAuth, type ApiKeyOwner, findApiKeyAuth, findApiKeysAuth } from '../../queries/api-keys';
import { rateLimitKeyOf } from '../application/rate-limits';
import type { AuthMode, Principal } from './principal';
import type { TokenService } from './tokens';

/**
 * What carries a request's credentials: its headers (`X-API-Key`, `Authorization`, `X-Agent-Id`). A fastify request,
 * a raw `http.IncomingMessage` (the MCP door) or any object with headers; resolved once per object.
 */
export interface CredentialCarrier {
  readonly headers: IncomingHttpHeaders;
}

/** A credential given to {@link AuthService.resolveCredential}: an API key, a JWT, or either as a string. */
export type Credential = string | { apiKey?: string | undefined; token?: string | undefined };

/**
 * The API key `resolveCredential` checks for `credential` (alone, or beside a token: both are checked), or undefined
 * when it is a JWT alone (a string is a key when it starts with `ak_live_`).
 */
export const apiKeyOfCredential = (credential: Credential): string | undefined =>
  splitCredential(credential).apiKey;

/** `credential` as a key and a token: a string is a key when it starts with `ak_live_`, else a JWT. */
const splitCredential = (
  credential: Credential,
): { apiKey?: string | undefined; token?: string | undefined } =>
  typeof credential === 'string'
    ? credential.startsWith('ak_live_')
      ? { apiKey: credential }
      : { token: credential }
    : credential;

/** The request's `X-API-Key` (the first when repeated), trimmed; undefined without one. */
export const apiKeyHeader = (request: CredentialCarrier): string | undefined => {
  const key = request.headers['x-api-key'];
  return (Array.isArray(key) ? key[0] : key)?.trim();
};

/** Who is calling (ARCHITECTURE §12): resolves API keys and JWTs to a {@link Principal}. */
export interface AuthService {
  readonly tokens: TokenService;
  /**
   * Resolves a credential (for the WebSocket `?api_key=` / `?token=` and the HTTP hook). A string starting
   * with `ak_live_` is taken as an API key, anything else as a JWT. A key and a token given together are both
   * checked: the token's refusal first, then the key's, then `PERMISSION_DENIED` when
   * they are of two accounts; an agent key then gives its agent's principal (spec "Authentication" rule 4), an
   * account key the token's. Throws `DomainError`: `INVALID_API_KEY` (missing, malformed, unknown, replaced or
   * deleted key), `INVALID_TOKEN` (expired, malformed, wrongly signed), `ACCOUNT_NOT_FOUND` (token of an unknown
   * account), `ACCOUNT_SUSPENDED` (account suspended or archived), `PERMISSION_DENIED` (key and token of two
   * accounts). An archived agent's key resolves, with `agentStatus: 'archived'` (reads work; trading must refuse it).
   */
  resolveCredential(credential: Credential): Promise<Principal>;
  /**
   * Waits for the credential read models as {@link AuthServiceOptions.settleCredentials} does (resolves false at
   * once without it): what a lookup that found no key does before its answer is final (`POST /auth/login` too).
   */
  settleCredentials(): Promise<boolean>;
  /**
   * The key (given as its SHA-256, hex) as the write side has it, as {@link AuthServiceOptions.keyOnWriteSide}
   * (undefined without it): how a key the `api_keys` read model does not have yet is found (`POST /auth/login` too).
   */
  keyOnWriteSide(keyHash: string): Promise<KeyOnWriteSide | undefined>;
  /**
   * Scopes an account's principal to one of its agents (spec "Authentication" rule 5: `X-Agent-Id` over HTTP,
   * `?agent_id=` on the WebSocket handshake); no agent id returns `principal` as is. Throws `VALIDATION_ERROR`
   * (not a UUID; `details.field` = `field`) or `PERMISSION_DENIED` (not an agent of the account, or another
   * agent than an agent key's own).
   */
  scopeToAgent(principal: Principal, agentId: string | undefined, field?: string): Promise<Principal>;
  /**
   * Authenticates a request for a route's mode (spec "Authentication" rules 2–5):
   * - `jwt` needs `Authorization: Bearer` (an API key alone gives `INVALID_TOKEN`, rule 3); the token alone
   *   decides: an `X-API-Key` beside it is no credential there, neither used nor checked, and `X-Agent-Id` is not
   *   applied (the account's principal).
   * - `key-or-jwt` takes `X-API-Key` or the bearer token (neither → `INVALID_API_KEY`); a request with both is
   *   authenticated by both, as {@link resolveCredential} resolves a key and a token (each refused as it would be
   *   alone, `PERMISSION_DENIED` when of two accounts, an agent key scoping to its agent, an account key changing
   *   nothing); then `X-Agent-Id` applies (`VALIDATION_ERROR` when not a UUID, `PERMISSION_DENIED` when not an agent
   *   of the account, or not the agent of an agent key).
   * A request with one credential costs what it did before the two-credential rule: one resolution.
   */
  authenticate(request: CredentialCarrier, mode: Exclude<AuthMode, 'public'>): Promise<Principal>;
  /**
   * The rate-limit identity of a request (spec "Limits"; issues 16 and 17): `owner:<id>` of the wallet owner it acts
   * for — the agent of an agent key (alone or beside a token) or of `X-Agent-Id`, else the account — the same
   * whichever credential (JWT, account key, agent key, key and token) or door; `cred:<hash prefix>` for a suspended
   * account's key; `undefined` otherwise (the client IP counts). `mode` is the route's (default `key-or-jwt`): on a
   * `jwt` route a key beside a token does not count, as {@link authenticate} does not use it there.
   */
  rateLimitIdentity(request: CredentialCarrier, mode?: AuthMode): Promise<string | undefined>;
  /**
   * Reads what resolving each of `credentials` again needs from the read models — the keys' rows (with their account
   * and agent), the accounts of the others (JWTs) and the agents a principal is scoped to — in at most three
   * statements (`= any($1)`), whatever their number, and caches it as the single lookups would: a
   * `resolveCredential` / `scopeToAgent` of them right after is answered from the cache. Entries a change of this
   * process bypasses, or touched while the statements ran (what they read may predate it), are left alone; a key no longer found is dropped from the cache (its next resolution looks it
   * up and refuses it). What the shared heartbeat check of every open socket does first (`createCredentialWatcher`).
   * Rejects when a statement fails (nothing is cached then).
   */
  prefetch(credentials: readonly WatchedCredential[]): Promise<void>;
  /** Applies a {@link CredentialsChange}: drops cached lookups and refuses revoked key hashes at once. */
  invalidate(change: CredentialsChange): void;
  /**
   * Calls `listener` with every {@link CredentialsChange} this process applies: at once (a revoked key is already
   * refused then), and for a change with a log position once more when the read models include it (a deleted
   * agent or a suspended account is refused from then on). What a long-lived connection (a WebSocket) watches to
   * end when its credential stops working (`watchCredential`). Returns the function that stops the calls.
   */
  onChange(listener: (change: CredentialsChange) => void): () => void;
}

/**
 * A credential a long-lived connection was opened with, as {@link AuthService.prefetch} reads it again: the API key
 * when it was one (else the principal's account is a JWT's), and the principal it resolved to (its agent, when
 * scoped to one).
 */
export interface WatchedCredential {
  apiKey?: string | undefined;
  principal: Principal;
}

/** Options of {@link createAuthService}. */
export interface AuthServiceOptions {
  db: Kysely<ReadModels>;
  tokens: TokenService;
  /** Waits until read models include a position (ends the cache bypass after a change). */
  waitForReadModels: (position: LogPosition) => Promise<boolean>;
  /**
   * Waits (bounded) until the credential read models (`api_keys`, `accounts`, `agents`) include every event
   * appended before the call; true when they do. A key not found is looked up once more after it: a key whose
   * registration answered before its read models caught up (an overloaded venue past `READ_MODEL_WAIT_MS`) is
   * then found instead of refused. Absent: a miss is final at once.
   */
  settleCredentials?: () => Promise<boolean>;
  /**
   * A key in force on the write side (`KeyIndex.inForce`, `commands/key-index.ts`: the key's `apikey-{hash}`
   * stream names its account or agent, whose own stream still records it as its key), with the account's and
   * agent's standing from their streams; undefined otherwise. A key the `api_keys` read model does not have is
   * looked up here before any wait, so an account's or agent's key works from the moment the command that issued it
   * answers, however far the read models lag; a key it replaced or of a deleted agent is not in force here either.
   * Absent: such a key waits for the read models ({@link settleCredentials}). An answer found is remembered for
   * up to a second (dropped at once by `invalidate` of its account, agent or key, and not served once another
   * process appended since: {@link heardHead}), and a key it answered for is not
   * held by the read-model wait again while they lag.
   */
  keyOnWriteSide?: (keyHash: string) => Promise<KeyOnWriteSide | undefined>;
  /**
   * An agent's account and status from its own stream (`KeyIndex.agent`), or undefined when it has none: what an
   * agent is checked against while this process knows the `agents` read model to be older than a change it made
   * (an archive, a reset: until the read models include it), so an agent archived a moment ago is `archived` at
   * once however far they lag (spec "Authentication" rule 6); and where `X-Agent-Id` (or a socket's `agent_id`)
   * names an agent the read model does not have yet (created a moment ago), so the account's JWT acts for it at
   * once. Absent: the read model's row, as for any agent.
   */
  agentOnWriteSide?: (agentId: string) => Promise<{ accountId: string; status: AgentStatus } | undefined>;
  /**
   * An account's status and credentials version from the write side (its own stream), or undefined when it has
   * none: what a token's account is checked against when the `accounts` read model does not have it yet (a token
   * from a login right after the registration, while the read models lag). Absent: such a token is
   * `ACCOUNT_NOT_FOUND` until the read model catches up.
   */
  accountOnWriteSide?: (
    accountId: string,
  ) => Promise<{ status: AccountStatus; credentialsVersion: number } | undefined>;
  /**
   * Whether this process knows the credential read models to be behind the log's head (`ProjectionRunner.lagging`:
   * another process announced an append they have not folded); false or absent: they are taken as current. While
   * it is true, a key the read models (or their cache) find is confirmed on the write side ({@link keyHeldOnWriteSide})
   * before it is accepted (spec "Authentication" rule 6: a key another process regenerated or deleted stops working
   * at once here too, not once the read models fold the change). Called on every key resolution: must answer the
   * normal case synchronously and without a statement.
   */
  readModelsBehind?: () => boolean | Promise<boolean>;
  /**
   * A key as the write side has it for the holder the read model names (`KeyIndex.heldBy`): the holder's own stream
   * records this key as its current one; undefined otherwise (replaced, or of a deleted agent). Remembered as
   * {@link keyOnWriteSide}'s answers are (found answers, up to a second, until {@link heardHead} moves). Absent: no confirmation under lag.
   */
  keyHeldOnWriteSide?: (keyHash: string, holder: ApiKeyHolder) => Promise<KeyOnWriteSide | undefined>;
  /**
   * The highest log position other processes announced to this one (`EventStore.heardHead`;
   * no statement). A write-side answer remembered ({@link keyOnWriteSide}, {@link keyHeldOnWriteSide},
   * {@link agentOnWriteSide}) is not served once this has moved past its value when the answer was read: another
   * process appended since, maybe the change that ends the key (spec "Authentication" rule 6: a key regenerated
   * there is refused here at once, not a second later). Absent: answers are served for their whole lifetime.
   */
  heardHead?: () => LogPosition;
  /**
   * Lifetime of cached lookups (ms, default 2,000): how long a change made by another process (operator CLI,
   * another API process) can take to reach this one. Changes made in this process apply at once.
   */
  cacheTtlMs?: number;
}

const REVOKED_CAPACITY = 100_000;

/**
 * Lifetime (ms) of a write-side answer (a key in force, an agent's standing from its stream): how long a change made
 * by another process can take to reach this one through it, shorter than the read models' cache. Changes made in
 * this process drop it at once (`invalidate`).
 */
const WRITTEN_TTL_MS = 1_000;

/** How long (ms) a key the write side answered for is not waited on the read models for again. */
const ANSWERED_TTL_MS = 10 * 60_000;

/** A remembered write-side answer and the owners whose change drops it. */
interface WrittenEntry {
  value: unknown;
  accountId: string;
  agentId?: string | null | undefined;
  keyHash?: string;
  /** `heardHead()` before the answer was read: the entry is stale once another process appended past it. */
  heard: LogPosition;
}

/** Most keys one refresh of the cache reads (one statement); the others expire and are looked up again. */
const REFRESH_MAX_KEYS = 5_000;

type Resolution = { principal: Principal } | { error: DomainError };

/** The credentials a request carries ({@link requestCredentials}). */
interface RequestCredentials {
  bearer?: string;
  bearerError?: DomainError;
  apiKey?: string;
}

/**
 * What is remembered of one request (the rate limiter and the auth hook both ask): its credentials, their
 * resolution, and on a `jwt` route with a key beside the token the token's alone.
 */
interface RequestAuth {
  creds: RequestCredentials;
  resolution?: Promise<Resolution>;
  tokenOnly?: Promise<Resolution>;
}

/**
 * Builds the auth service over the `api_keys`, `accounts` and `agents` read models, with a short-lived cache of
 * hot lookups. Invalidation is synchronous in this process: a regenerated or deleted agent's old key hash goes
 * into a revoked set at once, and lookups of changed owners bypass the cache until the read models include the
 * change; other processes rely on the read model (and the cache TTL).
 *
 * The API keys in use are kept fresh in bulk (issue 23: 64 agents cost 32 lookups a second, a quarter of the
 * statements per order at 100 orders/s): once a key served from the cache is past three quarters of its lifetime,
 * every key served since the last refresh is read again in one statement and its entries (key, account, agent)
 * start a new lifetime; a key no longer found is dropped, so its next use is looked up (and refused) as an unknown
 * key. An entry is thus never older than its lifetime, as before, and a busy venue sends about one statement per
 * three quarters of a lifetime instead of one per key and lifetime. What a refresh read for an owner a change of this
 * process (`invalidate`) touched meanwhile is discarded; the rest of the batch is kept.
 */
export const createAuthService = (options: AuthServiceOptions): AuthService => {
  const { db, tokens } = options;
  const ttl = options.cacheTtlMs ?? 2_000;
  // A lifetime of 0 turns the cache off (tests that watch every lookup reach the read models).
  const cache = ttl > 0 ? new LRUCache<string, { value: unknown }>({ max: 50_000, ttl }) : undefined;
  const revoked = new LRUCache<string, true>({ max: REVOKED_CAPACITY });
  const bypass = new Map<string, number>();
  const memo = new WeakMap<CredentialCarrier, RequestAuth>();
  /** Changes seen by `invalidate` (and the ends of their bypasses): a write-side answer read across one is not kept. */
  let changes = 0;
  const changeListeners = new Set<(change: CredentialsChange) => void>();
  const announce = (change: CredentialsChange) => {
    for (const listener of changeListeners) listener(change);
  };
  /** Key hashes served since the last refresh, and whether one is in flight. */
  const used = new Set<string>();
  let refreshing = false;
  // Write-side answers (three event-store reads for a key), remembered briefly: under read-model lag every request
  // of a new key or agent asks for them. Only answers found are kept (a key issued by another process a moment ago
  // is looked up again at once).
  const writtenTtl = Math.min(ttl, WRITTEN_TTL_MS);
  const written =
    writtenTtl > 0 ? new LRUCache<string, WrittenEntry>({ max: 10_000, ttl: writtenTtl }) : undefined;
  /** Keys the write side answered for: the read models are not waited on for them again (they lag). */
  const answered = new LRUCache<string, true>({ max: 50_000, ttl: ANSWERED_TTL_MS });
  /** `load`'s answer, remembered under `key` unless a change came while it was read (it may predate the change). */
  const heardHead = options.heardHead ?? (() => START);
  const rememberWritten = async <V>(
    key: string,
    load: () => Promise<V | undefined>,
    owners: (value: V) => Omit<WrittenEntry, 'value' | 'heard'>,
  ): Promise<V | undefined> => {
    const hit = written?.get(key);
    if (hit && !isAfter(heardHead(), hit.heard)) return hit.value as V;
    const since = changes;
    const heard = heardHead();
    const value = await load();
    if (value !== undefined && changes === since) written?.set(key, { value, ...owners(value), heard });
    return value;
  };
  const agentWritten = (agentId: string) =>
    options.agentOnWriteSide
      ? rememberWritten(
          `agent:${agentId}`,
          () => options.agentOnWriteSide!(agentId),
          (agent) => ({ accountId: agent.accountId, agentId }),
        )
      : Promise.resolve(undefined);

  /** The cached entry of `key`, unless a change bypasses it. */
  const hitOf = (key: string): { value: unknown } | undefined =>
    bypass.has(key) ? undefined : cache?.get(key);
  const cached = async <V>(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> => {
    const hit = hitOf(key);
    if (hit !== undefined) return hit.value as V;
    const value = await load();
    if (value !== undefined && !bypass.has(key)) cache?.set(key, { value });
    return value;
  };

  const accountState = (accountId: string) =>
    cached<{ status: AccountStatus; credentialsVersion: number }>(`acct:${accountId}`, () =>
      getAccountAuthState(db, accountId),
    );
  const agentOwnership = (agentId: string) =>
    // A change of this agent made here and not yet folded (its entry bypassed): the row is older than the stream.
    bypass.has(`agent:${agentId}`) && options.agentOnWriteSide
      ? agentWritten(agentId)
      : cached<{ accountId: string; status: AgentStatus }>(`agent:${agentId}`, () =>
          getAgentOwnership(db, agentId),
        );
  /** Caches a lookup made along with another (unless a change bypasses its key); a missing row is not cached. */
  const prime = (key: string, value: unknown): void => {
    if (value != null && !bypass.has(key)) cache?.set(key, { value });
  };
  /** Caches the account and agent rows that came with a key, as their own lookups would. */
  const primeOwners = (found: ApiKeyAuth): void => {
    prime(`acct:${found.owner.accountId}`, found.account);
    if (found.owner.agentId) prime(`agent:${found.owner.agentId}`, found.agent);
  };
  /** Caches what authenticating a key needs under its three keys, as their own lookups would. */
  const primeKey = (hash: string, found: ApiKeyAuth): void => {
    prime(`key:${hash}`, found.owner);
    primeOwners(found);
  };
  // A key's account and agent rows come with it in one statement and are cached as their own lookups would be
  // (primeOwners; the key's own entry is `cached`'s): they expire together, so a credential costs one statement
  // per cache lifetime, not three.
  const keyOwner = async (hash: string): Promise<ApiKeyOwner | undefined> => {
    const owner = await cached<ApiKeyOwner>(`key:${hash}`, async () => {
      const found = await findApiKeyAuth(db, hash);
      if (found) primeOwners(found);
      return found?.owner;
    });
    if (owner) keepFresh(hash);
    return owner;
  };
  /** Notes a key in use; past 3/4 of its lifetime, refreshes every key in use (see the function's comment). */
  const keepFresh = (hash: string): void => {
    if (!cache || bypass.has(`key:${hash}`)) return;
    used.add(hash);
    if (!refreshing && cache.getRemainingTTL(`key:${hash}`) < ttl / 4) {
      refreshing = true;
      void refresh().finally(() => {
        refreshing = false;
      });
    }
  };
  const refresh = async (): Promise<void> => {
    const hashes = [...used].slice(0, REFRESH_MAX_KEYS);
    used.clear();
    // A failed refresh changes nothing: the entries expire and are looked up one by one, as without it.
    const { value: found, changed } = await whileChanged(() =>
      findApiKeysAuth(db, hashes).catch(() => undefined),
    );
    if (found) primeKeys(hashes, found, changed);
  };
  /**
   * The cache keys (`key:…`, `acct:…`, `agent:…`) a change of this process (`invalidate`, or the end of its bypass)
   * touched while a batch read was in flight, one set per read: what that read gave for them may predate the change.
   */
  const inFlight = new Set<Set<string>>();
  /** `read`'s answer, with the cache keys changes touched while it was read. */
  const whileChanged = async <T>(
    read: () => Promise<T>,
  ): Promise<{ value: T; changed: ReadonlySet<string> }> => {
    const changed = new Set<string>();
    inFlight.add(changed);
    try {
      return { value: await read(), changed };
    } finally {
      inFlight.delete(changed);
    }
  };
  /**
   * Caches the keys of one batch read (`findApiKeysAuth`) as their own lookups would, and drops those no longer
   * found; a key whose entry, account or agent a change touched during the read (`changed`), or whose entry a
   * change bypasses, is left alone.
   */
  const primeKeys = (
    hashes: Iterable<string>,
    found: ReadonlyMap<string, ApiKeyAuth>,
    changed: ReadonlySet<string>,
  ): void => {
    for (const hash of hashes) {
      if (bypass.has(`key:${hash}`) || changed.has(`key:${hash}`)) continue;
      const auth = found.get(hash);
      if (!auth) cache?.delete(`key:${hash}`);
      else if (
        !changed.has(`acct:${auth.owner.accountId}`) &&
        !(auth.owner.agentId && changed.has(`agent:${auth.owner.agentId}`))
      ) {
        primeKey(hash, auth);
      }
    }
  };

  const requireActiveAccount = async (
    accountId: string,
    token?: { credentialsVersion: number },
  ): Promise<void> => {
    // A token names its account by id: one the read model has not folded yet is checked on the write side.
    const state =
      (await accountState(accountId)) ?? (token ? await options.accountOnWriteSide?.(accountId) : undefined);
    if (!state) throw new DomainError('ACCOUNT_NOT_FOUND', 'no account for these credentials');
    requireActive(state, token);
  };

  /** Refuses a token older than the account's credentials, and an account that is not active. */
  const requireActive = (
    state: { status: AccountStatus; credentialsVersion: number },
    token?: { credentialsVersion: number },
  ): void => {
    // A token issued before the account's credentials changed (a password set or changed) no longer works.
    if (token && token.credentialsVersion < state.credentialsVersion) {
      throw new DomainError(
        'INVALID_TOKEN',
        "token was issued before the account's credentials changed: log in again",
        { reason: 'credentials_changed' },
      );
    }
    if (state.status !== 'active') {
      throw new DomainError('ACCOUNT_SUSPENDED', `account is ${state.status}`, { status: state.status });
    }
  };

  /** The principal of a key of `owner`: an agent key's with its `agent`'s status, else the account's. */
  const keyPrincipal = (owner: ApiKeyOwner, agent?: { status: AgentStatus }): Principal =>
    owner.agentId && agent
      ? { accountId: owner.accountId, agentId: owner.agentId, via: 'agent_key', agentStatus: agent.status }
      : { accountId: owner.accountId, via: 'account_key' };

  /**
   * The principal of a key whose key, account and agent entries are all cached and that passes every check of
   * {@link resolveKey}; undefined otherwise (the caller then takes the full path, which also gives the refusals).
   * The usual request decides here without the three lookups' promises (~2.6 kB allocated per request, issue 23).
   */
  const cachedKeyPrincipal = (hash: string): Principal | undefined => {
    const owner = hitOf(`key:${hash}`)?.value as ApiKeyOwner | undefined;
    if (!owner) return undefined;
    const account = hitOf(`acct:${owner.accountId}`)?.value as { status: AccountStatus } | undefined;
    if (account?.status !== 'active') return undefined;
    const agent = owner.agentId
      ? (hitOf(`agent:${owner.agentId}`)?.value as { accountId: string; status: AgentStatus } | undefined)
      : undefined;
    if (owner.agentId && agent?.accountId !== owner.accountId) return undefined;
    keepFresh(hash);
    return keyPrincipal(owner, agent);
  };

  const keyOnWriteSide = async (keyHash: string) =>
    options.keyOnWriteSide
      ? rememberWritten(
          `key:${keyHash}`,
          () => options.keyOnWriteSide!(keyHash),
          (found) => ({ accountId: found.holder.accountId, agentId: found.holder.agentId, keyHash }),
        )
      : undefined;

  /** The principal of a key found on the write side; its account must be active, as a read-model key's. */
  const writtenKeyPrincipal = ({ holder, account, agent }: KeyOnWriteSide): Principal => {
    requireActive(account);
    return keyPrincipal({ ownerType: holder.agentId ? 'agent' : 'account', ...holder }, agent);
  };

  /**
   * A key the read models (or their cache) gave `principal` for, while this process knows them to be behind the
   * log's head (`readModelsBehind`): accepted only when its holder's stream still records it (another process may
   * have regenerated it or deleted its agent since the last fold), with the standing from the streams.
   */
  const confirmOnWriteSide = async (hash: string, principal: Principal): Promise<Principal> => {
    const holder = { accountId: principal.accountId, agentId: principal.agentId ?? null };
    const found = await rememberWritten(
      `key:${hash}`,
      () => options.keyHeldOnWriteSide!(hash, holder),
      () => ({ ...holder, keyHash: hash }),
    );
    if (!found) {
      // The cached entry is older than the stream: once the read models are current again it is not served.
      cache?.delete(`key:${hash}`);
      throw new DomainError('INVALID_API_KEY', 'API key is not valid');
    }
    return writtenKeyPrincipal(found);
  };

  /** `principal` as is while the read models are current (the normal case: no promise, no statement), else confirmed. */
  const confirmedUnderLag = (hash: string, principal: Principal): Principal | Promise<Principal> => {
    if (!options.keyHeldOnWriteSide) return principal;
    const behind = options.readModelsBehind?.() ?? false;
    if (behind === false) return principal;
    if (behind === true) return confirmOnWriteSide(hash, principal);
    return behind.then((lagging) => (lagging ? confirmOnWriteSide(hash, principal) : principal));
  };

  const resolveKey = async (apiKey: string): Promise<Principal> => {
    if (!isWellFormedApiKey(apiKey)) throw new DomainError('INVALID_API_KEY', 'API key is malformed');
    const hash = sha256Hex(apiKey);
    if (revoked.has(hash)) throw new DomainError('INVALID_API_KEY', 'API key is not valid');
    const known = cachedKeyPrincipal(hash);
    if (known) return confirmedUnderLag(hash, known);
    return confirmedUnderLag(hash, await resolveKeyFromReadModels(hash));
  };

  /** The key's principal from the read models (after the cache missed), or the write side's where they lack it. */
  const resolveKeyFromReadModels = async (hash: string): Promise<Principal> => {
    let owner = await keyOwner(hash);
    if (!owner) {
      // Not in the read model (yet). The credential read models are waited for (bounded) as before, so that a key
      // whose command answered a moment ago finds its owner's rows there too and the request reads them; past the
      // bound, a key the write side has in force (issued since the last fold, however far that lags) is taken on
      // its word instead of refused. A key neither knows is unknown. Once the write side has answered for a key,
      // its later requests are not held by that wait again (each would pay the whole bound while the lag lasts).
      if (answered.has(hash)) {
        const found = await keyOnWriteSide(hash);
        if (found) return writtenKeyPrincipal(found);
        answered.delete(hash);
      }
      const [found, settled] = await Promise.all([keyOnWriteSide(hash), settleCredentials()]);
      if (settled) owner = await keyOwner(hash);
      if (!owner && found) {
        answered.set(hash, true);
        return writtenKeyPrincipal(found);
      }
    }
    if (!owner) throw new DomainError('INVALID_API_KEY', 'API key is not valid');
    await requireActiveAccount(owner.accountId);
    if (!owner.agentId) return keyPrincipal(owner);
    const agent = await agentOwnership(owner.agentId);
    if (!agent || agent.accountId !== owner.accountId) {
      throw new DomainError('INVALID_API_KEY', 'API key is not valid');
    }
    return keyPrincipal(owner, agent);
  };

  const resolveToken = async (token: string): Promise<Principal> => {
    const claims = tokens.verify(token);
    await requireActiveAccount(claims.accountId, claims);
    return { accountId: claims.accountId, via: 'jwt', tokenId: claims.tokenId };
  };

  /**
   * A key and a token sent together (spec "Authentication" rules 2, 4, 5): each must be valid as it would be alone
   * (both are resolved at once; the token's refusal is given first, then the key's), and both must be of one
   * account (`PERMISSION_DENIED` otherwise). An agent key gives its agent's principal — the agent scope of the key
   * alone, `X-Agent-Id` naming another agent refused as with it — and an account key the token's, as if it were
   * not there.
   */
  const resolveKeyAndToken = async (apiKey: string, token: string): Promise<Principal> => {
    const [byToken, byKey] = await Promise.allSettled([resolveToken(token), resolveKey(apiKey)]);
    if (byToken.status === 'rejected') throw byToken.reason;
    if (byKey.status === 'rejected') throw byKey.reason;
    if (byKey.value.accountId !== byToken.value.accountId) {
      throw new DomainError(
        'PERMISSION_DENIED',
        'the API key and the bearer token belong to different accounts: send one credential, or both of one account',
      );
    }
    return byKey.value.via === 'agent_key' ? byKey.value : byToken.value;
  };

  const resolveCredential = (credential: Credential): Promise<Principal> => {
    const { apiKey, token } = splitCredential(credential);
    if (token) return apiKey ? resolveKeyAndToken(apiKey, token) : resolveToken(token);
    if (apiKey) return resolveKey(apiKey);
    return Promise.reject(
      new DomainError('INVALID_API_KEY', 'missing credentials: send X-API-Key or a bearer token'),
    );
  };

  /** The credentials `creds` resolved, a credential's refusal as the resolution's error. */
  const resolveCreds = (creds: RequestCredentials): Promise<Resolution> =>
    (creds.bearerError
      ? Promise.reject(creds.bearerError)
      : resolveCredential({ token: creds.bearer, apiKey: creds.apiKey })
    ).then(
      (principal): Resolution => ({ principal }),
      (error: unknown): Resolution => {
        if (error instanceof DomainError) return { error };
        throw error;
      },
    );

  /** What is remembered of `request` (its credentials read once). */
  const requestAuth = (request: CredentialCarrier): RequestAuth => {
    let entry = memo.get(request);
    if (!entry) {
      entry = { creds: requestCredentials(request) };
      memo.set(request, entry);
    }
    return entry;
  };

  /**
   * The request's credentials resolved once for a route of `mode` (the rate limiter and the auth hook both ask). On
   * a `jwt` route a key beside a token is no credential (spec "Authentication" rule 3): the token is resolved alone.
   */
  const resolveRequest = (request: CredentialCarrier, mode: AuthMode | undefined): Promise<Resolution> => {
    const entry = requestAuth(request);
    const { creds } = entry;
    if (mode === 'jwt' && creds.apiKey !== undefined && (creds.bearer || creds.bearerError)) {
      entry.tokenOnly ??= resolveCreds({ ...creds, apiKey: undefined });
      return entry.tokenOnly;
    }
    entry.resolution ??= resolveCreds(creds);
    return entry.resolution;
  };

  const scopeToAgent = async (
    principal: Principal,
    agentIdText: string | undefined,
    field = 'X-Agent-Id',
  ): Promise<Principal> => {
    if (agentIdText === undefined || agentIdText === '') return principal;
    if (!isUuid(agentIdText)) {
      throw new DomainError('VALIDATION_ERROR', `${field} must be an agent id (UUID)`, { field });
    }
    const agentId = agentIdText.toLowerCase();
    if (principal.via === 'agent_key') {
      if (agentId !== principal.agentId) {
        throw new DomainError('PERMISSION_DENIED', 'an agent key can only act for its own agent');
      }
      return principal;
    }
    // An agent the `agents` read model has not folded yet (created a moment ago, while the read models lag) is
    // looked up in its own stream, as its key is: the account's JWT acts for it from the moment its creation answers.
    const agent = (await agentOwnership(agentId)) ?? (await agentWritten(agentId));
    if (!agent || agent.accountId !== principal.accountId) {
      throw new DomainError('PERMISSION_DENIED', `${field} names no agent of this account`);
    }
    return { ...principal, agentId, agentStatus: agent.status };
  };

  const settleCredentials = async () => (options.settleCredentials ? options.settleCredentials() : false);

  return {
    tokens,
    resolveCredential,
    settleCredentials,
    keyOnWriteSide,
    scopeToAgent,

    async authenticate(request, mode) {
      const { creds } = requestAuth(request);
      if (mode === 'jwt' && !creds.bearer && !creds.bearerError) {
        throw new DomainError(
          'INVALID_TOKEN',
          creds.apiKey
            ? 'this endpoint needs a bearer token (JWT); API keys are not accepted here: POST /auth/login first'
            : 'missing bearer token: send Authorization: Bearer <token> (POST /auth/login)',
        );
      }
      if (mode === 'key-or-jwt' && !creds.bearer && !creds.bearerError && !creds.apiKey) {
        throw new DomainError(
          'INVALID_API_KEY',
          'missing credentials: send X-API-Key or Authorization: Bearer',
        );
      }
      const resolution = await resolveRequest(request, mode);
      if ('error' in resolution) throw resolution.error;
      if (mode !== 'key-or-jwt') return resolution.principal;
      const raw = request.headers['x-agent-id'];
      return scopeToAgent(resolution.principal, Array.isArray(raw) ? raw[0] : raw);
    },

    async rateLimitIdentity(request, mode) {
      const resolution = await resolveRequest(request, mode);
      if ('error' in resolution) {
        // A suspended account's credential is still a verified credential: count it as such.
        if (resolution.error.code !== 'ACCOUNT_SUSPENDED') return undefined;
        const { creds } = requestAuth(request);
        return !creds.bearer && creds.apiKey ? `cred:${sha256Hex(creds.apiKey).slice(0, 32)}` : undefined;
      }
      // The wallet owner the request acts for: an agent (its key, or `X-Agent-Id`) or the account, whichever
      // credential it comes with; a header that names no agent of the account counts against the account.
      const raw = request.headers['x-agent-id'];
      const scoped = await scopeToAgent(resolution.principal, Array.isArray(raw) ? raw[0] : raw).catch(
        () => resolution.principal,
      );
      return rateLimitKeyOf(scoped, '');
    },

    async prefetch(credentials) {
      if (!cache) return;
      const hashes = new Set<string>();
      const accountIds = new Set<string>();
      const agentIds = new Set<string>();
      for (const { apiKey, principal } of credentials) {
        if (apiKey !== undefined) {
          if (isWellFormedApiKey(apiKey)) hashes.add(sha256Hex(apiKey));
        } else accountIds.add(principal.accountId);
        if (principal.agentId && principal.via !== 'agent_key') agentIds.add(principal.agentId);
      }
      const {
        value: [keys, accountRows, agentRows],
        changed,
      } = await whileChanged(() =>
        Promise.all([
          findApiKeysAuth(db, [...hashes]),
          getAccountsAuthState(db, [...accountIds]),
          getAgentsOwnership(db, [...agentIds]),
        ]),
      );
      // What was read for an owner a change of this process touched meanwhile may predate the change: left alone.
      primeKeys(hashes, keys, changed);
      const primeRows = (prefix: string, ids: Set<string>, rows: ReadonlyMap<string, unknown>) => {
        for (const id of ids) {
          const key = `${prefix}:${id}`;
          if (changed.has(key)) continue;
          const row = rows.get(id);
          if (row) prime(key, row);
          else if (!bypass.has(key)) cache.delete(key);
        }
      };
      primeRows('acct', accountIds, accountRows);
      primeRows('agent', agentIds, agentRows);
    },

    invalidate(change) {
      changes++;
      const keys: string[] = [];
      if (change.accountId) keys.push(`acct:${change.accountId}`);
      if (change.agentId) keys.push(`agent:${change.agentId}`);
      for (const hash of change.revokedKeyHashes ?? []) {
        if (!hash) continue;
        revoked.set(hash, true);
        keys.push(`key:${hash}`);
      }
      for (const key of keys) cache?.delete(key);
      for (const read of inFlight) for (const key of keys) read.add(key);
      const revokedHashes = new Set(change.revokedKeyHashes ?? []);
      for (const [key, entry] of written?.entries() ?? []) {
        if (
          (change.accountId && entry.accountId === change.accountId) ||
          (change.agentId && entry.agentId === change.agentId) ||
          (entry.keyHash && revokedHashes.has(entry.keyHash))
        ) {
          written?.delete(key);
        }
      }
      announce(change);
      if (!change.position) return;
      for (const key of keys) bypass.set(key, (bypass.get(key) ?? 0) + 1);
      void options
        .waitForReadModels(change.position)
        .catch(() => false)
        .then(() => {
          changes++;
          for (const read of inFlight) for (const key of keys) read.add(key);
          for (const key of keys) {
            const n = (bypass.get(key) ?? 1) - 1;
            if (n <= 0) bypass.delete(key);
            else bypass.set(key, n);
            cache?.delete(key);
          }
          announce(change);
        });
    },

    onChange(listener) {
      changeListeners.add(listener);
      return () => changeListeners.delete(listener);
    },
  };
};

/** The credentials a request carries. A non-Bearer `Authorization` header is an `INVALID_TOKEN`. */
const requestCredentials = (request: CredentialCarrier): RequestCredentials => {
  const out: RequestCredentials = {};
  const apiKey = apiKeyHeader(request);
  if (apiKey) out.apiKey = apiKey;
  const auth = request.headers.authorization;
  if (auth) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) out.bearer = match[1]!;
    else out.bearerError = new DomainError('INVALID_TOKEN', 'Authorization must be "Bearer <token>"');
  }
  return out;
};
