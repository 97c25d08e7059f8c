import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AgentCommand, AgentKeyInput } from '../domain/agent/commands';
import { agentDecider, agentNotOwned, requireOwned } from '../domain/agent/decide';
import { type AgentProfileFields, agentStreamId } from '../domain/agent/events';
import { AGENT_LIMITS } from '../domain/agent/profile';
import type { AgentState } from '../domain/agent/state';
import { backtestStreamId } from '../domain/backtest/events';
import { DomainError } from '../domain/shared/errors';
import type { RiskProfile } from '../domain/shared/risk-profile';
import { type EventStore, type LogPosition, StreamNotFoundError } from '../ports/event-store';
import type { Keyring } from '../ports/keyring';
import type { ReadModels } from '../projections/read-models';
import { countAgents } from '../queries/agents';
import { backtestIdsOfAgent } from '../queries/backtests';
import { runningBattlesWithAgent } from '../queries/battles';
import { agentBattleLock } from './battle-locks';
import {
  generateApiKey,
  generateApiSecret,
  keyPreview,
  sha256Hex,
  signingSecretContext,
} from './credentials';
import type { CredentialsChange, CredentialsChangeListener } from './credentials-change';
import { createCommandHandler } from './handler';
import { createKeyIndex, type KeyIndex } from './key-index';
import { KeyedMutex } from './keyed-mutex';
import { appendedPosition, handleLive } from './live';
import type { CommandMeta } from './metadata';

/** Most agents one account may hold, active or archived (ARCHITECTURE §14b). */
export const MAX_AGENTS_PER_ACCOUNT = 100;

/** Input of {@link AgentCommands.create} (spec `POST /agents` body). */
export interface CreateAgentInput {
  displayName: string;
  startingBalance?: string | number;
  llmModel?: string | null;
  framework?: string | null;
  strategyTags?: string[];
  riskProfile?: Partial<RiskProfile>;
  color?: string | null;
  avatarUrl?: string | null;
}

/** A command's outcome; `apiKey` and `apiSecret` are set when a new key was made (create, clone, regenerate). */
export interface AgentCommandResult {
  agent: AgentState;
  /** Position of the last new event; absent when nothing changed. */
  position?: LogPosition;
  apiKey?: string;
  /** The new key's HMAC signing secret (`sk_live_…`), in plaintext only in this result. */
  apiSecret?: string;
}

/** Agent commands (the write side of agents, spec "Agent" endpoints, ARCHITECTURE §4, §12). */
export interface AgentCommands {
  /** Creates an agent with a fresh key; `VALIDATION_ERROR` for bad fields or past 100 agents. */
  create(
    accountId: string,
    input: CreateAgentInput,
    meta: CommandMeta,
  ): Promise<Required<AgentCommandResult>>;
  /**
   * Copies `risk_profile`, `strategy_tags`, `llm_model`, `framework` and the starting balance of an owned agent
   * into a new agent with a fresh key, named `newName` or "<name> (copy)".
   */
  clone(
    accountId: string,
    sourceAgentId: string,
    newName: string | undefined,
    meta: CommandMeta,
  ): Promise<Required<AgentCommandResult>>;
  /** Partial update of the labels (only supplied fields change). */
  update(
    accountId: string,
    agentId: string,
    changes: Partial<AgentProfileFields>,
    meta: CommandMeta,
  ): Promise<AgentCommandResult>;
  /** Replaces the risk profile. */
  updateRiskProfile(
    accountId: string,
    agentId: string,
    riskProfile: Partial<RiskProfile>,
    meta: CommandMeta,
  ): Promise<AgentCommandResult>;
  /** New key; the old one is refused from now on in this process, and everywhere once read models catch up. */
  regenerateKey(accountId: string, agentId: string, meta: CommandMeta): Promise<Required<AgentCommandResult>>;
  /** New session at the starting balance, status `active`. */
  reset(accountId: string, agentId: string, meta: CommandMeta): Promise<AgentCommandResult>;
  /** Archives (idempotent). */
  archive(accountId: string, agentId: string, meta: CommandMeta): Promise<AgentCommandResult>;
  /**
   * Deletes the agent for good: its stream (with the encrypted key: the key material is destroyed), its
   * `wallet-{id}` stream when there is one, and the streams of its backtest sessions (`backtest-{session_id}`,
   * whatever their status: the spec's "all trades, orders, positions and history deleted"), whose ids it answers
   * with the log position after the deletions. An agent taking part in a running (active or paused) battle, live
   * or historical, is refused with `BATTLE_INVALID_STATE` 409 (`details.reason` `agent_in_running_battle`,
   * `details.battle_id`) and nothing changes.
   */
  remove(
    accountId: string,
    agentId: string,
    meta: CommandMeta,
  ): Promise<{ position: LogPosition; backtests: string[] }>;
  /**
   * A new HMAC signing secret for the agent's key (`POST /agents/{id}/signing-secret`), replacing the previous
   * one; the plaintext is only in the result. `PERMISSION_DENIED` for an agent of another account.
   */
  issueSigningSecret(
    accountId: string,
    agentId: string,
    meta: CommandMeta,
  ): Promise<{ agent: AgentState; apiSecret: string; position: LogPosition }>;
  /** The agent's signing secret in plaintext, or null when its key has none. */
  signingSecret(agentId: string): Promise<string | null>;
  /** Decrypts the agent's current key for its owner (`GET /agents/{id}/api-key`, `skill.md`). */
  revealKey(accountId: string, agentId: string): Promise<{ apiKey: string; agent: AgentState }>;
  /** The agent's state from its stream (status `none` when unknown). */
  load(agentId: string): Promise<AgentState>;
}

