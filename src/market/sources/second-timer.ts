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
