import { DomainError } from '../shared/errors';

/**
 * A client order id's shape: 1 to 36 characters of `a-z A-Z 0-9 - _ .`, Binance's `newClientOrderId` rule
 * (Spot API "New order": `^[a-zA-Z0-9-_.]{1,36}$`), so one id works at every door.
 */
export const CLIENT_ORDER_ID_PATTERN = /^[a-zA-Z0-9-_.]{1,36}$/;

/**
 * A client's id sent in `field`: `undefined` when none was sent (absent or empty), else the id as sent when it
 * matches {@link CLIENT_ORDER_ID_PATTERN}, else `VALIDATION_ERROR` naming the field and the pattern.
 */
const sentId = (value: string | null | undefined, field: string): string | undefined => {
  if (value === null || value === undefined || value === '') return undefined;
  if (!CLIENT_ORDER_ID_PATTERN.test(value)) {
    throw new DomainError(
      'VALIDATION_ERROR',
      `${field} must be 1 to 36 characters of letters, digits, "-", "_" or "."`,
      { field, pattern: CLIENT_ORDER_ID_PATTERN.source },
    );
  }
  return value;
};

/**
 * The client order id of a new order (docs/trading-rules.md, "Client order ids"): `null` when none was sent (absent
 * or empty), else the id as sent. Throws `VALIDATION_ERROR` (field `client_order_id`) when it does not match
 * {@link CLIENT_ORDER_ID_PATTERN}, and `CONFLICT` 409 (`details.reason = 'duplicate_client_order_id'`, the open
 * order's `order_id`) when an open order of the wallet already carries it: as on Binance, an id is unique among the
 * wallet's open orders and free again once that order is filled, cancelled or expired.
 */
export const clientOrderIdOf = (
  value: string | null | undefined,
  openOrders: Readonly<Record<string, { orderId: string; clientOrderId: string | null }>>,
): string | null => {
  const id = sentId(value, 'client_order_id');
  if (id === undefined) return null;
  for (const open of Object.values(openOrders)) {
    if (open.clientOrderId === value) {
      throw new DomainError('CONFLICT', `an open order of this wallet already has client_order_id ${value}`, {
        reason: 'duplicate_client_order_id',
        field: 'client_order_id',
        order_id: open.orderId,
      });
    }
  }
  return id;
};

/**
 * The client's id of a new order list (an OCO's `list_client_order_id`, Binance `listClientOrderId`): `undefined`
 * when none was sent (absent or empty), else the id as sent. Same pattern as an order's, else `VALIDATION_ERROR`
 * (field `list_client_order_id`). Not required unique: a query by it names the newest list with it, as a reused
 * client order id names its newest order.
 */
export const listClientOrderIdOf = (value: string | null | undefined): string | undefined =>
  sentId(value, 'list_client_order_id');
