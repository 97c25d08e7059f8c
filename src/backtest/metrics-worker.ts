import {
  computePerformance,
  type Performance,
  type PerformanceInput,
} from '../../domain/metrics/performance';

/**
 * A session's results (`domain/metrics/performance.ts`) computed on a worker thread: a piscina task (see
 * `metrics-pool.ts`). The same pure function as in process, so the same figures.
 */
export default (input: PerformanceInput): Performance => computePerformance(input);
