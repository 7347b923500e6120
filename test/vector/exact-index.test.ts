import { describe, expect, it } from 'vitest';
import { ClosedError, DimensionMismatchError, IndexError, ValidationError } from '../../lib/errors.js';
import { ExactIndex } from '../../lib/vector/exact-index.js';
import { decodeSnapshot, encodeSnapshot } from '../../lib/vector/snapshot-format.js';
import { clusteredVectors } from '../../bench/util/vectors.js';

const v = (...xs: number[]): Float32Array => new Float32Array(xs);

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

function filled(count: number, dimensions = 16, seed = 1): { index: ExactIndex; data: Float32Array[] } {
  const data = clusteredVectors({ count, dimensions, clusters: 8, seed });
  const index = ExactIndex.create({ dimensions, capacity: 4 });
  index.addMany(data.map((vector, i) => ({ id: `v${i}`, vector })));
  return { index, data };
}

describe('ExactIndex', () => {
  it('create() rejects invalid dimensions and capacity with ValidationError', () => {
    expect(() => ExactIndex.create({ dimensions: 0 })).toThrow(ValidationError);
    expect(() => ExactIndex.create({ dimensions: 2.5 })).toThrow(ValidationError);
    expect(() => ExactIndex.create({ dimensions: 3, capacity: 0 })).toThrow(ValidationError);
  });

  it('search() returns k hits ordered by score with cosine similarities', () => {
    const { index, data } = filled(300);
    const query = clusteredVectors({ count: 1, dimensions: 16, clusters: 8, seed: 9 })[0]!;
    const hits = index.search(query, 10);
    const expected = data
      .map((vector, i) => ({ id: `v${i}`, score: cosine(vector, query) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 10);
    expect(hits.map((h) => h.id)).toEqual(expected.map((h) => h.id));
    hits.forEach((hit, i) => {
      expect(hit.score).toBeCloseTo(expected[i]!.score, 5);
    });
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
  });

  it('search() clamps k to the size and returns [] for k = 0 or an empty index', () => {
    const index = ExactIndex.create({ dimensions: 2 });
    expect(index.search(v(1, 0), 5)).toEqual([]);
    index.add('a', v(1, 0));
    index.add('b', v(0, 1));
    expect(index.search(v(1, 0), 10).map((h) => h.id)).toEqual(['a', 'b']);
    expect(index.search(v(1, 0), 0)).toEqual([]);
  });

  it('search() rejects a bad k or query with typed errors', () => {
    const index = ExactIndex.create({ dimensions: 2 });
    index.add('a', v(1, 0));
    expect(() => index.search(v(1, 0), -1)).toThrow(ValidationError);
    expect(() => index.search(v(1, 0), 1.5)).toThrow(ValidationError);
    expect(() => index.search(v(1, 0, 0), 1)).toThrow(DimensionMismatchError);
    expect(() => index.search(v(Number.NaN, 0), 1)).toThrow(ValidationError);
  });

  it('search() applies the filter during the scan, so k filtered hits come back', () => {
    const { index } = filled(500);
    const query = clusteredVectors({ count: 1, dimensions: 16, clusters: 8, seed: 5 })[0]!;
    const even = (id: string): boolean => Number(id.slice(1)) % 2 === 0;
    const hits = index.search(query, 10, even);
    expect(hits).toHaveLength(10);
    expect(hits.every((h) => even(h.id))).toBe(true);
    const unfiltered = index
      .search(query, 500)
      .filter((h) => even(h.id))
      .slice(0, 10);
    expect(hits.map((h) => h.id)).toEqual(unfiltered.map((h) => h.id));
    expect(
      index
        .search(query, 10, (id) => id === 'v7' || id === 'v9')
        .map((h) => h.id)
        .sort(),
    ).toEqual(['v7', 'v9']);
  });

  it('search() breaks score ties by id and scores a zero vector 0', () => {
    const index = ExactIndex.create({ dimensions: 2 });
    index.add('b', v(2, 0));
    index.add('a', v(1, 0));
    index.add('z', v(0, 0));
    const hits = index.search(v(1, 0), 3);
    expect(hits.map((h) => h.id)).toEqual(['a', 'b', 'z']);
    expect(hits[2]!.score).toBe(0);
  });

  it('add() replaces the vector of an existing id without growing', () => {
    const index = ExactIndex.create({ dimensions: 2 });
    index.add('a', v(1, 0));
    index.add('b', v(0.7, 0.7));
    index.add('a', v(0, 1));
    expect(index.size).toBe(2);
    expect(index.search(v(0, 1), 1)[0]).toEqual({ id: 'a', score: 1 });
  });

  it('add() throws DimensionMismatchError or ValidationError and leaves the index unchanged', () => {
    const index = ExactIndex.create({ dimensions: 3 });
    expect(() => {
      index.add('a', v(1, 2));
    }).toThrow(DimensionMismatchError);
    expect(() => {
      index.add('a', v(1, Number.NaN, 0));
    }).toThrow(ValidationError);
    expect(() => {
      index.add('a', v(1, Number.POSITIVE_INFINITY, 0));
    }).toThrow(ValidationError);
    expect(() => {
      index.add('', v(1, 0, 0));
    }).toThrow(ValidationError);
    expect(() => {
      index.add('a', [1, 0, 0] as unknown as Float32Array);
    }).toThrow(ValidationError);
    expect(index.size).toBe(0);
    expect(index.has('a')).toBe(false);
  });

  it('addMany() validates every item before adding any; the last duplicate wins', () => {
    const index = ExactIndex.create({ dimensions: 2 });
    expect(() => {
      index.addMany([
        { id: 'a', vector: v(1, 0) },
        { id: 'b', vector: v(1, 0, 0) },
      ]);
    }).toThrow(DimensionMismatchError);
    expect(index.size).toBe(0);
    index.addMany([
      { id: 'a', vector: v(1, 0) },
      { id: 'a', vector: v(0, 1) },
    ]);
    expect(index.size).toBe(1);
    expect(index.search(v(0, 1), 1)[0]!.score).toBe(1);
  });

  it('remove() moves the last row into the hole and keeps every other vector findable', () => {
    const { index, data } = filled(50);
    expect(index.remove('v10')).toBe(true);
    expect(index.remove('v10')).toBe(false);
    expect(index.remove('missing')).toBe(false);
    expect(index.size).toBe(49);
    expect(index.has('v10')).toBe(false);
    // v49 was the last row and now lives in v10's slot; it must still be its own best match.
    expect(index.search(data[49]!, 1)[0]!.id).toBe('v49');
    for (const i of [0, 11, 48]) expect(index.search(data[i]!, 1)[0]!.id).toBe(`v${i}`);
    expect(index.search(data[10]!, 50).some((h) => h.id === 'v10')).toBe(false);
  });

  it('entries() yields every id with its unit-length vector', () => {
    const index = ExactIndex.create({ dimensions: 2 });
    index.add('a', v(3, 4));
    const entries = [...index.entries()];
    expect(entries).toHaveLength(1);
    expect(entries[0]!.id).toBe('a');
    expect(Array.from(entries[0]!.vector)).toEqual([expect.closeTo(0.6, 6), expect.closeTo(0.8, 6)]);
  });

  it('snapshot() and restore() round-trip ids and vectors: identical results', () => {
    const { index, data } = filled(200);
    index.remove('v3');
    const copy = ExactIndex.restore(index.snapshot());
    expect(copy.size).toBe(199);
    expect(copy.dimensions).toBe(16);
    for (const q of data.slice(0, 20)) expect(copy.search(q, 10)).toEqual(index.search(q, 10));
    copy.add('new', data[0]!);
    expect(copy.size).toBe(200);
  });

  it('snapshot() of an empty index restores to an empty index', () => {
    const copy = ExactIndex.restore(ExactIndex.create({ dimensions: 5 }).snapshot());
    expect(copy.size).toBe(0);
    expect(copy.dimensions).toBe(5);
    copy.add('a', v(1, 0, 0, 0, 0));
    expect(copy.search(v(1, 0, 0, 0, 0), 1)[0]!.id).toBe('a');
  });

  it('restore() throws IndexError for corrupt, truncated or foreign bytes', () => {
    const { index } = filled(20);
    const bytes = index.snapshot();
    const flipped = bytes.slice();
    flipped[bytes.length - 7]! ^= 0x10;
    expect(() => ExactIndex.restore(flipped)).toThrow(IndexError);
    expect(() => ExactIndex.restore(bytes.subarray(0, bytes.length - 8))).toThrow(IndexError);
    expect(() => ExactIndex.restore(new Uint8Array(10))).toThrow(IndexError);
    expect(() => ExactIndex.restore(new TextEncoder().encode('definitely not a snapshot, but long enough'))).toThrow(
      IndexError,
    );
    const parts = decodeSnapshot(bytes, 'exact');
    expect(() => ExactIndex.restore(encodeSnapshot({ ...parts, kind: 'hnsw' }))).toThrow(IndexError);
    expect(() => ExactIndex.restore(encodeSnapshot({ ...parts, payload: parts.payload.subarray(0, 64) }))).toThrow(
      IndexError,
    );
  });

  it('restore() accepts bytes at an unaligned offset', () => {
    const { index, data } = filled(30);
    const bytes = index.snapshot();
    const shifted = new Uint8Array(bytes.length + 1);
    shifted.set(bytes, 1);
    expect(ExactIndex.restore(shifted.subarray(1)).search(data[0]!, 5)).toEqual(index.search(data[0]!, 5));
  });

  it('dispose() is idempotent and later calls throw ClosedError', () => {
    const index = ExactIndex.create({ dimensions: 2 });
    index.add('a', v(1, 0));
    index.dispose();
    index.dispose();
    expect(index.size).toBe(0);
    expect(() => {
      index.add('b', v(0, 1));
    }).toThrow(ClosedError);
    expect(() => index.search(v(1, 0), 1)).toThrow(ClosedError);
    expect(() => index.snapshot()).toThrow(ClosedError);
  });
});
