import { useEffect, useState } from 'preact/hooks';
import { dec, fmt, roundDown8 } from '../../../domain/trading/decimal';
import { feeFor } from '../../../domain/trading/fees';
import { checkQuantity } from '../../../domain/trading/quantity';
import { checkNotional } from '../../../domain/trading/risk';
import type { OrderBody, Pair, PlacedOrder } from '../api/contract';
import { request } from '../api/http';
import { baseAsset, lockAsset, pairMap, QUOTE } from '../api/pairs';
import { accountInfo, isMissingRoute, placeOrder } from '../api/venue';
import { ErrorNotice, TextField } from '../ui/components';
import { Num, Time } from '../ui/format';
import { useAsync, useChannel, useIdle } from '../ui/hooks';

const TYPES = [
  { value: 'market', label: 'Market' },
  { value: 'limit', label: 'Limit' },
  { value: 'stop_loss', label: 'Stop loss' },
  { value: 'take_profit', label: 'Take profit' },
] as const;
type OrderType = (typeof TYPES)[number]['value'];
type Side = 'buy' | 'sell';

/**
 * Whether the venue has `POST /trade/order/preview` (issue 21). Until it answers, the ticket estimates from the
 * current price and the fee rate; once the venue has the route, the ticket shows its answer instead, with no
 * change here (the first 404 "no route" switches this page load to the estimate).
 */
let previewRoute: 'unknown' | 'present' | 'absent' = 'unknown';

const isDecimal = (v: string) => /^(\d+(\.\d*)?|\.\d+)$/.test(v.trim());

/** The hints of the form: the pair's filters checked with the venue's own functions (domain/trading). */
const checks = (
  pair: Pair | undefined,
  quantity: string,
  referencePrice: string | undefined,
): { field: string; message: string }[] => {
  if (!pair) return [];
  const out: { field: string; message: string }[] = [];
  if (pair.status !== 'active')
    out.push({
      field: 'symbol',
      message: `${pair.symbol} is ${pair.status}: the venue refuses orders on it`,
    });
  if (quantity.trim() === '') return out;
  if (!isDecimal(quantity))
    return [...out, { field: 'quantity', message: 'quantity must be a positive decimal' }];
  const filters = {
    symbol: pair.symbol,
    baseAsset: pair.base_asset,
    status: pair.status,
    minQty: pair.min_qty,
    stepSize: pair.step_size,
    minNotional: pair.min_notional,
  };
  const q = checkQuantity(dec(quantity), filters);
  if (q) out.push({ field: 'quantity', message: q.message });
  if (!q && referencePrice && isDecimal(referencePrice) && dec(referencePrice).gt(0)) {
    const n = checkNotional(dec(quantity), dec(referencePrice), filters);
    if (n) out.push({ field: 'quantity', message: n.message });
  }
  return out;
};

/**
 * The order ticket (docs/dashboard.md "Order ticket"): the four order types of the spec, the pair's
 * `min_qty`/`step_size`/`min_notional` checked as you type (with the venue's own checks), a preview of the fill,
 * and the venue's answer (the order, or its error exactly as the venue gave it).
 */
