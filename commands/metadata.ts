import { randomUUID } from 'node:crypto';
import type { BaseContext } from '../domain/shared/decider';
import type { EventMetadataInput, NewEvent } from '../ports/event-store';

/** Who issued a command and in which request (event metadata `actor`, `correlation_id`, `causation_id`). */
export interface CommandMeta {
  /** Account or agent id that issued the command, or `system` (operator CLI). */
  actor: string;
  /** The HTTP request id, when the command came over HTTP. */
  requestId?: string;
}

/** The live command context (ARCHITECTURE §4): wall-clock `now` and UUID v4 ids. */
export const liveContext = (now: Date = new Date()): BaseContext => ({ now, newId: randomUUID });

/**
 * Event metadata of a command issued at `now` (business time = wall clock for these live commands). `command_id`
 * (a UUID per command) marks the events of one append, e.g. an order and its fills, which an idempotent replay reads
 * back as the first answer (`commands/wallet.ts`).
 */
export const eventMetadata = (meta: CommandMeta, now: Date): EventMetadataInput => ({
  occurred_at: now.toISOString(),
  command_id: randomUUID(),
  ...issuer(meta),
});

/** The metadata that names who issued a command: `actor`, and the request as `correlation_id`/`causation_id`. */
const issuer = (meta: CommandMeta) => ({
  actor: meta.actor,
  ...(meta.requestId ? { correlation_id: meta.requestId, causation_id: meta.requestId } : {}),
});

/**
 * `events` to append, each with the metadata of the command that decided them at the event's own business time
 * (`occurredAt`: a backtest's or battle's events carry their virtual time), and the `schema_version` an event type
 * is recorded at when `schemaVersion` gives one (docs/events.md). No `command_id`. An event's `dataText` (its data
 * already encoded, `NewEvent.dataText`) goes with it.
 */
export const withCommandMetadata = <E extends { type: string; data: unknown; dataText?: Uint8Array }>(
  events: readonly E[],
  meta: CommandMeta,
  occurredAt: (e: E) => string,
  schemaVersion?: (e: E) => number | undefined,
): NewEvent[] =>
  events.map((e) => {
    const version = schemaVersion?.(e);
    const event: NewEvent = {
      type: e.type,
      data: e.data,
      metadata: {
        occurred_at: occurredAt(e),
        ...(version === undefined ? {} : { schema_version: version }),
        ...issuer(meta),
      },
    };
    // Encoded where it was decided (a stepping thread): appended as these bytes, not serialised again here.
    if (e.dataText) event.dataText = e.dataText;
    return event;
  });
