import { describe, expect, it } from 'vitest';
import { IndexError, ValidationError } from '../../lib/errors.js';
import { createIndex, EXACT_CROSSOVER, promote, restoreIndex } from '../../lib/vector/choose-index.js';
import { ExactIndex } from '../../lib/vector/exact-index.js';
import { HnswIndex } from '../../lib/vector/hnsw-index.js';
import { clusteredVectors } from '../../bench/util/vectors.js';

describe('choose-index', () => {
  it('createIndex() picks ExactIndex below the crossover and HnswIndex from it on', async () => {
    const small = await createIndex({ dimensions: 8, expectedSize: EXACT_CROSSOVER - 1 });
    expect(small).toBeInstanceOf(ExactIndex);
    const large = await createIndex({ dimensions: 8, expectedSize: 5000 });
    expect(large).toBeInstanceOf(HnswIndex);
    expect(large instanceof HnswIndex ? large.capacity : 0).toBe(8192);
    large.dispose();
    const forced = await createIndex({ dimensions: 8, expectedSize: 10, crossover: 10, hnsw: { efSearch: 32 } });
    expect(forced.kind).toBe('hnsw');
    expect(forced instanceof HnswIndex ? forced.efSearch : 0).toBe(32);
    forced.dispose();
  });

  it('createIndex() rejects a negative expected size with ValidationError', async () => {
    await expect(createIndex({ dimensions: 8, expectedSize: -1 })).rejects.toThrow(ValidationError);
  });

  it('promote() keeps a small ExactIndex and rebuilds a large one as HNSW with the same contents', async () => {
    const data = clusteredVectors({ count: 300, dimensions: 16, clusters: 10, seed: 3 });
    const exact = ExactIndex.create({ dimensions: 16 });
    exact.addMany(data.map((vector, i) => ({ id: `v${i}`, vector })));
    expect(await promote(exact)).toBe(exact);
    const hnsw = await promote(exact, { crossover: 300 });
    expect(hnsw).toBeInstanceOf(HnswIndex);
    expect(hnsw.size).toBe(300);
    for (const i of [0, 150, 299]) expect(hnsw.search(data[i]!, 1)[0]!.id).toBe(`v${i}`);
    expect(exact.size).toBe(300);
    expect(await promote(hnsw, { crossover: 1 })).toBe(hnsw);
    hnsw.dispose();
  });

  it('restoreIndex() restores either kind from its snapshot and rejects garbage with IndexError', async () => {
    const exact = ExactIndex.create({ dimensions: 2 });
    exact.add('a', new Float32Array([1, 0]));
    const hnsw = await HnswIndex.create({ dimensions: 2 });
    hnsw.add('b', new Float32Array([0, 1]));
    const e = await restoreIndex(exact.snapshot());
    const h = await restoreIndex(hnsw.snapshot());
    expect(e.kind).toBe('exact');
    expect(h.kind).toBe('hnsw');
    expect(e.search(new Float32Array([1, 0]), 1)[0]!.id).toBe('a');
    expect(h.search(new Float32Array([0, 1]), 1)[0]!.id).toBe('b');
    await expect(restoreIndex(new Uint8Array(3))).rejects.toThrow(IndexError);
    await expect(restoreIndex(new Uint8Array(64))).rejects.toThrow(IndexError);
    hnsw.dispose();
    h.dispose();
  });
});
