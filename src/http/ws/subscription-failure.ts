import type { Logger } from 'pino';
import { DomainError, isDomainError } from '../../../domain/shared/errors';
import { errorData } from './error-data';
import type { WsConnection } from './registry';

/**
 * Ends a subscription that failed after its acknowledgement (a `battle` found unknown, a `portfolio` whose first
 * snapshot fails; docs/market-data.md): first `end()`, which stops its delivery and calls the socket's `ended`
 * (`WsSubscription.start`), so its slot is free, a retry is a fresh subscribe answered again, and unsubscribing
 * it is "not subscribed"; then the `system` `error` that answers the client's subscribe:
 * `{code, message, details?, action: 'subscribe', channel, ...target}` (`action` and `channel` like every other
 * error of the socket, src/http/ws/plugin.ts; `target` names what was subscribed, e.g. `{battle_id}`).
 * `error` is what failed: a `DomainError` is sent as it is, anything else is logged and sent as `INTERNAL_ERROR`.
 */
export const failSubscription = (
  connection: WsConnection,
  channel: string,
  error: unknown,
  end: () => void,
  logger: Logger,
  target: Record<string, unknown> = {},
): void => {
  end();
  const e = isDomainError(error) ? error : new DomainError('INTERNAL_ERROR', 'internal error');
  if (!isDomainError(error)) logger.warn({ err: error, ...target }, `${channel} channel subscribe failed`);
  connection.send('system', 'error', {
    ...errorData(e),
    action: 'subscribe',
    channel,
    ...target,
  });
};
