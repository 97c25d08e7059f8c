import type { FastifyReply } from 'fastify';

/**
 * Adds one metric to the response's `Server-Timing` header (W3C Server Timing: `name;dur=<ms>`, comma
 * separated), so a client sees where its request's time went on the server — e.g. `POST /trade/order` answers
 * `Server-Timing: handler;dur=0.41, command;dur=3.20, read-models;dur=11.72` (ms: the time before the handler
 * ran — parsing, authentication, rate limit, validation, waiting for the event loop —, then the decision and
 * the durable append, then the wait for the read models). `bench/trading.ts` reports their percentiles.
 */
export const addServerTiming = (reply: FastifyReply, name: string, ms: number): void => {
  const metric = `${name};dur=${ms.toFixed(2)}`;
  const current = reply.getHeader('server-timing');
  reply.header('server-timing', current ? `${current}, ${metric}` : metric);
};