/** Dependencies of {@link createAgentCommands}. */
export interface AgentCommandDeps {
  store: EventStore;
  /** Read models (for the per-account agent count). */
  db: Kysely<ReadModels>;
  keyring: Keyring;
  /** Waits until read models include `position` (so the next count sees the new agent). */
  waitForReadModels: (position: LogPosition) => Promise<boolean>;
  onCredentialsChanged?: CredentialsChangeListener;
  /**
   * Told the agent id and log position of every change appended to an agent's stream (a risk profile, an archive,
   * a reset…), as soon as it is durable: what lets this process read the agent from its stream while the read
   * models lag behind the change (`UnfoldedChanges`).
   */
  onChanged?: (agentId: string, position: LogPosition) => void;
  /** Default {@link MAX_AGENTS_PER_ACCOUNT}. */
  maxAgents?: number;
  /** The write side's key index every new agent key is recorded in first (default: one over `store`). */
  keyIndex?: KeyIndex;
  /**
   * Runs `fn` while no other section of this or another process holds any of `names` (`src/db/exclusive.ts`;
   * default: just runs it). A deletion holds the agent's {@link agentBattleLock}, which a live battle's start
   * holds for each participant.
   */
  exclusive?: <T>(names: string | readonly string[], fn: () => Promise<T>) => Promise<T>;
}

