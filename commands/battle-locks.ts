/**
 * Names of the cross-process locks (`src/db/exclusive.ts`) that keep battle starts and agent deletions apart.
 * Ids are compared in lower case, as the API accepts them in any case.
 */

/** Held while a battle starts: two starts of one battle (two API processes) reset the wallets once. */
export const battleStartLock = (battleId: string): string => `battle-start:${battleId.toLowerCase()}`;

/**
 * Held for each participant while a battle, live or historical, starts (until its read models show it running)
 * and while the agent is deleted (until its read models show it gone), so neither can pass the other's check in
 * between: a deleted agent would vanish from a running battle's rankings, a started live battle would reopen a
 * deleted agent's wallet, and a historical one would give a deleted agent a sandbox.
 */
export const agentBattleLock = (agentId: string): string => `agent-battles:${agentId.toLowerCase()}`;
