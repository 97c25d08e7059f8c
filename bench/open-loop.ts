import { Client } from 'undici';

/** One agent of an open-loop run: the headers its requests carry (its credential). */
export interface OpenLoopAgent {
  headers: Record<string, string>;
}

/** What an open-loop run saw: every request's latency from its scheduled send time (ms), and the statuses. */
export interface OpenLoopResult {
  /** Requests scheduled (`rate × seconds`) and answered. */
  scheduled: number;
  answered: number;
  /** Seconds from the first scheduled send to the last answer. */
  seconds: number;
  statuses: Map<number, number>;
  /** Transport errors (connection refused or reset); such requests have no latency. */
  errors: number;
  /** Latency of each answered request from its scheduled send time, ms (includes any wait for its connection). */
  latenciesMs: number[];
  /** How late the generator itself sent requests behind their schedule, ms (p99 and max): its own health. */
  sendLagMs: { p99: number; max: number };
}

/**
 * An open-loop load generator: `rate` requests per second spread evenly over time and round-robin over the
 * agents (agent `i mod n` sends request `i`, at `t0 + i / rate`), each agent on its own keep-alive connection
 * (undici `Client`, one request at a time: a request due while the agent's last one is unanswered waits for it).
 *
 * Why not autocannon's rate option: autocannon 8 limits a connection to `rate / connections` requests per
 * second by sending them back to back as fast as answers come and then pausing until the next second, so every
 * connection is in flight at once for the first part of each second — a closed loop with pauses, not an offered
 * rate. Here each request's latency counts from when it was due, not from when it went out, so a server that
 * falls behind is charged for the wait (no coordinated omission, Gil Tene's "How NOT to measure latency").
 */
export const openLoop = async (options: {
  origin: string;
  path: string;
  method: 'POST' | 'GET';
  agents: OpenLoopAgent[];
  rate: number;
  seconds: number;
  body?: string;
  /** Headers per request (e.g. a unique id); merged over the agent's. */
  requestHeaders?: (i: number) => Record<string, string>;
  onResponse?: (status: number, headers: Record<string, string | string[] | undefined>) => void;
}): Promise<OpenLoopResult> => {
  const clients = options.agents.map(() => new Client(options.origin, { pipelining: 1 }));
  const total = Math.round(options.rate * options.seconds);
  const intervalMs = 1000 / options.rate;
  const statuses = new Map<number, number>();
  const latenciesMs: number[] = [];
  const sendLags: number[] = [];
  let errors = 0;
  let lastAnswer = 0;
  const inFlight: Promise<void>[] = [];
  const t0 = performance.now() + 20;

  const fire = (i: number, due: number) => {
    sendLags.push(performance.now() - due);
    const agent = i % options.agents.length;
    const request = clients[agent]!.request({
      path: options.path,
      method: options.method,
      headers: { ...options.agents[agent]!.headers, ...options.requestHeaders?.(i) },
      ...(options.body !== undefined ? { body: options.body } : {}),
    }).then(
      async (res) => {
        await res.body.dump();
        const end = performance.now();
        lastAnswer = Math.max(lastAnswer, end);
        latenciesMs.push(end - due);
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        options.onResponse?.(res.statusCode, res.headers);
      },
      () => {
        errors++;
      },
    );
    inFlight.push(request);
  };

  await new Promise<void>((resolve) => {
    let next = 0;
    const tick = () => {
      const now = performance.now();
      while (next < total && t0 + next * intervalMs <= now) {
        fire(next, t0 + next * intervalMs);
        next++;
      }
      if (next >= total) return resolve();
      setTimeout(tick, Math.max(0, t0 + next * intervalMs - performance.now()));
    };
    setTimeout(tick, Math.max(0, t0 - performance.now()));
  });
  await Promise.all(inFlight);
  await Promise.all(clients.map((c) => c.close()));
  const lags = sendLags.sort((a, b) => a - b);
  return {
    scheduled: total,
    answered: latenciesMs.length,
    seconds: (lastAnswer - t0) / 1000,
    statuses,
    errors,
    latenciesMs,
    sendLagMs: {
      p99: lags[Math.max(0, Math.ceil(lags.length * 0.99) - 1)] ?? 0,
      max: lags[lags.length - 1] ?? 0,
    },
  };
};
