import type { Performance } from '../../domain/metrics/performance';
import { type SessionPerformanceInput, sessionPerformance } from '../../projections/equity-rows-text';

/**
 * A session's results (`sessionPerformance`: its rows as COPY text read, then `domain/metrics/performance.ts`)
 * computed on a worker thread: a piscina task (see `metrics-pool.ts`). The same pure function as in process, so the
 * same figures.
 */
export default (input: SessionPerformanceInput): Performance => sessionPerformance(input);
