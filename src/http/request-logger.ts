import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger';
import type { Logger } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger that is the pino child fastify would make (`parent.child({ reqId })`) once a line at a level
 * the parent writes is logged, and nothing before. Making the child serialises its bindings through pino's
 * redaction (`@pinojs/redact`: ~2.2 kB allocated per request, docs/benchmarks.md "Trading", issue 23) although at
 * `LOG_LEVEL=warn` a request that succeeds writes no line. Lines that are written are the child's, byte for byte.
 *
 * The level checked is the parent's at the time of the call; once the child exists every call goes to it (and so
 * follows its level).
 */
class LazyRequestLogger {
  private made?: FastifyBaseLogger;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
  ) {}

  /** The child, made on first use. */
  private child_(): FastifyBaseLogger {
    if (!this.made) this.made = this.parent.child(this.bindings) as unknown as FastifyBaseLogger;
    return this.made;
  }

  /** Writes through the child when `level` is written, making it then. */
  private write(level: Level, args: unknown[]): void {
    if (!this.made && !this.parent.isLevelEnabled(level)) return;
    (this.child_()[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.made ? this.made.level : this.parent.level;
  }

  set level(level: string) {
    this.child_().level = level;
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.child_().child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory`: a {@link LazyRequestLogger} for a pino root logger; per-request options (a
 * route's `logLevel` or serializers) or a logger without `isLevelEnabled` get the child at once, as fastify's
 * default factory does.
 */
export const lazyRequestLogger = (
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger => {
  if (
    options.level !== undefined ||
    options.serializers !== undefined ||
    typeof (logger as Partial<Logger>).isLevelEnabled !== 'function'
  ) {
    return logger.child(bindings, options);
  }
  return new LazyRequestLogger(logger as unknown as Logger, bindings) as unknown as FastifyBaseLogger;
};
