import type { z } from 'zod';
import type { OrderInput } from '../application/trading';
import type { placeOrderBody } from '../contract/trading';
import { decimalText } from '../trading/present';

/**
 * An order body as the use cases take it (`OrderInput`): the wire's snake_case fields, decimals sent as JSON numbers
 * read to 8 places and strings kept as sent (the decider validates them). One parser for the live order, the
 * backtest sandbox's and a historical battle's.
 */
export const orderInputOf = (b: z.output<typeof placeOrderBody>): OrderInput => ({
  symbol: b.symbol,
  side: b.side,
  type: b.type,
  quantity: decimalText(b.quantity),
  price: b.price == null ? null : decimalText(b.price),
  triggerPrice: b.trigger_price == null ? null : decimalText(b.trigger_price),
});
