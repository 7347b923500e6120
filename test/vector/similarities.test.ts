import { describe, expect, it } from 'vitest';
import { DimensionMismatchError } from '../../lib/errors.js';
import { ExactIndex } from '../../lib/vector/exact-index.js';
import { HnswIndex } from '../../lib/vector/hnsw-index.js';
import type { VectorIndex } from '../../lib/vector/vector-index.js';
import { clusteredVectors } from '../../bench/util/vectors.js';

const DIMS = 24;
const vectors = clusteredVectors({ count: 300, dimensions: DIMS, seed: 17 });
const items = vectors.map((vector, i) => ({ id: `v${i}`, vector }));

async function both(): Promise<VectorIndex[]> {
  const exact = ExactIndex.create({ dimensions: DIMS });
  const hnsw = await HnswIndex.create({ dimensions: DIMS, capacity: 400 });
  for (const index of [exact, hnsw]) index.addMany(items);
  return [exact, hnsw];
}

describe('VectorIndex.similarities', () => {
  it('similarities() gives the exact scan scores of the ids asked for, on both indexes', async () => {
    const truth = ExactIndex.create({ dimensions: DIMS });
    truth.addMany(items);
    const query = vectors[5]!.map((x, i) => x + (i % 3) * 0.01);
    const scan = new Map(truth.search(query, items.length).map((h) => [h.id, h.score]));
    const asked = ['v0', 'v7', 'v150', 'v299'];
    for (const index of await both()) {
      const got = index.similarities(query, asked);
      expect([...got.keys()], index.kind).toEqual(asked);
      for (const id of asked) expect(got.get(id)!, `${index.kind} ${id}`).toBeCloseTo(scan.get(id)!, 5);
      index.dispose();
    }
    truth.dispose();
  });

  it('similarities() leaves out ids the index does not hold (never added, removed) and checks the query', async () => {
    for (const index of await both()) {
      index.remove('v3');
      const got = index.similarities(vectors[0]!, ['v3', 'nope', 'v4']);
      expect([...got.keys()], index.kind).toEqual(['v4']);
      expect(() => index.similarities(new Float32Array(DIMS + 1), ['v4']), index.kind).toThrow(DimensionMismatchError);
      index.dispose();
    }
  });
});
