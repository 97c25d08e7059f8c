import type { RecordedEvent } from '../../ports/event-store';

/**
 * One wallet event as `GET /account/events` and the `orders` WebSocket channel show it (one mapping for both):
 * the stream revision, the event's id, type and payload, its business time (`occurred_at`, ISO 8601, virtual in
 * backtests) and commit time (`recorded_at`, ISO 8601), who caused it (`actor`, an account or agent id, or null)
 * and the request it came from (`correlation_id`, or null), and its link in the stream's SHA-256 chain
 * (`prev_hash`, `hash`, hex; ARCHITECTURE §4).
 */
export const walletEventView = (e: RecordedEvent) => ({
  revision: e.revision,
  event_id: e.eventId,
  type: e.type,
  data: e.data as Record<string, unknown>,
  occurred_at: e.metadata.occurred_at,
  recorded_at: e.recordedAt.toISOString(),
  actor: typeof e.metadata.actor === 'string' ? e.metadata.actor : null,
  correlation_id: typeof e.metadata.correlation_id === 'string' ? e.metadata.correlation_id : null,
  prev_hash: e.metadata.prev_hash,
  hash: e.metadata.hash,
});

/** A page of `GET /account/events` (tool `get_account_events`): the stream, its events, where the next page starts. */
export const walletEventsPageOut = (page: {
  streamId: string;
  events: RecordedEvent[];
  nextAfter: number;
  hasMore: boolean;
}) => ({
  stream_id: page.streamId,
  events: page.events.map(walletEventView),
  next_after: page.nextAfter,
  has_more: page.hasMore,
});
