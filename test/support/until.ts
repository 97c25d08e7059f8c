/**
 * Polls `check` every `everyMs` (default 20 ms) until it holds; throws `Error("<what>: not met in <ms> ms")`
 * after `timeoutMs` (default 15 s). For conditions a test cannot await directly (a frame arriving, a fold).
 */
export const until = async (
  check: () => boolean | Promise<boolean>,
  options: { timeoutMs?: number; everyMs?: number; what?: string } = {},
): Promise<void> => {
  const { timeoutMs = 15_000, everyMs = 20, what = 'condition' } = options;
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not met in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
};
