/**
 * An index of sets by key (listeners by symbol, streams by symbol, callbacks by listen key) that holds no empty
 * sets: {@link addToKeyedSet} makes a key's set on first use, {@link deleteFromKeyedSet} drops it with its last
 * member.
 */

/** Adds `value` to the set under `key` in `index`, making the set when the key has none. */
export const addToKeyedSet = <K, V>(index: Map<K, Set<V>>, key: K, value: V): void => {
  let set = index.get(key);
  if (!set) {
    set = new Set();
    index.set(key, set);
  }
  set.add(value);
};

/**
 * Takes `value` out of the set under `key` in `index` (nothing when absent) and drops the key once its set is empty.
 * It reads the set under `key` now, so a second call never drops a set made since for other members.
 */
export const deleteFromKeyedSet = <K, V>(index: Map<K, Set<V>>, key: K, value: V): void => {
  const set = index.get(key);
  set?.delete(value);
  if (set?.size === 0) index.delete(key);
};

/**
 * Drops `key` from `index` only while it still maps to `value` (the entry a caller made and holds); returns whether
 * it did. A stopper that holds its entry calls this, not `index.delete(key)`: called twice, or after its entry was
 * dropped and another made under the same key for new members, it leaves the newer entry in place.
 */
export const deleteIfCurrent = <K, V>(index: Map<K, V>, key: K, value: V): boolean => {
  if (index.get(key) !== value) return false;
  index.delete(key);
  return true;
};
