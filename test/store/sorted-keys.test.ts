import { describe, expect, it } from 'vitest';
import { bytesHoldKeys, compareKey, compareRanges, SortedKeys } from '../../lib/store/sorted-keys.js';

/** A seeded generator (mulberry32): the same keys on every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Keys from characters where UTF-8's byte order and `<` on strings disagree: ASCII, two- and
 * three-byte characters, U+E000–U+FFFF (after every surrogate pair in `<`, before it in UTF-8)
 * and characters outside the BMP.
 */
function keysOf(count: number, seed: number): string[] {
  const next = rng(seed);
  const pool = ['a', 'b', 'z', '0', '~', 'é', 'ÿ', 'ω', '中', '\uE000', '\uFFFD', '\uFF5E', '🙂', '𝄞', '\u{10FFFF}'];
  const keys = new Set<string>();
  while (keys.size < count) {
    let key = '';
    const length = 1 + Math.floor(next() * 5);
    for (let i = 0; i < length; i++) key += pool[Math.floor(next() * pool.length)]!;
    keys.add(key);
  }
  return [...keys];
}

const byUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

describe('SortedKeys', () => {
  it('orders UTF-8 bytes as `<` orders the strings, key against bytes and bytes against bytes', () => {
    const keys = keysOf(400, 7).sort(byUnits);
    const sorted = SortedKeys.of(keys);
    const next = rng(11);
    for (let r = 0; r < 3000; r++) {
      const i = Math.floor(next() * keys.length);
      const j = Math.floor(next() * keys.length);
      const expected = byUnits(keys[i]!, keys[j]!);
      expect(Math.sign(compareKey(keys[i]!, sorted.bytes, sorted.start(j), sorted.ends[j]!))).toBe(expected);
      expect(
        Math.sign(compareRanges(sorted.bytes, sorted.start(i), sorted.ends[i]!, sorted.start(j), sorted.ends[j]!)),
      ).toBe(expected);
    }
  });

  it('finds every key it holds at its place and none it does not; reads back what it wrote', () => {
    const all = keysOf(600, 3).sort(byUnits);
    const held = all.filter((_, i) => i % 2 === 0);
    const sorted = SortedKeys.of(held);
    held.forEach((k, i) => {
      expect(sorted.indexOf(k)).toBe(i);
      expect(sorted.at(i)).toBe(k);
    });
    for (const k of all.filter((_, i) => i % 2 === 1)) expect(sorted.indexOf(k)).toBe(-1);
    const read = SortedKeys.read(sorted.bytes, sorted.ends);
    expect(read?.length).toBe(held.length);
    expect(SortedKeys.of([]).indexOf('a')).toBe(-1);
  });

  it('refuses bytes that are not sorted unique keys, and tells which keys bytes cannot hold', () => {
    const keys = ['a', 'ab', '\uE000', '🙂'].sort(byUnits);
    const good = SortedKeys.of(keys);
    expect(SortedKeys.read(good.bytes, good.ends)).toBeDefined();
    const swapped = SortedKeys.of([keys[1]!, keys[0]!, ...keys.slice(2)]);
    expect(SortedKeys.read(swapped.bytes, swapped.ends)).toBeUndefined();
    const twice = SortedKeys.of(['a', 'a']);
    expect(SortedKeys.read(twice.bytes, twice.ends)).toBeUndefined();
    expect(SortedKeys.read(good.bytes, Uint32Array.from([...good.ends.slice(0, -1), good.bytes.length + 1]))).toBe(
      undefined,
    );
    expect(SortedKeys.read(good.bytes, good.ends.slice(0, -1))).toBeUndefined();
    expect(bytesHoldKeys(['a', '🙂', '\uE000'])).toBe(true);
    expect(bytesHoldKeys(['a', 'x\uD800'])).toBe(false);
    expect(bytesHoldKeys(['\uDC00'])).toBe(false);
  });
});
