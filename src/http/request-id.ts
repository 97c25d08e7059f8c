import { randomFillSync } from 'node:crypto';

const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** Ids drawn per refill of the random pool (16 bytes each). */
const POOL_IDS = 256;

/**
 * A maker of request ids: random (version 4) UUIDs in their 36-character text, as `crypto.randomUUID()` makes
 * them, from a pool of random bytes refilled every 256 ids (as `randomUUID`'s own cache is). Each id is written
 * into one reused buffer and read out as one string: `randomUUID` builds its text from 20 concatenated pieces,
 * ~0.6 kB allocated per request (docs/benchmarks.md "Trading", issue 23), this ~60 bytes.
 */
export const requestIdMaker = (): (() => string) => {
  const pool = Buffer.allocUnsafe(16 * POOL_IDS);
  let at = pool.length;
  const text = Buffer.allocUnsafe(36);
  return () => {
    if (at === pool.length) {
      randomFillSync(pool);
      at = 0;
    }
    let o = 0;
    for (let i = 0; i < 16; i++) {
      let b = pool[at + i]!;
      // RFC 9562 §5.4: the version (4) in byte 6's high nibble, the variant (0b10) in byte 8's top bits.
      if (i === 6) b = (b & 0x0f) | 0x40;
      else if (i === 8) b = (b & 0x3f) | 0x80;
      if (i === 4 || i === 6 || i === 8 || i === 10) text[o++] = 0x2d;
      text[o++] = HEX[b >> 4]!;
      text[o++] = HEX[b & 0x0f]!;
    }
    at += 16;
    return text.toString('latin1', 0, 36);
  };
};
