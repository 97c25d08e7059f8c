/**
 * A stand-in for a value a `beforeAll` hook creates: a test file declares it at its top level (`const alice =
 * useTrader(t)`) and reads its members in hooks and tests as if it were the value. Each member read (`x.app`,
 * `x.close()`) is forwarded to what `current()` answers then; `current()` answers `undefined` while the hook has
 * not run, and the read then throws with `what` in its message, so a read too early fails loudly instead of seeing
 * `undefined`. The members of `now` need no hook (a ticker that itself reads the app late): they are answered at
 * once, so a file may destructure them at its top level.
 */
export const lateBound = <T extends object, N extends object = Record<never, never>>(
  what: string,
  current: () => T | undefined,
  now: N = {} as N,
): T & N =>
  new Proxy({} as T & N, {
    get: (_, key) => {
      if (Object.hasOwn(now, key)) return Reflect.get(now, key);
      const value = current();
      if (value !== undefined) return Reflect.get(value, key);
      // `await` and inspection probe `then` and symbols: they must see no such member, not an error.
      if (key === 'then' || typeof key === 'symbol') return undefined;
      throw new Error(`${what} is read before its beforeAll created it`);
    },
  });
