import { describe, expect, it } from 'vitest';
import { toBinanceError } from '../../src/binance/errors';
import { DatabaseUnavailableError } from '../../src/db/connection-errors';

/**
 * The Binance door's answer when the database is away (docs/binance-compatibility.md, "Errors"): a write it could
 * not confirm either way is Binance's -1007 "execution status unknown" with the advice this door can follow (look
 * the order up by its client order id: the door takes no idempotency key); any other outage is -1000, both 503.
 */
describe('toBinanceError with the database away', () => {
  it('answers a write of unknown outcome as -1007 and tells the client to look the order up first', () => {
    const e = toBinanceError(new DatabaseUnavailableError('commit not confirmed', 2, true), 'order');
    expect([e.code, e.status]).toEqual([-1007, 503]);
    expect(e.message).toMatch(/execution status unknown/);
    expect(e.message).toMatch(/origClientOrderId/);
    expect(e.message).not.toMatch(/Idempotency-Key/);
  });

  it('answers any other outage as -1000 503', () => {
    const e = toBinanceError(new DatabaseUnavailableError('no connection', 1, false), 'order');
    expect([e.code, e.status]).toEqual([-1000, 503]);
  });
});
