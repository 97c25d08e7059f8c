import { afterAll, beforeAll } from 'vitest';
import { startApp, type TestApp } from '../accounts/support';
import { priceTicker } from './price-ticks';

/** The app of {@link useTestApp}: a {@link TestApp} readable once `beforeAll` has started it, and its ticker. */
export interface SharedTestApp extends TestApp {
  /** Publishes a price tick into the app's market feed ({@link priceTicker}): `tick(symbol, price, quantity?)`. */
  tick: ReturnType<typeof priceTicker>;
}

/**
 * The real stack shared by the tests of one file: started (`startApp`) in a `beforeAll` registered by this call,
 * before the file's own hooks, and closed with its database and data directory in an `afterAll`. Every test file
 * that drives one app wrote these hooks and the ticker again; this is them once.
 *
 * Call it at the top level of the file; read the returned object's members (`app`, `runtime`, …) inside hooks and
 * tests only: before `beforeAll` has run there is no app and they throw. `start` is `startApp`'s options, or a
 * function that starts the app another way (`startBacktestApp`). `timeout` is the start hook's, in ms (default
 * 300 s: only a failed start reaches it, and on a loaded two-core machine the stack took over two minutes).
 */
export const useTestApp = (
  start: Parameters<typeof startApp>[0] | (() => Promise<TestApp>) = {},
  timeout = 300_000,
): SharedTestApp => {
  let started: TestApp | undefined;
  const current = (): TestApp => {
    if (!started) throw new Error('the shared test app is read before its beforeAll started it');
    return started;
  };
  beforeAll(async () => {
    started = await (typeof start === 'function' ? start() : startApp(start));
  }, timeout);
  afterAll(async () => {
    await started?.close();
  });
  return {
    get app() {
      return current().app;
    },
    get runtime() {
      return current().runtime;
    },
    get database() {
      return current().database;
    },
    get dataDir() {
      return current().dataDir;
    },
    get logs() {
      return current().logs;
    },
    stop: () => current().stop(),
    close: () => current().close(),
    tick: priceTicker(() => current().app.services.market!),
  };
};
