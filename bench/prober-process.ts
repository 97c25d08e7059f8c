import { fork } from 'node:child_process';
import { Agent } from 'undici';
import { countsOf, emptyRecord, type ProberCounts, type ProberRecord, startProber } from './prober';
import { venueClient } from './venue-client';

/** The parent's orders to a prober process. */
type ToProber = { start: { base: string; keys: string[]; every: number } } | 'mark' | 'stop';
/** The prober process's answers. */
type FromProber = { started: true } | { counts: ProberCounts } | { stopped: ProberRecord };

/**
 * The prober of bench/prober.ts ({@link startProber}: open loop, a `GET /market/price/BTCUSDT` and a market order in
 * turn every `every` ms, over `keys`, each timed from when it was due) in its own Node process with its own HTTP
 * connections, as a separate agent would be: the bench's own work (driving backtest batches, parsing their answers,
 * sampling /proc) cannot delay the prober's timers or its reads of the answers. `base` is the venue's origin
 * (`http://127.0.0.1:PORT`). Resolves once the prober's first request is due. `mark()` answers how many answers of
 * each kind it has so far and the statuses so far (to split phases: the latencies from that index on are the next phase's); `stop()` waits
 * for the requests in flight and answers everything it recorded (ms from when each request was due). The process
 * exits after `stop()`; a process that fails to start or exits before it answers rejects the pending call.
 */
export const startProberProcess = async (base: string, keys: readonly string[], every: number) => {
  const child = fork(import.meta.filename, [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // The parent asks one thing at a time and IPC keeps order, so the next message is the answer to the one ask.
  let pending: { resolve: (m: FromProber) => void; reject: (e: Error) => void } | undefined;
  let failed: Error | undefined;
  const fail = (error: Error) => {
    failed ??= error;
    pending?.reject(failed);
    pending = undefined;
  };
  child.on('message', (m: FromProber) => {
    pending?.resolve(m);
    pending = undefined;
  });
  child.once('error', fail);
  // 'close' comes after the IPC channel is drained, so no answer still in it is lost to the failure.
  child.once('close', (code, signal) => fail(new Error(`the prober process exited with ${signal ?? code}`)));
  const ask = (order: ToProber): Promise<FromProber> => {
    if (failed) return Promise.reject(failed);
    return new Promise<FromProber>((resolve, reject) => {
      pending = { resolve, reject };
      child.send(order);
    });
  };
  await ask({ start: { base, keys: [...keys], every } });
  const startedAt = performance.now();
  return {
    /** `performance.now()` of this process when the prober started. */
    startedAt,
    async mark(): Promise<ProberCounts> {
      const m = await ask('mark');
      return (m as { counts: ProberCounts }).counts;
    },
    async stop(): Promise<ProberRecord> {
      const m = await ask('stop');
      return (m as { stopped: ProberRecord }).stopped;
    },
  };
};

/** The prober process's side: waits for `start`, then answers `mark` and `stop` (and exits). */
const serve = () => {
  let prober: ReturnType<typeof startProber> | undefined;
  let dispatcher: Agent | undefined;
  const send = (m: FromProber) => process.send!(m);
  // The bench that started this process is gone (it crashed or was killed before `stop`): stop probing with it.
  process.on('disconnect', () => process.exit(0));
  process.on('message', async (m: ToProber) => {
    if (m === 'stop') {
      const record = prober ? await prober.stop() : emptyRecord();
      await dispatcher?.close();
      // Disconnect only once the answer is written: a large record (tens of thousands of latencies) is still in the
      // channel's buffer when send() returns, and a disconnect then drops it.
      process.send!({ stopped: record } satisfies FromProber, () => process.disconnect());
    } else if (m === 'mark') {
      send({ counts: countsOf(prober?.record ?? emptyRecord()) });
    } else {
      dispatcher = new Agent({ connections: 16, keepAliveTimeout: 30_000 });
      const { call } = venueClient(m.start.base, dispatcher);
      prober = startProber(call, m.start.keys, m.start.every);
      send({ started: true });
    }
  });
};

if (process.argv[1] === import.meta.filename && process.send) serve();
