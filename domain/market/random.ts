/**
 * Deterministic pseudo-randomness for replay paths, synthetic order books and the synthetic walk: the same
 * seed always gives the same sequence (ARCHITECTURE §7: "deterministic intra-candle ticks", "built
 * deterministically"). Not for anything secret.
 */

/** 32-bit FNV-1a hash of a string, mixed with optional integer salts. */
export const hash32 = (text: string, ...salts: number[]): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  for (const salt of salts) {
    // Mix both 32-bit halves of the salt (timestamps exceed 2^32).
    h ^= salt >>> 0;
    h = Math.imul(h, 0x01000193);
    h ^= Math.floor(salt / 4294967296) >>> 0;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
};

/** Mulberry32: a small, fast, seeded generator of floats in [0, 1). */
export const mulberry32 = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};
