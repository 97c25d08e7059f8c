import type { CommandMeta } from '../../commands/metadata';
import type { OwnerRef } from '../../commands/wallet';
import { ownerIdOf } from '../auth/principal';
import type { Call } from './call';

/**
 * The wallet a call acts on (spec "Authentication" rules 4 and 5): the scoped agent (agent key, or JWT / account key
 * with `X-Agent-Id`), else the account's own.
 */
export const ownerOf = (call: Call): OwnerRef => ({
  accountId: call.caller.accountId,
  agentId: call.caller.agentId ?? null,
});

/** The metadata of the commands a call issues: the acting account or agent, and the call's request id. */
export const commandMeta = (call: Call): CommandMeta => ({
  actor: ownerIdOf(call.caller),
  requestId: call.requestId,
});
