import { createHash } from 'node:crypto';
import type { RecordedEvent } from '../../ports/event-store';

/**
 * Tamper evidence for auditors (ARCHITECTURE §4, §17): each event's metadata carries `prev_hash` and `hash`,
 * a SHA-256 chain per stream. The hash covers, joined by `\n`:
 * `prev_hash, stream_id, revision, event_id, type, canonical(data), canonical(metadata without prev_hash/hash)`.
 * The PostgreSQL adapter computes the same formula inside its append function (`sha256()` in SQL) over the
 * canonical texts made here, so both adapters and `audit verify` agree byte for byte.
 */

/**
 * JSON with object keys sorted recursively (arrays keep their order), no whitespace. Survives a round trip
 * through PostgreSQL `jsonb` and back: `canonicalJson(JSON.parse(canonicalJson(x))) === canonicalJson(x)`.
 */
export const canonicalJson = (value: unknown): string => canonicalCopy(value).text;

/**
 * {@link canonicalJson}'s text together with the value it reads back as, without parsing it: the key-sorted copy the
 * text is made from is exactly `JSON.parse(text)` when everything in it is plain JSON (objects of `Object`'s
 * prototype or none, arrays, strings, booleans, null, finite numbers other than -0); `copy` is undefined when it is
 * not (a `Date`, a `toJSON`, a class instance, a non-finite number or -0, `undefined` or a function in an array, a
 * function or symbol as a value), where only a parse gives what the text holds. The append path uses it: parsing
 * back what was just serialised was ~2 % of the server's CPU per order (docs/benchmarks.md, "Trading", 2026-11-29).
 */
export const canonicalCopy = (value: unknown): { text: string; copy: unknown } => {
  const state = { exact: true };
  const copy = sortKeysExact(value, state);
  const text = JSON.stringify(copy);
  return { text, copy: state.exact ? copy : undefined };
};

const sortKeysExact = (value: unknown, state: { exact: boolean }): unknown => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || Object.is(value, -0)) state.exact = false;
    return value;
  }
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') state.exact = false;
      out[i] = sortKeysExact(v, state);
    }
    return out;
  }
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    if ((proto !== Object.prototype && proto !== null) || 'toJSON' in value) state.exact = false;
    if (value instanceof Date) return value;
    const out: Record<string, unknown> = {};
    for (const key of sortedKeys(Object.keys(value))) {
      const v = (value as Record<string, unknown>)[key];
      if (v === undefined) continue;
      // `__proto__` would set the copy's prototype rather than a key (canonicalJson's text loses it the same way).
      if (typeof v === 'function' || typeof v === 'symbol' || key === '__proto__') state.exact = false;
      out[key] = sortKeysExact(v, state);
    }
    return out;
  }
  // undefined, a function, a symbol or a bigint: left to JSON.stringify, as canonicalJson does.
  state.exact = false;
  return value;
};

/** Up to this many keys an object's keys are sorted by insertion, above it by `Array.prototype.sort`. */
const INSERTION_SORT_MAX = 32;

/**
 * `keys` sorted in place by UTF-16 code units, the order `Array.prototype.sort()` gives strings; an event's data
 * object (~30 keys) is sorted by insertion, about 1.7× as fast as the built-in sort with its default comparison
 * (~1.3 µs less per `OrderFilled`; issue 23, docs/benchmarks.md "Trading", 2026-11-29).
 */
const sortedKeys = (keys: string[]): string[] => {
  if (keys.length > INSERTION_SORT_MAX) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
};

/** Metadata as it enters the hash: everything but the chain fields themselves. */
export const hashableMetadata = (metadata: Record<string, unknown>): Record<string, unknown> => {
  const { prev_hash: _p, hash: _h, ...rest } = metadata;
  return rest;
};

/** Inputs of one link of the chain. `dataText`/`metadataText` are canonical JSON texts. */
export interface ChainLink {
  prevHash: string;
  streamId: string;
  revision: number;
  eventId: string;
  type: string;
  dataText: string;
  metadataText: string;
}

/** SHA-256 (lower-case hex) of one link; see the module comment for the exact byte layout. */
export const linkHash = (l: ChainLink): string =>
  createHash('sha256')
    .update(
      [l.prevHash, l.streamId, String(l.revision), l.eventId, l.type, l.dataText, l.metadataText].join('\n'),
    )
    .digest('hex');

/** A break found by {@link verifyChain}. */
export interface ChainBreak {
  streamId: string;
  revision: number;
  reason: 'hash_mismatch' | 'prev_hash_mismatch' | 'revision_gap';
  expected: string;
  actual: string;
}

/**
 * Recomputes the chain of one stream's events given in revision order from revision 0, a page at a time (so a
 * stream of millions of events is checked in the memory of one page): {@link ChainVerifier.next} takes the next
 * event and answers the first break, or null while every link holds.
 */
export class ChainVerifier {
  private prev = '';
  private expectedRevision = 0;
  private broken: ChainBreak | null = null;

  /** The first break so far (null: none). */
  get chainBreak(): ChainBreak | null {
    return this.broken;
  }

  /** Checks `e`, the event after the last one given; once broken, the first break stays the answer. */
  next(e: RecordedEvent): ChainBreak | null {
    if (this.broken) return this.broken;
    this.broken = this.check(e);
    return this.broken;
  }

  private check(e: RecordedEvent): ChainBreak | null {
    const prev = this.prev;
    const expectedRevision = this.expectedRevision;
    if (e.revision !== expectedRevision) {
      return {
        streamId: e.streamId,
        revision: e.revision,
        reason: 'revision_gap',
        expected: String(expectedRevision),
        actual: String(e.revision),
      };
    }
    if (e.metadata.prev_hash !== prev) {
      return {
        streamId: e.streamId,
        revision: e.revision,
        reason: 'prev_hash_mismatch',
        expected: prev,
        actual: e.metadata.prev_hash,
      };
    }
    const hash = linkHash({
      prevHash: prev,
      streamId: e.streamId,
      revision: e.revision,
      eventId: e.eventId,
      type: e.type,
      dataText: canonicalJson(e.data),
      metadataText: canonicalJson(hashableMetadata(e.metadata)),
    });
    if (hash !== e.metadata.hash) {
      return {
        streamId: e.streamId,
        revision: e.revision,
        reason: 'hash_mismatch',
        expected: hash,
        actual: e.metadata.hash,
      };
    }
    this.prev = hash;
    this.expectedRevision++;
    return null;
  }
}

/**
 * Recomputes the chain of one stream's events (in revision order, starting at revision 0) and returns the
 * first break, or `null` when every link holds.
 */
export const verifyChain = (events: readonly RecordedEvent[]): ChainBreak | null => {
  const verifier = new ChainVerifier();
  for (const e of events) if (verifier.next(e)) break;
  return verifier.chainBreak;
};
