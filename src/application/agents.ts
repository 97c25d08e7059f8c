import type { AgentCommandResult, CreateAgentInput } from '../../commands/agents';
import type { CommandMeta } from '../../commands/metadata';
import { agentNotOwned } from '../../domain/agent/decide';
import type { AgentProfileFields } from '../../domain/agent/events';
import type { AgentState } from '../../domain/agent/state';
import type { RiskProfile } from '../../domain/shared/risk-profile';
import type { LogPosition } from '../../ports/event-store';
import { type AgentView, getAgent as findAgent, listAgents as findAgents } from '../../queries/agents';
import { identity } from '../auth/install';
import { renderSkill } from '../skill/render-skill';
import type { Call } from './call';
import { commandMeta } from './caller';
import { settled, settleOwnWrites } from './read-your-writes';
import { syncWalletToOwner } from './wallet-sync';

/**
 * Agent use cases (spec "Agent endpoints"; ARCHITECTURE §4, §12, §14b), for the account the call authenticates
 * (JWT only on REST: spec "Authentication" rule 3). Commands answer after the read models include them (read your
 * writes); an agent that is unknown or another account's is `PERMISSION_DENIED` 403 with one message for both
 * (`agentNotOwned`), so an id cannot be probed.
 */

/** An agent of the caller's account from the read model; `PERMISSION_DENIED` when unknown or another's. */
const ownedAgent = async (call: Call, agentId: string): Promise<AgentView> => {
  await settleOwnWrites(call, ['agents']);
  const agent = await findAgent(call.services.database.db, agentId);
  if (!agent || agent.accountId !== call.caller.accountId) throw agentNotOwned();
  return agent;
};

/**
 * A created agent (create, clone, regenerate): its state, its API key, shown here once more, and the key's HMAC
 * signing secret (signed requests: the Binance door), shown only here.
 */
export type CreatedAgent = Pick<AgentCommandResult, 'agent'> & { apiKey: string; apiSecret: string };

/** The agent commands of the venue. */
const agents = (call: Call) => identity(call.services).agents;

/**
 * One agent command of the caller's account: `run` is given the venue's agent commands, the account id and the
 * call's command metadata, and sends the command.
 */
type AgentCommand<O = AgentCommandResult> = (
  commands: ReturnType<typeof agents>,
  accountId: string,
  meta: CommandMeta,
) => Promise<O>;

/** Runs `command` for the caller's account and answers its outcome once the read models include it. */
const settledCommand = <O extends { position?: LogPosition | undefined }>(
  call: Call,
  command: AgentCommand<O>,
): Promise<O> => settled(call, command(agents(call), call.caller.accountId, commandMeta(call)));

/** The agent's state after `command`, once the read models include it. */
const agentAfter = async (call: Call, command: AgentCommand): Promise<AgentState> =>
  (await settledCommand(call, command)).agent;

/** A create, clone or regenerate command's outcome once the read models include it, as {@link CreatedAgent}. */
const created = async (call: Call, command: AgentCommand): Promise<CreatedAgent> => {
  const result = await settledCommand(call, command);
  return { agent: result.agent, apiKey: result.apiKey!, apiSecret: result.apiSecret! };
};

/** Creates an agent with its own key, wallet and risk profile (at most 100 per account: `VALIDATION_ERROR`). */
export const createAgent = async (call: Call, input: CreateAgentInput): Promise<CreatedAgent> =>
  created(call, (a, accountId, meta) => a.create(accountId, input, meta));

/** The account's agents, archived ones only when asked, with the total count. */
export const listAgents = async (
  call: Call,
  query: { includeArchived: boolean; limit: number; offset: number },
): Promise<{ agents: AgentView[]; total: number }> => {
  await settleOwnWrites(call, ['agents']);
  return findAgents(call.services.database.db, call.caller.accountId, query);
};

/** One agent of the account. */
export const getAgent = (call: Call, agentId: string): Promise<AgentView> => ownedAgent(call, agentId);

/** Partial update of an agent's profile: only supplied fields change (`null` clears an optional label). */
export const updateAgent = async (
  call: Call,
  agentId: string,
  changes: Partial<AgentProfileFields>,
): Promise<AgentState> =>
  agentAfter(call, (a, accountId, meta) => a.update(accountId, agentId, changes, meta));

