import type { WebSocket } from 'ws';

/**
 * Keeps a server-side WebSocket honest about its peer: pings every `intervalMs` and terminates the socket when the
 * previous ping got no pong (a peer gone without a close frame would otherwise hold its subscriptions forever).
 * `onBeat` runs with each ping (e.g. an application-level heartbeat message). Stops by itself when the socket
 * closes; returns a function that stops it sooner.
 */
export const keepAlive = (socket: WebSocket, intervalMs: number, onBeat?: () => void): (() => void) => {
  let alive = true;
  const onPong = () => {
    alive = true;
  };
  socket.on('pong', onPong);
  const timer = setInterval(() => {
    if (!alive) {
      socket.terminate();
      return;
    }
    alive = false;
    socket.ping();
    onBeat?.();
  }, intervalMs);
  timer.unref();
  const stop = () => {
    clearInterval(timer);
    socket.off('pong', onPong);
  };
  socket.once('close', stop);
  return stop;
};