/** Builds the agent commands. */
export const createAgentCommands = (deps: AgentCommandDeps): AgentCommands => {
  const agents = createCommandHandler(deps.store, agentDecider);
  const keyIndex = deps.keyIndex ?? createKeyIndex(deps.store);
  const perAccount = new KeyedMutex();
  const maxAgents = deps.maxAgents ?? MAX_AGENTS_PER_ACCOUNT;
  const exclusive = deps.exclusive ?? (<T>(_names: string | readonly string[], fn: () => Promise<T>) => fn());

  const newKey = (agentId: string): { apiKey: string; apiSecret: string; key: AgentKeyInput } => {
    const apiKey = generateApiKey();
    const apiSecret = generateApiSecret();
    return {
      apiKey,
      apiSecret,
      key: {
        hash: sha256Hex(apiKey),
        preview: keyPreview(apiKey),
        ciphertext: deps.keyring.encrypt(apiKey, agentId),
        signingSecretCiphertext: deps.keyring.encrypt(apiSecret, signingSecretContext(agentId)),
      },
    };
  };

  const run = async (agentId: string, command: AgentCommand, meta: CommandMeta) => {
    const result = await handleLive(agents, agentStreamId(agentId), command, meta);
    if (result.append) deps.onChanged?.(agentId, result.append.position);
    return { agent: result.state, events: result.events, ...appendedPosition(result) };
  };

  /**
   * Tells the listener (if any) that the credentials of `agentId` changed at `position`, with the key hashes the
   * change revoked when it revoked some.
   */
  const credentialsChanged = (
    accountId: string,
    agentId: string,
    position: LogPosition | undefined,
    revoked?: Pick<CredentialsChange, 'revokedKeyHashes'>,
  ) => deps.onCredentialsChanged?.({ accountId, agentId, ...revoked, ...(position ? { position } : {}) });

  const load = async (agentId: string) => (await agents.load(agentStreamId(agentId))).state;

  const createWithKey = (
    accountId: string,
    data: CreateAgentInput,
    clonedFrom: string | null,
    meta: CommandMeta,
  ): Promise<Required<AgentCommandResult>> =>
    perAccount.run(accountId, async () => {
      const count = await countAgents(deps.db, accountId);
      if (count >= maxAgents) {
        throw new DomainError(
          'VALIDATION_ERROR',
          `an account can hold at most ${maxAgents} agents (active or archived); delete one first`,
          { limit: maxAgents, current: count },
        );
      }
      const agentId = randomUUID();
      const { apiKey, apiSecret, key } = newKey(agentId);
      // The key's index entry first, as registration does: the key authenticates from the moment this answers,
      // however far the read models lag (`KeyIndex.inForce`). Should the agent not be recorded, the entry names an
      // agent that does not exist, for a key nobody was given.
      await keyIndex.issue(key.hash, { accountId, agentId }, meta);
      const result = await handleLive(
        agents,
        agentStreamId(agentId),
        {
          type: 'CreateAgent',
          data: {
            agentId,
            accountId,
            profile: {
              display_name: data.displayName,
              ...(data.llmModel !== undefined ? { llm_model: data.llmModel } : {}),
              ...(data.framework !== undefined ? { framework: data.framework } : {}),
              ...(data.strategyTags !== undefined ? { strategy_tags: data.strategyTags } : {}),
              ...(data.color !== undefined ? { color: data.color } : {}),
              ...(data.avatarUrl !== undefined ? { avatar_url: data.avatarUrl } : {}),
            },
            startingBalance: data.startingBalance,
            riskProfile: data.riskProfile,
            key,
            clonedFrom,
          },
        },
        meta,
        'no_stream',
      );
      const position = result.append!.position;
      // The next create of this account counts from the read model: let it include this agent first.
      await deps.waitForReadModels(position);
      return { agent: result.state, position, apiKey, apiSecret };
    });

  return {
    create(accountId, input, meta) {
      return createWithKey(accountId, input, null, meta);
    },

    async clone(accountId, sourceAgentId, newName, meta) {
      const source = await load(sourceAgentId);
      requireOwned(source, accountId);
      const name = newName ?? copyName(source.profile.display_name);
      return createWithKey(
        accountId,
        {
          displayName: name,
          startingBalance: source.startingBalance,
          llmModel: source.profile.llm_model,
          framework: source.profile.framework,
          strategyTags: source.profile.strategy_tags,
          ...(source.riskProfile ? { riskProfile: source.riskProfile } : {}),
        },
        sourceAgentId,
        meta,
      );
    },

    update(accountId, agentId, changes, meta) {
      return run(agentId, { type: 'UpdateAgentProfile', data: { accountId, changes } }, meta);
    },

    updateRiskProfile(accountId, agentId, riskProfile, meta) {
      return run(agentId, { type: 'UpdateAgentRiskProfile', data: { accountId, riskProfile } }, meta);
    },

    async regenerateKey(accountId, agentId, meta) {
      // Only an owner's agent gets an index entry; the entry is a new key's, so the key works at once (the
      // replaced key's entry stays, but the agent's stream then names another key: `inForce` refuses it).
      requireOwned(await load(agentId), accountId);
      const { apiKey, apiSecret, key } = newKey(agentId);
      await keyIndex.issue(key.hash, { accountId, agentId }, meta);
      const result = await run(agentId, { type: 'RegenerateAgentKey', data: { accountId, key } }, meta);
      const event = result.events.find((e) => e.type === 'AgentKeyRegenerated');
      credentialsChanged(accountId, agentId, result.position, {
        revokedKeyHashes: event?.type === 'AgentKeyRegenerated' ? [event.data.previous_key_hash] : [],
      });
      return { agent: result.agent, position: result.position!, apiKey, apiSecret };
    },

    async issueSigningSecret(accountId, agentId, meta) {
      const apiSecret = generateApiSecret();
      const ciphertext = deps.keyring.encrypt(apiSecret, signingSecretContext(agentId));
      const result = await run(
        agentId,
        { type: 'IssueAgentSigningSecret', data: { accountId, ciphertext } },
        meta,
      );
      credentialsChanged(accountId, agentId, result.position);
      return { agent: result.agent, apiSecret, position: result.position! };
    },

    async signingSecret(agentId) {
      const agent = await load(agentId);
      if (agent.status === 'none' || !agent.signingSecretCiphertext) return null;
      return deps.keyring.decrypt(agent.signingSecretCiphertext, signingSecretContext(agentId));
    },

    async reset(accountId, agentId, meta) {
      const result = await run(agentId, { type: 'ResetAgent', data: { accountId } }, meta);
      credentialsChanged(accountId, agentId, result.position);
      return result;
    },

    async archive(accountId, agentId, meta) {
      const result = await run(agentId, { type: 'ArchiveAgent', data: { accountId } }, meta);
      credentialsChanged(accountId, agentId, result.position);
      return result;
    },

    async remove(accountId, agentId, _meta) {
      const state = await load(agentId);
      requireOwned(state, accountId);
      return exclusive(agentBattleLock(state.agentId), async () => {
        // A running live battle ranks the agent from its wallet's fills, a historical one from its sandbox in the
        // battle's own stream (shared with the other participants, so not deleted): deleting the agent would
        // change its standing, or leave a participant that no longer exists trading.
        const [running] = await runningBattlesWithAgent(deps.db, state.agentId);
        if (running) {
          throw new DomainError(
            'BATTLE_INVALID_STATE',
            `agent ${state.agentId} takes part in the running ${running.battle_mode} battle ${running.battle_id}; stop or cancel it first`,
            { agent_id: state.agentId, battle_id: running.battle_id, reason: 'agent_in_running_battle' },
          );
        }
        // Refuse the key at once, before the streams (and so the key material) are gone.
        deps.onCredentialsChanged?.({ accountId, agentId, revokedKeyHashes: [state.apiKeyHash] });
        const gone = (error: unknown) => {
          if (!(error instanceof StreamNotFoundError)) throw error;
        };
        // Its backtest sessions go with it, first (an interrupted delete leaves the agent, so it can be sent
        // again). A session whose creation the read models do not hold yet is missed here; its commands answer
        // BACKTEST_NOT_FOUND once the agent is gone (commands/backtest.ts, `requireAgentActive`).
        const backtests = await backtestIdsOfAgent(deps.db, state.agentId);
        for (const id of backtests) await deps.store.deleteStream(backtestStreamId(id)).catch(gone);
        // A concurrent delete of the same agent wins; this one then answers as for an unknown agent.
        const deleted = await deps.store.deleteStream(agentStreamId(agentId)).then(
          (r) => r.position,
          (e: unknown) => {
            gone(e);
            return undefined;
          },
        );
        agents.forget(agentStreamId(agentId));
        if (!deleted) throw agentNotOwned();
        const wallet = `wallet-${agentId}`;
        // The agent's deletion is appended after the sessions': its position covers them.
        let position = deleted;
        if ((await deps.store.streamRevision(wallet)) >= 0) {
          // The later deletion's position covers both (it is appended after the first).
          position = (await deps.store.deleteStream(wallet).catch(gone))?.position ?? position;
        }
        deps.onCredentialsChanged?.({ accountId, agentId, revokedKeyHashes: [state.apiKeyHash], position });
        // Until the read models show the agent gone, a battle's start reading them would take it in.
        await deps.waitForReadModels(position);
        return { position, backtests };
      });
    },

    async revealKey(accountId, agentId) {
      const agent = await load(agentId);
      requireOwned(agent, accountId);
      return { apiKey: deps.keyring.decrypt(agent.apiKeyCiphertext, agent.agentId), agent };
    },

    load,
  };
};

/** "<name> (copy)", shortened so the result stays within the 100-character limit. */
export const copyName = (name: string): string => {
  const suffix = ' (copy)';
  const chars = [...name];
  const room = AGENT_LIMITS.displayName - suffix.length;
  return (chars.length > room ? chars.slice(0, room).join('').trimEnd() : name) + suffix;
};
