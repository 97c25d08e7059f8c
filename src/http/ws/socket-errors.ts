import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';

/**
 * The error handler of every WebSocket route (`@fastify/websocket`'s `errorHandler`): what an open socket's
 * `error` event, or a handler that throws, does.
 * - A frame the `ws` library refuses (`WS_ERR_*`: over `maxPayload`, invalid UTF-8, a bad opcode or close code) is
 *   the client's mistake. `ws` is already closing the socket with the protocol's code for it (1009, 1007, 1002;
 *   RFC 6455 §7.4.1) and ends it itself if the peer never answers, so it is logged at info and left to close:
 *   terminating it here could cut the close frame (the client then sees 1006).
 * - Anything else is a server error (a handler that throws comes here too): logged as one and the socket
 *   terminated (the library's default). A peer gone without a close frame never comes here: `ws` ends the socket
 *   without emitting an `error`.
 */
export function socketErrorHandler(
  this: unknown,
  error: Error & { code?: string },
  socket: WebSocket,
  request: FastifyRequest,
): void {
  const code = error.code ?? '';
  if (code.startsWith('WS_ERR_')) {
    request.log.info({ code, reason: error.message }, 'WebSocket frame refused; closing the socket');
    return;
  }
  request.log.error(error);
  socket.terminate();
}
