import { afterAll, beforeAll } from 'vitest';
import { registerAccount, startApp, type TestAccount, type TestApp } from '../accounts/support';
import { lateBound } from './late-bound';
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
  beforeAll(async () => {
    started = await (typeof start === 'function' ? start() : startApp(start));
  }, timeout);
  afterAll(async () => {
    await started?.close();
  });
  const app = lateBound('the shared test app', () => started);
  return lateBound('the shared test app', () => started, {
    tick: priceTicker(() => app.app.services.market!),
  });
};

/**
 * An account registered on the shared app `t` ({@link useTestApp}) in a `beforeAll` of this call, with no email
 * (`registerAccount`'s `plain`), after `tick` has set the prices the file's tests start from (each a
 * `[symbol, price, quantity]` row of {@link priceTicker}'s arguments). Read its members inside hooks and tests only.
 */
export const useAccount = (
  t: SharedTestApp,
  ticks: readonly (readonly [string, string, string?])[] = [],
): TestAccount => {
  let account: TestAccount | undefined;
  beforeAll(async () => {
    for (const [symbol, price, quantity] of ticks) t.tick(symbol, price, quantity);
    account = await registerAccount(t.app, {}, { plain: true });
  });
  return lateBound('the account', () => account);
};
