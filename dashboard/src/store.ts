import { useEffect, useState } from 'preact/hooks';

/** A value that components follow: `get`, `set`, and `subscribe` (returns the unsubscribe). */
export interface Store<T> {
  get(): T;
  set(next: T | ((current: T) => T)): void;
  subscribe(listener: (value: T) => void): () => void;
}

/** A {@link Store} holding `initial`. */
export const createStore = <T>(initial: T): Store<T> => {
  let value = initial;
  const listeners = new Set<(value: T) => void>();
  return {
    get: () => value,
    set(next) {
      const v = typeof next === 'function' ? (next as (current: T) => T)(value) : next;
      if (Object.is(v, value)) return;
      value = v;
      for (const l of [...listeners]) l(value);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
};

/** The store's value, re-rendering the component when it changes. */
export const useStore = <T>(store: Store<T>): T => {
  const [value, setValue] = useState(store.get());
  useEffect(() => {
    setValue(store.get());
    return store.subscribe(setValue);
  }, [store]);
  return value;
};
