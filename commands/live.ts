import type { BaseContext, DomainEvent } from '../domain/shared/decider';
import type { ExpectedRevision, LogPosition } from '../ports/event-store';
import type { CommandHandler, HandleResult } from './handler';
import { type CommandMeta, eventMetadata, liveContext } from './metadata';

/**
 * Handles a live command (an operator's or a client's, not a backtest's or battle's virtual-time one) issued now:
 * the wall clock as `now` and UUID v4 ids ({@link liveContext}), and the issuer's metadata stamped at that same
 * instant ({@link eventMetadata}). `expectedRevision` as in `HandleOptions` (e.g. `no_stream` for a create).
 * Resolves to the handler's result; throws what the handler throws (the decider's `DomainError`, a conflict).
 */
export const handleLive = <State, Command, Event extends DomainEvent>(
  handler: CommandHandler<State, Command, Event, BaseContext>,
  streamId: string,
  command: Command,
  meta: CommandMeta,
  expectedRevision?: ExpectedRevision,
): Promise<HandleResult<State, Event>> => {
  const now = new Date();
  return handler.handle(streamId, command, liveContext(now), {
    metadata: eventMetadata(meta, now),
    ...(expectedRevision === undefined ? {} : { expectedRevision }),
  });
};

/** `{ position }` of the append a command made, or `{}` when it appended nothing (a command's result fields). */
export const appendedPosition = (
  result: Pick<HandleResult<unknown, unknown>, 'append'>,
): { position?: LogPosition } => (result.append ? { position: result.append.position } : {});