/** Copies risk profile, tags, model and framework into a new agent with a fresh balance and key. */
export const cloneAgent = async (call: Call, agentId: string, newName?: string): Promise<CreatedAgent> =>
  created(call, (a, accountId, meta) => a.clone(accountId, agentId, newName, meta));

/**
 * Resets an agent: a new session at its starting balance, status `active`, trade history kept. Its wallet follows
 * before this answers (orders cancelled, positions closed, balance restored), so an immediate read sees no open
 * order and no lock.
 */
export const resetAgent = async (call: Call, agentId: string): Promise<AgentState> => {
  const agent = await agentAfter(call, (a, accountId, meta) => a.reset(accountId, agentId, meta));
  if (call.services.trading) {
    await syncWalletToOwner(call.services, { accountId: call.caller.accountId, agentId }, commandMeta(call));
  }
  return agent;
};

/** Archives an agent: data kept, key refused for new trading requests, hidden from default lists. */
export const archiveAgent = (call: Call, agentId: string): Promise<AgentState> =>
  agentAfter(call, (a, accountId, meta) => a.archive(accountId, agentId, meta));

/**
 * Deletes an agent for good: its streams, read models and key material, and its backtest sessions (their ids then
 * answer `BACKTEST_NOT_FOUND` 404 on every endpoint). An agent in a running battle, live or historical:
 * `BATTLE_INVALID_STATE` 409.
 */
export const deleteAgent = async (call: Call, agentId: string): Promise<void> => {
  const { backtests } = await settledCommand(call, (a, accountId, meta) =>
    a.remove(accountId, agentId, meta),
  );
  // This process's sessions in memory are dropped too (another process's cache learns it at its next write).
  call.services.backtest?.commands.forget(backtests);
};

/** The agent's full API key (decrypted) with its state. */
export const revealAgentKey = (call: Call, agentId: string): Promise<{ apiKey: string; agent: AgentState }> =>
  identity(call.services).agents.revealKey(call.caller.accountId, agentId);

/** Replaces the agent's key; the old key is refused from now on. */
export const regenerateAgentKey = async (call: Call, agentId: string): Promise<CreatedAgent> =>
  created(call, (a, accountId, meta) => a.regenerateKey(accountId, agentId, meta));

/**
 * A new HMAC signing secret for the agent's key (docs/operations.md "Signing secrets"), replacing the previous one
 * at once; the plaintext is in the answer only. `PERMISSION_DENIED` for an agent that is not the account's.
 */
export const issueAgentSigningSecret = async (
  call: Call,
  agentId: string,
): Promise<{ agent: AgentState; apiSecret: string }> => {
  const result = await identity(call.services).agents.issueSigningSecret(
    call.caller.accountId,
    agentId,
    commandMeta(call),
  );
  return { agent: result.agent, apiSecret: result.apiSecret };
};

/** The agent's effective risk limits. */
export const agentRiskProfile = async (call: Call, agentId: string): Promise<RiskProfile> =>
  (await ownedAgent(call, agentId)).riskProfile;

/** Replaces the agent's risk limits (applies to its next order); returns the limits in force. */
export const updateAgentRiskProfile = async (
  call: Call,
  agentId: string,
  input: Partial<RiskProfile>,
): Promise<RiskProfile> =>
  (await agentAfter(call, (a, accountId, meta) => a.updateRiskProfile(accountId, agentId, input, meta)))
    .riskProfile!;

/**
 * The agent's `skill.md`: Markdown instructions for an LLM agent with its key injected, its limits and the
 * endpoints under `baseUrl` (the venue's `/api/v1` address as the caller reached it).
 */
export const agentSkill = async (call: Call, agentId: string, baseUrl: string): Promise<string> => {
  const { apiKey, agent } = await revealAgentKey(call, agentId);
  return renderSkill({
    agentId: agent.agentId,
    accountId: agent.accountId,
    name: agent.profile.display_name,
    apiKey,
    apiKeyPreview: agent.apiKeyPreview,
    status: agent.status === 'archived' ? 'archived' : 'active',
    startingBalance: agent.startingBalance,
    riskProfile: agent.riskProfile!,
    baseUrl,
  });
};
