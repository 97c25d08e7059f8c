/**
 * Bit packing of non-negative integers at a fixed width per column (0–64 bits), least significant bit first: the
 * candle store's columns are small integers (price moves in ticks, volumes in lot steps), and a column whose values
 * fit in 13 bits costs 13 bits a value, not 32 or 64. Values up to 2^53 travel as numbers; wider ones as bigints
 * (a column is one or the other).
 */

const PIECE = 24;
const PIECE_SIZE = 2 ** PIECE;

/** Bits needed for `max` (0 for 0). */
export const bitWidth = (max: number): number => {
  let width = 0;
  while (width < 64 && 2 ** width <= max) width++;
  return width;
};

/** Bits needed for a bigint `max`. */
export const bigBitWidth = (max: bigint): number => (max <= 0n ? 0 : max.toString(2).length);

/** Appends bit-packed values to a growing byte buffer. */
export class BitWriter {
  private bytes = new Uint8Array(4096);
  private length = 0;
  private acc = 0;
  private bits = 0;

  private ensure(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const next = new Uint8Array(Math.max(this.bytes.length * 2, this.length + extra));
    next.set(this.bytes.subarray(0, this.length));
    this.bytes = next;
  }

  private flush(): void {
    while (this.bits >= 8) {
      this.bytes[this.length++] = this.acc & 0xff;
      this.acc >>>= 8;
      this.bits -= 8;
    }
  }

  /** Writes the low `width` bits of a non-negative safe integer. */
  write(value: number, width: number): void {
    this.ensure(8);
    let v = value;
    let w = width;
    while (w > 0) {
      const take = Math.min(w, PIECE);
      const piece = take === PIECE ? v % PIECE_SIZE : v % 2 ** take;
      this.acc = (this.acc | (piece << this.bits)) >>> 0;
      this.bits += take;
      this.flush();
      v = Math.floor(v / PIECE_SIZE);
      w -= take;
    }
  }

  /** Writes `count` values of `width` bits (NaN written as 0): the hot loop of encoding a column. */
  writeMany(values: Float64Array, width: number, count = values.length): void {
    if (width === 0) return;
    if (width > PIECE) {
      for (let i = 0; i < count; i++) {
        const v = values[i]!;
        this.write(Number.isNaN(v) ? 0 : v, width);
      }
      return;
    }
    this.ensure(Math.ceil((count * width) / 8) + 8);
    const bytes = this.bytes;
    let length = this.length;
    let acc = this.acc;
    let bits = this.bits;
    for (let i = 0; i < count; i++) {
      const v = values[i]!;
      acc = (acc | ((Number.isNaN(v) ? 0 : v) << bits)) >>> 0;
      bits += width;
      while (bits >= 8) {
        bytes[length++] = acc & 0xff;
        acc >>>= 8;
        bits -= 8;
      }
    }
    this.length = length;
    this.acc = acc;
    this.bits = bits;
  }

  /** Writes the low `width` bits of a non-negative bigint. */
  writeBig(value: bigint, width: number): void {
    let v = value;
    let w = width;
    while (w > 0) {
      const take = Math.min(w, PIECE);
      this.write(Number(v & BigInt(2 ** take - 1)), take);
      v >>= BigInt(take);
      w -= take;
    }
  }

  /** Pads to a whole byte. */
  align(): void {
    if (this.bits > 0) this.write(0, 8 - this.bits);
  }

  /** Appends raw bytes (after aligning). */
  raw(data: Uint8Array): void {
    this.align();
    this.ensure(data.length);
    this.bytes.set(data, this.length);
    this.length += data.length;
  }

  /** The bytes written, aligned to a whole byte. */
  finish(): Uint8Array {
    this.align();
    return this.bytes.slice(0, this.length);
  }

  /** Bytes written so far (after aligning). */
  get size(): number {
    return this.length + (this.bits > 0 ? 1 : 0);
  }
}

/** Reads values packed by {@link BitWriter}. */
export class BitReader {
  private position: number;

  constructor(
    private readonly bytes: Uint8Array,
    byteOffset = 0,
  ) {
    this.position = byteOffset * 8;
  }

  /** The byte offset after the last bit read, rounded up. */
  get byteOffset(): number {
    return Math.ceil(this.position / 8);
  }

  /** The bit position of the next value. */
  get bitPosition(): number {
    return this.position;
  }

  /** Moves to bit `position` (the next value is read from there). */
  seek(position: number): void {
    this.position = position;
  }

  /** Skips to the next whole byte. */
  align(): void {
    this.position = Math.ceil(this.position / 8) * 8;
  }

  /** Up to 24 bits, from any bit position (reads 4 bytes around it; the buffer may end sooner). */
  private piece(width: number): number {
    const at = this.position >>> 3;
    const shift = this.position & 7;
    const b = this.bytes;
    const word =
      (b[at]! | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16) | ((b[at + 3] ?? 0) << 24)) >>> 0;
    this.position += width;
    return (word >>> shift) & (width === 32 ? 0xffffffff : (1 << width) - 1);
  }

  /** One value of `width` bits (≤ 53) as a number. */
  read(width: number): number {
    if (width <= PIECE) return width === 0 ? 0 : this.piece(width);
    let value = 0;
    let scale = 1;
    let w = width;
    while (w > 0) {
      const take = Math.min(w, PIECE);
      value += this.piece(take) * scale;
      scale *= PIECE_SIZE;
      w -= take;
    }
    return value;
  }

  /** One value of `width` bits (any width) as a bigint. */
  readBig(width: number): bigint {
    let value = 0n;
    let shift = 0n;
    let w = width;
    while (w > 0) {
      const take = Math.min(w, PIECE);
      value |= BigInt(this.piece(take)) << shift;
      shift += BigInt(take);
      w -= take;
    }
    return value;
  }

  /**
   * `count` values of `width` bits into `out` from `start`: the hot loop of decoding a column, kept free of calls
   * up to 48 bits.
   */
  readMany(width: number, count: number, out: Float64Array, start = 0): void {
    if (width === 0) {
      out.fill(0, start, start + count);
      return;
    }
    const b = this.bytes;
    if (width > PIECE) {
      if (width > 2 * PIECE) {
        for (let i = 0; i < count; i++) out[start + i] = this.read(width);
        return;
      }
      // 25–48 bits (wide volumes): two pieces a value, inline.
      const highMask = (1 << (width - PIECE)) - 1;
      let position = this.position;
      for (let i = 0; i < count; i++) {
        let at = position >>> 3;
        let word =
          (b[at]! | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16) | ((b[at + 3] ?? 0) << 24)) >>> 0;
        const low = (word >>> (position & 7)) & (PIECE_SIZE - 1);
        const next = position + PIECE;
        at = next >>> 3;
        word = (b[at]! | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16) | ((b[at + 3] ?? 0) << 24)) >>> 0;
        out[start + i] = low + ((word >>> (next & 7)) & highMask) * PIECE_SIZE;
        position += width;
      }
      this.position = position;
      return;
    }
    const mask = (1 << width) - 1;
    let position = this.position;
    for (let i = 0; i < count; i++) {
      const at = position >>> 3;
      const word =
        (b[at]! | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16) | ((b[at + 3] ?? 0) << 24)) >>> 0;
      out[start + i] = (word >>> (position & 7)) & mask;
      position += width;
    }
    this.position = position;
  }

  /** `length` raw bytes (after aligning). */
  raw(length: number): Uint8Array {
    this.align();
    const at = this.position >>> 3;
    this.position += length * 8;
    return this.bytes.subarray(at, at + length);
  }
}