export const OrderTicket = ({ initialSymbol = 'BTCUSDT' }: { initialSymbol?: string }) => {
  const [symbol, setSymbol] = useState(initialSymbol);
  const [side, setSide] = useState<Side>('buy');
  const [type, setType] = useState<OrderType>('market');
  const [quantity, setQuantity] = useState('');
  const [price, setPrice] = useState('');
  const [trigger, setTrigger] = useState('');
  const [live, setLive] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<PlacedOrder | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [preview, setPreview] = useState<Record<string, unknown> | null>(null);
  const [previewError, setPreviewError] = useState<unknown>(null);
  useEffect(() => setSymbol(initialSymbol), [initialSymbol]);

  // After the page's first figures: the ticket is not what a person reads first.
  const idle = useIdle();
  const pairsRead = useAsync(() => (idle ? pairMap() : new Promise<never>(() => {})), [idle]);
  const info = useAsync(() => (idle ? accountInfo() : new Promise<never>(() => {})), [idle]);
  const upper = symbol.trim().toUpperCase();
  const pair = pairsRead.data?.get(upper);
  useEffect(() => setLive(undefined), [upper]);
  useChannel(pair ? { channel: 'ticker', symbol: upper } : null, (m) => {
    if (m.channel === 'ticker' && 'price' in m.data) setLive(m.data.price as string);
  });

  const referencePrice = type === 'limit' ? price : type === 'market' ? live : trigger;
  const hints = checks(pair, quantity, referencePrice);
  const body: OrderBody = {
    symbol: upper,
    side,
    type,
    quantity: quantity.trim(),
    ...(type === 'limit' ? { price: price.trim() } : {}),
    ...(type === 'stop_loss' || type === 'take_profit' ? { trigger_price: trigger.trim() } : {}),
  };
  const complete =
    pair !== undefined &&
    isDecimal(quantity) &&
    (type !== 'limit' || isDecimal(price)) &&
    (type === 'market' || type === 'limit' || isDecimal(trigger));
  const bodyKey = JSON.stringify(body);

  // The venue's preview when it has one (issue 21), debounced while typing.
  useEffect(() => {
    setPreview(null);
    setPreviewError(null);
    if (!complete || previewRoute === 'absent') return;
    const t = setTimeout(() => {
      request<Record<string, unknown>>('POST', '/trade/order/preview', { body }).then(
        (r) => {
          previewRoute = 'present';
          setPreview(r);
        },
        (e: unknown) => {
          if (isMissingRoute(e)) {
            previewRoute = 'absent';
            setPreview(null);
          } else setPreviewError(e);
        },
      );
    }, 300);
    return () => clearTimeout(t);
  }, [bodyKey, complete]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult(await placeOrder(body));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const feeRate = info.data?.fee_rate;
  const estimate =
    complete && previewRoute !== 'present' && feeRate && referencePrice && isDecimal(referencePrice)
      ? (() => {
          const notional = roundDown8(dec(quantity).times(referencePrice));
          const fee = feeFor(notional, dec(feeRate));
          const total = side === 'buy' ? notional.plus(fee) : notional.minus(fee);
          return { notional: fmt(notional), fee: fmt(fee), total: fmt(total) };
        })()
      : null;

  return (
    <form class="ticket" onSubmit={submit} aria-label="Order ticket" data-testid="ticket">
      <label>
        Pair
        <input
          name="symbol"
          list="ticket-pairs"
          value={symbol}
          autoComplete="off"
          spellcheck={false}
          onInput={(e) => setSymbol(e.currentTarget.value)}
          aria-invalid={pairsRead.data && !pair ? 'true' : undefined}
        />
        <datalist id="ticket-pairs">
          {[...(pairsRead.data?.keys() ?? [])].map((s) => (
            <option key={s} value={s} />
          ))}
        </datalist>
      </label>
      <p class="live-price">
        <span class="muted small">Live price</span> <Num value={live} unit={QUOTE} />
      </p>
      {pairsRead.data && !pair ? <p class="hint">No pair {upper} on the venue.</p> : null}
      <fieldset class="segmented sides">
        <legend class="sr-only">Side</legend>
        {(['buy', 'sell'] as const).map((s) => (
          <label key={s} class={`${side === s ? 'on' : ''} ${s}`}>
            <input type="radio" name="side" value={s} checked={side === s} onChange={() => setSide(s)} />
            {s === 'buy' ? 'Buy' : 'Sell'}
          </label>
        ))}
      </fieldset>
      <label>
        Type
        <select name="type" value={type} onChange={(e) => setType(e.currentTarget.value as OrderType)}>
          {TYPES.map((t) => (
            <option key={t.value} value={t.value}>
              {t.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Quantity {pair ? <span class="muted small">({pair.base_asset})</span> : null}
        <input
          name="quantity"
          inputMode="decimal"
          autoComplete="off"
          value={quantity}
          onInput={(e) => setQuantity(e.currentTarget.value)}
          aria-invalid={hints.some((h) => h.field === 'quantity') ? 'true' : undefined}
          aria-describedby="ticket-filters"
        />
      </label>
      {type === 'limit' ? (
        <TextField
          label="Limit price (USDT)"
          name="price"
          inputMode="decimal"
          value={price}
          onValue={setPrice}
        />
      ) : null}
      {type === 'stop_loss' || type === 'take_profit' ? (
        <TextField
          label="Trigger price (USDT)"
          name="trigger_price"
          inputMode="decimal"
          value={trigger}
          onValue={setTrigger}
        />
      ) : null}
      {pair ? (
        <p id="ticket-filters" class="muted small">
          min qty {pair.min_qty.replace(/\.?0+$/, '')} {pair.base_asset} · step{' '}
          {pair.step_size.replace(/\.?0+$/, '')} {pair.base_asset} · min value{' '}
          {pair.min_notional.replace(/\.?0+$/, '')} {QUOTE}
        </p>
      ) : null}
      {hints.length > 0 ? (
        <ul class="hints" data-testid="ticket-hints">
          {hints.map((h) => (
            <li key={h.message}>{h.message}</li>
          ))}
        </ul>
      ) : null}
      {preview ? (
        <dl class="preview" data-testid="ticket-preview" data-source="venue">
          <dt class="caption">Preview (the venue's answer)</dt>
          {Object.entries(preview)
            .filter(([, v]) => v === null || typeof v !== 'object')
            .map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>
                  <PreviewValue field={k} value={v} preview={preview} />
                </dd>
              </div>
            ))}
        </dl>
      ) : estimate ? (
        <dl class="preview" data-testid="ticket-preview" data-source="estimate">
          <div>
            <dt>
              Value at{' '}
              {type === 'market' ? 'the current price' : type === 'limit' ? 'the limit' : 'the trigger'}
            </dt>
            <dd>
              <Num value={estimate.notional} unit={QUOTE} />
            </dd>
          </div>
          <div>
            <dt>Fee ({dec(feeRate!).times(100).toFixed()} %)</dt>
            <dd>
              <Num value={estimate.fee} unit={QUOTE} />
            </dd>
          </div>
          <div>
            <dt>{side === 'buy' ? 'Total cost' : 'Proceeds'}</dt>
            <dd>
              <Num value={estimate.total} unit={QUOTE} />
            </dd>
          </div>
          <p class="muted small">
            An estimate;{' '}
            {type === 'limit' ? 'a limit order fills at its limit or better' : 'the fill adds slippage'},
            decided by the venue when it fills.
          </p>
        </dl>
      ) : null}
      <ErrorNotice error={previewError} title="Preview" />
      <button type="submit" class={`primary ${side}`} disabled={busy || !complete}>
        {busy
          ? 'Sending…'
          : `${side === 'buy' ? 'Buy' : 'Sell'} ${quantity || ''} ${pair?.base_asset ?? ''}`.trim()}
      </button>
      <ErrorNotice error={error} title="The venue refused the order" />
      {result ? <OrderResult order={result} lockUnit={lockAsset(result.side, result.symbol)} /> : null}
    </form>
  );
};

/**
 * The unit of a figure of the venue's preview (`orderPreviewResponse` of src/contract/trading.ts): quantities in
 * the pair's base asset, prices and amounts in USDT, the lock in its `lock_asset`, the fee rate a fraction of the
 * notional; undefined for a field that is no figure.
 */
const previewUnit = (field: string, preview: Record<string, unknown>): string | undefined => {
  const base = typeof preview['symbol'] === 'string' ? baseAsset(preview['symbol']) : undefined;
  if (field === 'quantity' || field === 'executed_quantity') return base;
  if (field === 'locked_amount')
    return typeof preview['lock_asset'] === 'string' ? preview['lock_asset'] : undefined;
  if (field === 'slippage_pct') return '%';
  if (field === 'fee_rate') return 'fraction';
  return PREVIEW_USDT.has(field) ? QUOTE : undefined;
};
const PREVIEW_USDT = new Set([
  'price',
  'trigger_price',
  'executed_price',
  'reference_price',
  'notional',
  'fee',
  'total_cost',
]);

/** One value of the venue's preview: a figure with its unit, a time, or the value as sent. */
const PreviewValue = ({
  field,
  value,
  preview,
}: {
  field: string;
  value: unknown;
  preview: Record<string, unknown>;
}) => {
  if (value === null) return <>—</>;
  const unit = previewUnit(field, preview);
  if (unit !== undefined && typeof value === 'string') return <Num value={value} unit={unit} />;
  if (field.endsWith('_at') && typeof value === 'string') return <Time iso={value} />;
  return <>{String(value)}</>;
};

/** The venue's answer to a placed order; `lockUnit` names the asset of a pending order's lock. */
const OrderResult = ({ order, lockUnit }: { order: PlacedOrder; lockUnit: string | undefined }) => (
  <div class="notice ok" role="status" data-testid="order-result" data-status={order.status}>
    {'executed_price' in order ? (
      <>
        Filled {order.side} <Num value={order.executed_quantity} unit={baseAsset(order.symbol)} />{' '}
        {order.symbol} at <Num value={order.executed_price} unit={QUOTE} /> (slippage{' '}
        <Num value={order.slippage_pct} unit="%" />, fee <Num value={order.fee} unit={QUOTE} />, total{' '}
        <Num value={order.total_cost} unit={QUOTE} />)
      </>
    ) : (
      <>
        Order {order.status}: {order.side} <Num value={order.quantity} unit={baseAsset(order.symbol)} />{' '}
        {order.symbol}
        {order.price ? (
          <>
            {' '}
            at <Num value={order.price} unit={QUOTE} />
          </>
        ) : null}
        {order.trigger_price ? (
          <>
            {' '}
            trigger <Num value={order.trigger_price} unit={QUOTE} />
          </>
        ) : null}
        , locked <Num value={order.locked_amount} unit={lockUnit} />
      </>
    )}
  </div>
);
