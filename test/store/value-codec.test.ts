import { describe, expect, it } from 'vitest';
import { StoreError } from '../../lib/errors.js';
import { decodeValue, encodeValue, maxValueBytes, rowParts, writeValue } from '../../lib/store/value-codec.js';

describe('value codec', () => {
  it('decodeValue() gives back what encodeValue() was given: JSON, typed arrays, odd numbers, NUL keys', () => {
    const value = {
      id: 'm1',
      text: 'Ünïcödé ✓ 🦘',
      n: [1, -2.5, 0, null, true, 'x'],
      vector: new Float32Array([0.25, -1, 3.5]),
      bytes: new Uint8Array([1, 2, 3, 255]),
      columns: { codes: new Int32Array([-1, 7]), numbers: new Float64Array([NaN, 1.5, Infinity]) },
      odd: [NaN, -Infinity, -0],
      metadata: { '\u0000b': 1, '\u0000o': 'x', nested: { '\u0000': [1] } },
      empty: {},
      skipped: undefined,
    };
    const back = decodeValue(encodeValue(value)) as typeof value;
    const expected: Record<string, unknown> = { ...value };
    delete expected['skipped'];
    expect(back).toEqual(expected);
    expect('skipped' in back).toBe(false);
    expect(back.vector).toBeInstanceOf(Float32Array);
    expect(back.columns.numbers).toBeInstanceOf(Float64Array);
    expect(Object.is(back.odd[2], -0)).toBe(true);
  });

  it('a row without typed arrays comes back the same whether or not it holds anything escaped', () => {
    // No typed array and no NUL: the parsed JSON is the row (the fast path); with either, it is revived.
    const plain = {
      id: 'm2',
      text: 'plain words',
      metadata: { role: 'user', tags: ['a', 'b'], deep: { x: [1, { y: 2 }] } },
    };
    const escaped = {
      id: 'm3',
      text: 'a NUL \u0000 inside, and \\u0000 written out',
      odd: [NaN, -0, Infinity],
      metadata: { '\u0000b': 0, '\u0000n': '-0', '\u0000': { '\u0000o': [] } },
    };
    const backPlain = decodeValue(encodeValue(plain));
    expect(backPlain).toEqual(plain);
    const back = decodeValue(encodeValue(escaped)) as typeof escaped;
    expect(back).toEqual(escaped);
    expect(back.text).toBe(escaped.text);
    expect(Object.is(back.odd[1], -0)).toBe(true);
    expect(Object.keys(back.metadata)).toEqual(Object.keys(escaped.metadata));
  });

  it('encodeValue() refuses what it could not give back; decodeValue() refuses damaged bytes', () => {
    expect(() => encodeValue({ at: new Date() })).toThrow(StoreError);
    expect(() => encodeValue({ m: new Map() })).toThrow(StoreError);
    const bytes = encodeValue({ v: new Float32Array(4), t: 'text' });
    expect(() => decodeValue(bytes.subarray(0, 20))).toThrow(StoreError);
    expect(() => decodeValue(new Uint8Array(3))).toThrow(StoreError);
  });

  it('a plain JSON row is written as its JSON, and a row written into used memory is the same bytes', () => {
    const row = { id: 'm1', text: 'Ana ✓ 🦘', n: [1, null, 'x'], metadata: { a: { b: [true] } }, skipped: undefined };
    const json = new TextEncoder().encode(JSON.stringify(row));
    const bytes = encodeValue(row);
    expect(new DataView(bytes.buffer).getUint32(0, true)).toBe(json.length);
    expect(new DataView(bytes.buffer).getUint32(4, true)).toBe(0);
    expect(bytes.subarray(8)).toEqual(json);
    // The sealing writes rows straight into the cipher's scratch memory, which holds an earlier row's bytes.
    for (const value of [row, { id: 'v', vector: new Float32Array([1, 2, 3]), raw: new Uint8Array([9]) }, -0, 'x']) {
      const parts = rowParts(value);
      const used = new Uint8Array(maxValueBytes(parts) + 16).fill(0xee);
      const written = writeValue(parts, used);
      expect(used.slice(0, written)).toEqual(encodeValue(value));
      expect(decodeValue(used.slice(0, written))).toEqual(value === row ? { ...row, skipped: undefined } : value);
    }
  });
});
