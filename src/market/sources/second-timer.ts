/**
 * Runs `task` just after every wall-clock second boundary (the replay and the synthetic walk emit one tick per
 * second, so a tick reaches subscribers within a few milliseconds of its timestamp instead of waiting for a
 * polling period). With `periodMs` it simply runs every `periodMs` (tests driving a fake clock).
 */
export const everySecond = (task: () => void, periodMs?: number): { stop(): void } => {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  if (periodMs !== undefined) {
    timer = setInterval(task, periodMs);
    timer.unref();
    return {
      stop() {
        clearInterval(timer);
      },
    };
  }
  const arm = () => {
    if (stopped) return;
    timer = setTimeout(
      () => {
        task();
        arm();
      },
      1001 - (Date.now() % 1000),
    );
    timer.unref();
  };
  arm();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
};

/**
 * The `status()` of a source that ticks every second through {@link everySecond} (the files replay, the synthetic
 * walk): ok while it has `symbols`, its timer is `running` and its last tick (`lastTickAt`, ms; 0: none yet) is
 * under 10 s old; the source's own `extra` fields stand between the symbol count and the last tick's age.
 */
export const tickingStatus = <Extra extends object>(
  symbols: number,
  running: boolean,
  lastTickAt: number,
  extra: Extra,
) => {
  const age = lastTickAt ? Date.now() - lastTickAt : undefined;
  return {
    ok: symbols > 0 && running && (age === undefined || age < 10_000),
    symbols,
    ...extra,
    last_tick_age_ms: age ?? null,
  };
};
