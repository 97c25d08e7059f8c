import type { FastifyRequest } from 'fastify';
import { type AccountCommands, createAccountCommands } from '../../commands/accounts';
import { type AgentCommands, createAgentCommands } from '../../commands/agents';
import type { CredentialsChangeListener } from '../../commands/credentials-change';
import { createKeyIndex } from '../../commands/key-index';
import { type LogPosition, START } from '../../ports/event-store';
import type { Keyring } from '../../ports/keyring';
import { UnfoldedChanges } from '../application/unfolded-changes';
import { exclusively } from '../db/exclusive';
import type { Services } from '../services';
import { type CredentialWatcher, createCredentialWatcher } from './credential-watch';
import { createKeyring } from './keyring';
import type { AuthMode } from './principal';
import type { ServerKeys } from './server-keys';
import { type AuthService, createAuthService } from './service';
import { createSigningSecrets, type SigningSecrets } from './signing-secrets';
import { createTokenService } from './tokens';

declare module '../services' {
  interface Services {
    /**
     * Maps a request's credential to a stable rate-limit identity (spec "Limits"): the wallet owner it acts for
     * (`AuthService.rateLimitIdentity`); `undefined` counts the client IP. `mode` is what the call accepts (the
     * REST route's `config.auth`, an MCP tool's); absent, taken as `key-or-jwt`.
     */
    rateLimitIdentity?: (
      request: FastifyRequest,
      mode?: AuthMode,
    ) => Promise<string | undefined> | string | undefined;
    /** Who is calling: API keys and JWTs to a principal (`resolveCredential` also serves the WebSocket). */
    auth?: AuthService;
    /** Account commands: registration, password, risk profile, status. */
    accounts?: AccountCommands;
    /** Agent commands: the agent lifecycle and its keys. */
    agents?: AgentCommands;
    /** The HMAC signing secrets of API keys (signed requests: the Binance door). */
    signingSecrets?: SigningSecrets;
    /** AES-256-GCM under the server key (`ENCRYPTION_KEY`): agent keys, webhook secrets. */
    keyring?: Keyring;
    /**
     * Account and agent changes of this process the `accounts`/`agents` read models may not include yet: an
     * order reads its owner's standing from the owner's stream while they do not (`installTrading`).
     */
    ownerChanges?: UnfoldedChanges;
    /**
     * The credential watches of the process's long-lived connections (every socket door), checked together once
     * per `WS_HEARTBEAT_MS` in a few statements (`createCredentialWatcher`).
     */
    credentialWatcher?: CredentialWatcher;
  }
}

/** How long the auth cache bypass after a change waits for the read models at most (ms). */
const INVALIDATION_WAIT_MS = 30_000;

/** The identity capability's members of {@link Services}. */
export interface IdentityServices {
  auth: AuthService;
  accounts: AccountCommands;
  agents: AgentCommands;
}

/** The read models a credential is resolved from. */
const CREDENTIAL_MODELS = ['api_keys', 'accounts', 'agents'] as const;

/**
 * Wires accounts, agents and authentication into the runtime's services (ARCHITECTURE §12): the token service
 * and keyring over the server keys, the auth service (also the rate limiter's identity: the account for a JWT,
 * the key for an API key), and the account and agent commands, whose credential changes invalidate the auth
 * cache synchronously.
 */
export const installIdentity = (services: Services, keys: ServerKeys): IdentityServices => {
  const { database, eventStore, projections, config } = services;
  const tokens = createTokenService(keys.jwtSecret);
  // One index of account and agent keys on the write side: the commands record keys in it, authentication reads it.
  const keyIndex = createKeyIndex(eventStore);
  const keyring = createKeyring(keys.encryptionKey);
  // Hear other processes' appends from the start (`readModelsBehind`), also in a process that subscribes to nothing.
  eventStore.heardHead?.();
  const auth = createAuthService({
    db: database.db,
    tokens,
    waitForReadModels: (position) => projections.waitFor(position, INVALIDATION_WAIT_MS),
    settleCredentials: async () =>
      projections.waitFor(await eventStore.headPosition(), config.READ_MODEL_WAIT_MS, CREDENTIAL_MODELS),
    keyOnWriteSide: (keyHash) => keyIndex.inForce(keyHash),
    // Another process's regeneration or deletion of a key counts at once here too, however far the read models lag.
    readModelsBehind: () => projections.lagging(CREDENTIAL_MODELS),
    keyHeldOnWriteSide: (keyHash, holder) => keyIndex.heldBy(keyHash, holder),
    heardHead: () => eventStore.heardHead?.() ?? START,
    agentOnWriteSide: (agentId) => keyIndex.agent(agentId),
    // `accounts` is built below, before any request can reach this.
    accountOnWriteSide: async (accountId) => {
      const account = await accounts.load(accountId);
      return account.status === 'none'
        ? undefined
        : { status: account.status, credentialsVersion: account.credentialsVersion };
    },
  });
  // Filled below: the secrets are read through the commands, which report changes through this listener.
  let signingSecrets: SigningSecrets | undefined;
  const onCredentialsChanged: CredentialsChangeListener = (change) => {
    auth.invalidate(change);
    if (change.agentId) signingSecrets?.forget(change.agentId);
    if (change.accountId) signingSecrets?.forget(change.accountId);
  };
  const ownerChanges = new UnfoldedChanges(projections);
  const onChanged = (id: string, position: LogPosition) => ownerChanges.record(id, position);
  const accounts = createAccountCommands({
    store: eventStore,
    onCredentialsChanged,
    onChanged,
    keyring,
    keyIndex,
  });
  const agents = createAgentCommands({
    store: eventStore,
    db: database.db,
    keyring,
    keyIndex,
    waitForReadModels: (position) => projections.waitFor(position, config.READ_MODEL_WAIT_MS),
    onCredentialsChanged,
    onChanged,
    exclusive: (names, fn) => exclusively(database, names, fn),
  });
  signingSecrets = createSigningSecrets({ accounts, agents });
  const credentialWatcher = createCredentialWatcher(auth, config.WS_HEARTBEAT_MS, {
    logger: services.logger,
  });
  Object.assign(services, {
    auth,
    accounts,
    agents,
    signingSecrets,
    keyring,
    ownerChanges,
    credentialWatcher,
  });
  services.rateLimitIdentity = (request, mode) => auth.rateLimitIdentity(request, mode);
  return { auth, accounts, agents };
};

/** The identity services, or `SERVICE_UNAVAILABLE` when the runtime was built without them. */
export const identity = (services: Services): IdentityServices => {
  const { auth, accounts, agents } = services;
  if (!auth || !accounts || !agents) {
    throw Object.assign(new Error('identity services are not installed'), { statusCode: 500 });
  }
  return { auth, accounts, agents };
};
