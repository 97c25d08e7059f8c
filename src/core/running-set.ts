/**
 * The running followers of a hub (wallet stream followers, portfolio channel followers): each is kept in a set
 * while it runs, so that news reaches it and the hub's close stops it.
 */

/** Something running that stops (a follower of a stream); stopping twice is harmless. */
export interface Stoppable {
  stop(): void;
}

/** Adds `item` to `running` and returns the function that stops it and takes it out again (its unsubscribe). */
export const keepRunning = <T extends Stoppable>(running: Set<T>, item: T): (() => void) => {
  running.add(item);
  return () => {
    item.stop();
    running.delete(item);
  };
};

/** Stops every item of `running` and empties the set (the hub's close). */
export const stopAll = (running: Set<Stoppable>): void => {
  for (const item of running) item.stop();
  running.clear();
};
