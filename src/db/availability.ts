import { EventEmitter } from 'node:events';
import { isConnectionError } from './connection-errors';

/** A state change of {@link DatabaseAvailability}: `down` when a probe failed, `up` when one answered again. */
export type AvailabilityChange = 'down' | 'up';

/** What `/health`, `/metrics` and the retry loops read of the database connection. */
export interface AvailabilitySnapshot {
  available: boolean;
  /** ms since epoch of the first failed probe of the current outage. */
  downSince?: number;
  /** Message of the last connection error seen. */
  lastError?: string;
  /** Outages seen since start. */
  outages: number;
}

/**
 * Whether the database server answers, as this process last saw it. Any connection error reported to it
 * (`report`) triggers a probe (`probe`: a fresh connection and `select 1`); while probes fail it is `down` and
 * probes again every `probeMs`, and the first probe that answers makes it `up` and wakes everyone waiting in
 * {@link waitUntilAvailable}. So work that lost its connection resumes within `probeMs` of the server's return
 * instead of after a growing back-off of its own, and nothing hammers a server that is away.
 */
export class DatabaseAvailability {
  private state: AvailabilitySnapshot = { available: true, outages: 0 };
  private probing: Promise<void> | undefined;
  private closed = false;
  private readonly events = new EventEmitter();

  constructor(
    private readonly probe: () => Promise<void>,
    private readonly probeMs = 100,
  ) {
    this.events.setMaxListeners(0);
  }

  /** The current state (a copy). */
  snapshot(): AvailabilitySnapshot {
    return { ...this.state };
  }

  get available(): boolean {
    return this.state.available;
  }

  /** Hears every change; returns the unsubscribe. */
  onChange(listener: (change: AvailabilityChange) => void): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  /**
   * Tells it an error was seen; a connection error starts a probe (at most one at a time). Returns whether
   * `error` was a connection error.
   */
  report(error: unknown): boolean {
    if (!isConnectionError(error)) return false;
    this.state.lastError = (error as Error)?.message ?? String(error);
    this.check();
    return true;
  }

  /** Starts a probe unless one runs; resolves when the server answered (or this was closed). */
  check(): Promise<void> {
    this.probing ??= this.probeUntilUp().finally(() => {
      this.probing = undefined;
    });
    return this.probing;
  }

  /**
   * Resolves `true` as soon as the database answers (at once when it is not known to be away), `false` after
   * `timeoutMs` without it.
   */
  async waitUntilAvailable(timeoutMs: number): Promise<boolean> {
    if (this.state.available && !this.probing) return true;
    if (this.closed) return false;
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.events.off('settled', onSettled);
        resolve(ok);
      };
      const onSettled = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.events.on('settled', onSettled);
      void this.check();
    });
  }

  /** Stops probing; waiters get `false` at their timeout. */
  close(): void {
    this.closed = true;
  }

  private async probeUntilUp(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      try {
        await this.probe();
        if (!this.state.available) {
          this.state = { available: true, outages: this.state.outages };
          this.events.emit('change', 'up');
        }
        this.events.emit('settled');
        return;
      } catch (error) {
        this.state.lastError = (error as Error)?.message ?? String(error);
        if (this.state.available) {
          this.state = {
            ...this.state,
            available: false,
            downSince: Date.now(),
            outages: this.state.outages + 1,
          };
          this.events.emit('change', 'down');
        }
      }
      await new Promise((r) => setTimeout(r, this.probeMs).unref());
    }
  }
}
