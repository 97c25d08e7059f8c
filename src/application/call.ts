import type { LogPosition } from '../../ports/event-store';
import type { Principal } from '../auth/principal';
import type { Services } from '../services';

/**
 * What a use case reports back about how it answered, for the door to present (REST: `X-Log-Position`,
 * `X-Read-Model-Stale`, `Server-Timing`; MCP: the result's `_meta`; the Binance door ignores it).
 */
export interface Receipt {
  /** `$all` position of the call's last write (read your writes; `X-Log-Position`). */
  position?: LogPosition;
  /** True when a wait for the read models ran out: figures read or answered may not include the newest writes. */
  stale: boolean;
  /** Where the call's time went on the server: `{ name, ms }` in order (W3C Server Timing names). */
  timings: { name: string; ms: number }[];
  /** True when the call answered a retry under an idempotency key with the first answer (`Idempotent-Replayed`). */
  replayed?: boolean;
}

/**
 * One call of a use case by a door (docs/architecture.md, "Application layer"): the venue's services, who calls
 * (already authenticated by the door) and the request id that correlates the events it appends. Every door —
 * REST route, WebSocket channel, MCP tool, Binance endpoint — builds one per request and passes it to the same
 * functions of `src/application/`, which carry the guarantees (idempotency, read your writes, ownership).
 */
export interface Call extends PublicCall {
  readonly caller: Principal;
}

/** A call of a public use case (registration, login, market data): no caller yet. */
export interface PublicCall {
  readonly services: Services;
  /** Correlates the call's events (`correlation_id`) and logs; the door's request id. */
  readonly requestId: string;
  readonly receipt: Receipt;
}

/** A new call of `caller` with an empty receipt. */
export const newCall = (services: Services, caller: Principal, requestId: string): Call => ({
  ...newPublicCall(services, requestId),
  caller,
});

/** A new call of a public use case with an empty receipt. */
export const newPublicCall = (services: Services, requestId: string): PublicCall => ({
  services,
  requestId,
  receipt: { stale: false, timings: [] },
});

/** Adds a timing (ms) to the call's receipt. */
export const recordTiming = (call: PublicCall, name: string, ms: number): void => {
  call.receipt.timings.push({ name, ms });
};

/** Runs `fn` and records how long it took under `name`. */
export const timed = async <T>(call: PublicCall, name: string, fn: () => Promise<T>): Promise<T> => {
  const started = performance.now();
  try {
    return await fn();
  } finally {
    recordTiming(call, name, performance.now() - started);
  }
};
