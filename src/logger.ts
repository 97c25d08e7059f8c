import pino, { type Logger } from 'pino';

/** Query parameters whose values never reach a log line (WebSocket credentials travel in the URL). */
const SECRET_QUERY = /([?&](?:api_key|token|api_secret|password)=)[^&#]*/gi;

/** The URL with credential query values replaced by `[redacted]`. */
export const redactUrl = (url: string): string => url.replace(SECRET_QUERY, '$1[redacted]');

/**
 * The process logger (pino): JSON lines, pretty-printed when stdout is a terminal. Secrets never reach it:
 * credential headers are not serialised and credential query values are redacted.
 */
export const createLogger = (
  level: string,
  options: { pretty?: boolean; destination?: pino.DestinationStream } = {},
): Logger =>
  pino(
    {
      level,
      serializers: {
        req: (req: { method?: string; url?: string; id?: string; ip?: string }) => ({
          method: req.method,
          url: req.url ? redactUrl(req.url) : req.url,
          ip: req.ip,
        }),
      },
      redact: { paths: ['*.api_secret', '*.password', '*.api_key', '*.token'], censor: '[redacted]' },
      ...((options.pretty ?? (process.stdout.isTTY && !options.destination))
        ? {
            transport: {
              target: 'pino-pretty',
              options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
            },
          }
        : {}),
    },
    ...(options.destination ? [options.destination] : []),
  );
