import BigNumber from 'bignumber.js';
import { OrderedMap } from 'immutable';
import { dec } from '../trading/decimal';

/**
 * A lossless text form of an aggregate state, for snapshots (docs/architecture.md, "Snapshots"). Deciders' states
 * are trees of plain objects, arrays, strings, finite numbers, booleans and `null`, plus two kinds of values JSON
 * cannot carry: decimals (`bignumber.js`, the ledger's {@link dec}) and Immutable.js `OrderedMap`s (the wallet's
 * idempotency claims). Those are written as tagged objects — `{"$d":"12.5"}` (the exact digits, `-0` kept) and
 * `{"$om":[[key,value],…]}` (entries in their order) — and read back as the same values, so
 * `decodeState(encodeState(s))` is a state every function of the domain treats exactly like `s`.
 *
 * Key order of plain objects is kept (JSON keeps insertion order), because iteration order is behaviour (e.g. the
 * order in which `CancelAllOrders` cancels open orders). The text is deterministic: two states encode to the same
 * text exactly when they are equal in every respect the codec sees, which is how audits compare a snapshot with a
 * replay. Anything else in a state (a `Date`, a `Map`, `undefined`, `NaN`, `-0` as a number, a key starting with
 * `$`) throws a `TypeError` at encoding: a new kind of value must be taught here, never silently dropped.
 */
export const encodeState = (state: unknown): string => JSON.stringify(toJson(state, '$'));

/** The state {@link encodeState} wrote. Throws `SyntaxError`/`TypeError` on text it did not write. */
export const decodeState = <State>(text: string): State => fromJson(JSON.parse(text)) as State;

const toJson = (value: unknown, path: string): unknown => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || Object.is(value, -0)) throw new TypeError(`${path}: unencodable number`);
    return value;
  }
  if (BigNumber.isBigNumber(value)) {
    const d = value as BigNumber;
    return { $d: d.isZero() && d.isNegative() ? '-0' : d.toFixed() };
  }
  if (OrderedMap.isOrderedMap(value)) {
    const out: unknown[] = [];
    for (const [k, v] of (value as OrderedMap<unknown, unknown>).entries()) {
      out.push([toJson(k, `${path}.<key>`), toJson(v, `${path}[${String(k)}]`)]);
    }
    return { $om: out };
  }
  if (Array.isArray(value)) return value.map((v, i) => toJson(v, `${path}[${i}]`));
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw new TypeError(`${path}: unencodable object`);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k.startsWith('$')) throw new TypeError(`${path}.${k}: keys starting with $ are reserved`);
      if (v === undefined) throw new TypeError(`${path}.${k}: undefined is not encodable`);
      out[k] = toJson(v, `${path}.${k}`);
    }
    return out;
  }
  throw new TypeError(`${path}: unencodable ${typeof value}`);
};

const fromJson = (value: unknown): unknown => {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(fromJson);
  const o = value as Record<string, unknown>;
  if (typeof o.$d === 'string') return dec(o.$d);
  if (Array.isArray(o.$om)) {
    return OrderedMap((o.$om as [unknown, unknown][]).map(([k, v]) => [fromJson(k), fromJson(v)] as const));
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (k.startsWith('$')) throw new TypeError(`unknown tag ${k} in an encoded state`);
    out[k] = fromJson(v);
  }
  return out;
};
