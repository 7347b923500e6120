/**
 * A sorted list of string keys kept as one block of UTF-8 bytes and the end of each key in it,
 * searched without making a string per key: the freshness ledger's saved keys (row-freshness.ts),
 * which an encrypted store reads at every open. Parsing them as a JSON array was most of that
 * read (bench/results/REPORT.md, "Measurements cited by the code"); these bytes are used as they
 * are read. The order is the order of `<` on strings (UTF-16 code units), compared over the
 * UTF-8 bytes directly. {@link KeysBuilder} makes the block (from strings, or from another block's
 * keys copied as they are).
 */

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

/** A lone surrogate: UTF-8 cannot hold it, so a key with one cannot be kept as bytes. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether every key can be held as UTF-8 bytes (no lone surrogate). */
export function bytesHoldKeys(keys: Iterable<string>): boolean {
  for (const key of keys) if (LONE_SURROGATE.test(key)) return false;
  return true;
}

/** The UTF-16 code unit of the code point `cp` that comes first, and its second one (-1 for none). */
function units(cp: number): [number, number] {
  if (cp < 0x10000) return [cp, -1];
  const c = cp - 0x10000;
  return [0xd800 + (c >> 10), 0xdc00 + (c & 0x3ff)];
}

/** The code point whose UTF-8 sequence starts at `p`, and the length of that sequence. */
function codePointAt(bytes: Uint8Array, p: number): [number, number] {
  const b = bytes[p]!;
  if (b < 0x80) return [b, 1];
  const c1 = bytes[p + 1]! & 0x3f;
  if (b < 0xe0) return [((b & 0x1f) << 6) | c1, 2];
  const c2 = bytes[p + 2]! & 0x3f;
  if (b < 0xf0) return [((b & 0x0f) << 12) | (c1 << 6) | c2, 3];
  return [((b & 0x07) << 18) | (c1 << 12) | (c2 << 6) | (bytes[p + 3]! & 0x3f), 4];
}

/**
 * `key` against the UTF-8 bytes [start, end) in the order of `<` on strings: negative when
 * `key` comes first, 0 when they are the same key, positive when it comes after.
 */
export function compareKey(key: string, bytes: Uint8Array, start: number, end: number): number {
  let i = 0;
  let p = start;
  while (i < key.length && p < end) {
    const b = bytes[p]!;
    if (b < 0x80) {
      const d = key.charCodeAt(i) - b;
      if (d !== 0) return d;
      i += 1;
      p += 1;
      continue;
    }
    const [cp, length] = codePointAt(bytes, p);
    const [first, second] = units(cp);
    const d = key.charCodeAt(i) - first;
    if (d !== 0) return d;
    if (second >= 0) {
      if (i + 1 >= key.length) return -1;
      const d2 = key.charCodeAt(i + 1) - second;
      if (d2 !== 0) return d2;
      i += 1;
    }
    i += 1;
    p += length;
  }
  return i < key.length ? 1 : p < end ? -1 : 0;
}

/**
 * The UTF-8 bytes [a, aEnd) against [b, bEnd) of the same block, in the order of `<` on the
 * strings they encode: negative when the first comes first, 0 when they are the same.
 */
export function compareRanges(bytes: Uint8Array, a: number, aEnd: number, b: number, bEnd: number): number {
  while (a < aEnd && b < bEnd && bytes[a] === bytes[b]) {
    a += 1;
    b += 1;
  }
  if (a === aEnd || b === bEnd) return aEnd - a - (bEnd - b);
  // The bytes before are the same: both differ inside characters that start at the same distance back.
  let back = 0;
  while ((bytes[a - back]! & 0xc0) === 0x80) back += 1;
  const [x1, x2] = units(codePointAt(bytes, a - back)[0]);
  const [y1, y2] = units(codePointAt(bytes, b - back)[0]);
  return x1 !== y1 ? x1 - y1 : x2 - y2;
}

/** Grows a block of bytes and the ends of the keys put into it. */
export class KeysBuilder {
  #bytes = new Uint8Array(1024);
  #length = 0;
  readonly #ends: number[] = [];

  #room(bytes: number): void {
    if (this.#length + bytes <= this.#bytes.length) return;
    const grown = new Uint8Array(Math.max(this.#bytes.length * 2, this.#length + bytes));
    grown.set(this.#bytes.subarray(0, this.#length));
    this.#bytes = grown;
  }

  put(bytes: Uint8Array): void {
    this.#room(bytes.length);
    this.#bytes.set(bytes, this.#length);
    this.#length += bytes.length;
    this.#ends.push(this.#length);
  }

  /** Puts `key` as UTF-8 (it holds no lone surrogate: see bytesHoldKeys). */
  putKey(key: string): void {
    this.#room(key.length * 3);
    this.#length += ENCODER.encodeInto(key, this.#bytes.subarray(this.#length)).written;
    this.#ends.push(this.#length);
  }

  /** The bytes put, and where each key ends in them. */
  result(): { bytes: Uint8Array; ends: Uint32Array } {
    return { bytes: this.#bytes.slice(0, this.#length), ends: Uint32Array.from(this.#ends) };
  }
}

/** The keys, sorted and unique, in one block of bytes. */
export class SortedKeys {
  readonly bytes: Uint8Array;
  /** Where each key ends in {@link bytes} (it starts where the one before ends). */
  readonly ends: Uint32Array;

  private constructor(bytes: Uint8Array, ends: Uint32Array) {
    this.bytes = bytes;
    this.ends = ends;
  }

  /** Keys already sorted and unique, none with a lone surrogate (see {@link bytesHoldKeys}). */
  static of(keys: readonly string[]): SortedKeys {
    const builder = new KeysBuilder();
    for (const key of keys) builder.putKey(key);
    const { bytes, ends } = builder.result();
    return new SortedKeys(bytes, ends);
  }

  /**
   * The keys `bytes` and `ends` hold, or undefined when they are not a list of sorted, unique
   * keys (each end within the bytes and past the one before, each key after the one before).
   */
  static read(bytes: Uint8Array, ends: Uint32Array): SortedKeys | undefined {
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      const end = ends[i]!;
      if (end < start || end > bytes.length) return undefined;
      if (i > 0 && compareRanges(bytes, i > 1 ? ends[i - 2]! : 0, start, start, end) >= 0) return undefined;
      start = end;
    }
    return start === bytes.length ? new SortedKeys(bytes, ends) : undefined;
  }

  get length(): number {
    return this.ends.length;
  }

  /** Where key `i` starts. */
  start(i: number): number {
    return i === 0 ? 0 : this.ends[i - 1]!;
  }

  /** Key `i` as a string. */
  at(i: number): string {
    return DECODER.decode(this.bytes.subarray(this.start(i), this.ends[i]));
  }

  /** The place of `key`, or -1 (binary search). */
  indexOf(key: string): number {
    let lo = 0;
    let hi = this.ends.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const d = compareKey(key, this.bytes, this.start(mid), this.ends[mid]!);
      if (d === 0) return mid;
      if (d > 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}
