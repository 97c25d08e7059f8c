import { canonicalJson } from './hash-chain';

/**
 * `NewEvent.dataText` (ports/event-store.ts): an event's whole data as its canonical JSON (`canonicalJson`, what the
 * hash chain covers), UTF-8 encoded where the event was decided (a backtest batch's stepping thread, issue 24), and
 * read back as text by the adapters that need one.
 */
const encoder = new TextEncoder();

/** `data`'s canonical JSON as UTF-8 bytes. */
export const encodeDataText = (data: unknown): Uint8Array => encoder.encode(canonicalJson(data));

/** The text of {@link encodeDataText}'s bytes (read in place: the bytes are not copied). */
export const decodeDataText = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
