import type { LogPosition } from '../../ports/event-store';
import type { ReadModelName } from '../../projections/registry';
import { ownerIdOf } from '../auth/principal';
import type { Call, PublicCall } from './call';

/**
 * Read your writes, a guarantee of the venue for every door (ARCHITECTURE §2.5; docs/architecture.md, "Read your
 * writes"). Writes answer once durable and record their position as a watermark of the wallet's owner (and its
 * account); a later read of that owner, through any door, first waits until the read models it reads include the
 * watermark, at most `READ_MODEL_WAIT_MS`. A call that ran out of time says so in its receipt (`stale`).
 */

/**
 * Before a read: waits until the read models in `readModels` include the caller's earlier writes that answered
 * without waiting for them (`READ_YOUR_WRITES=on-read`). An agent waits for its own writes, an account (or a JWT
 * without `X-Agent-Id`) for its own and its agents'. Costs a map look-up when nothing is owed; a read model that
 * has failed is not waited for (the call is marked stale instead). Records `own-writes` in the receipt.
 */
export const settleOwnWrites = async (call: Call, readModels: readonly ReadModelName[]): Promise<void> => {
  const ownWrites = call.services.trading?.ownWrites;
  if (!ownWrites) return;
  const owner = ownerIdOf(call.caller);
  if (!ownWrites.owes(owner)) return;
  const started = performance.now();
  const caughtUp = await ownWrites.settle(owner, readModels);
  call.receipt.timings.push({ name: 'own-writes', ms: performance.now() - started });
  if (!caughtUp) call.receipt.stale = true;
};

/**
 * After a command: records its position in the receipt and waits until every read model has folded it, at most
 * `READ_MODEL_WAIT_MS` (`read-models` in the receipt; `stale` on a timeout). The answer is built from the decider's
 * events either way; the wait is what lets the caller's next read, through any door, include the change.
 */
export const awaitReadModels = async (call: PublicCall, position: LogPosition | undefined): Promise<void> => {
  if (!position) return;
  call.receipt.position = position;
  const { projections, config } = call.services;
  const started = performance.now();
  const caughtUp = await projections.waitFor(position, config.READ_MODEL_WAIT_MS);
  call.receipt.timings.push({ name: 'read-models', ms: performance.now() - started });
  if (!caughtUp) call.receipt.stale = true;
};

/**
 * After a trading command (place, cancel, cancel all), as `READ_YOUR_WRITES` says. `on-response`: as
 * {@link awaitReadModels}. `on-read` (default): no wait; the position goes into the receipt and becomes the
 * watermark of the wallet's owner and its account, which their next read waits for ({@link settleOwnWrites}).
 */
export const acknowledgeTradeWrite = async (call: Call, position: LogPosition | undefined): Promise<void> => {
  const { services, caller } = call;
  if (services.config.READ_YOUR_WRITES === 'on-response' || !services.trading) {
    await awaitReadModels(call, position);
    return;
  }
  if (!position) return;
  call.receipt.position = position;
  services.trading.ownWrites.record(
    caller.agentId ? [caller.agentId, caller.accountId] : [caller.accountId],
    position,
  );
};

/**
 * A command's outcome once the read models include it: awaits `outcome` (whatever the command answers, with the
 * log position of its events), then {@link awaitReadModels} for that position, and returns the outcome.
 */
export const settled = async <O extends { position?: LogPosition | undefined }>(
  call: PublicCall,
  outcome: Promise<O>,
): Promise<O> => {
  const done = await outcome;
  await awaitReadModels(call, done.position);
  return done;
};
