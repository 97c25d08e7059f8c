import { describe, expect, it } from 'vitest';
import { DomainError } from '../../domain/shared/errors';
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

/**
 * The ledger's `VALIDATION_ERROR` on an order's price or quantity (domain/wallet/decide.ts names the field in
 * `details.field`) is outside the filters `exchangeInfo` states: Binance's -1013 `Filter failure: PRICE_FILTER` or
 * `LOT_SIZE` (docs/binance-compatibility.md, "Filters"), which ccxt raises as InvalidOrder; any other field -1100.
 */
describe('toBinanceError of a refused field', () => {
  it.each([
    ['price', -1013, 'Filter failure: PRICE_FILTER. '],
    ['trigger_price', -1013, 'Filter failure: PRICE_FILTER. '],
    ['oco.stop_loss.trigger_price', -1013, 'Filter failure: PRICE_FILTER. '],
    ['take_profit.price', -1013, 'Filter failure: PRICE_FILTER. '],
    ['quantity', -1013, 'Filter failure: LOT_SIZE. '],
    ['time_in_force', -1100, 'Illegal characters found in a parameter. '],
  ])('%s: %i', (field, code, message) => {
    const e = toBinanceError(new DomainError('VALIDATION_ERROR', `${field} is refused`, { field }), 'order');
    expect([e.code, e.status, e.message]).toEqual([code, 400, `${message}${field} is refused`]);
  });
});
