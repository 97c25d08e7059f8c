/**
 * Runs `drain` one at a time, coalescing wake-ups: a `pump()` while a drain runs makes exactly one more drain run
 * after it (so nothing committed meanwhile is missed), however many wake-ups came. `active()` false makes
 * `pump()` do nothing (the subscription ended). A failed drain is reported to `onError`; the next `pump()` tries
 * again. Used by the WebSocket channels that re-read a stream after each committed page.
 */
export const serialPump = (
  drain: () => Promise<void>,
  onError: (error: unknown) => void,
  active: () => boolean,
): (() => void) => {
  let draining = false;
  let again = false;
  const pump = (): void => {
    if (!active()) return;
    if (draining) {
      again = true;
      return;
    }
    draining = true;
    void drain()
      .catch(onError)
      .finally(() => {
        draining = false;
        if (again) {
          again = false;
          pump();
        }
      });
  };
  return pump;
};
