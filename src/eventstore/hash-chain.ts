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
export const canonicalJson = (value: unknown): string => JSON.stringify(sortKeys(value));

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
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
 * Recomputes the chain of one stream's events (in revision order, starting at revision 0) and returns the
 * first break, or `null` when every link holds.
 */
export const verifyChain = (events: readonly RecordedEvent[]): ChainBreak | null => {
  let prev = '';
  let expectedRevision = 0;
  for (const e of events) {
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
    prev = hash;
    expectedRevision++;
  }
  return null;
};
