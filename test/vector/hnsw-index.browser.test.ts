import { describe, expect, it } from 'vitest';
import { DimensionMismatchError, IndexError } from '../../lib/errors.js';
import { ExactIndex } from '../../lib/vector/exact-index.js';
import { HnswIndex } from '../../lib/vector/hnsw-index.js';
import { clusteredVectors } from '../../bench/util/vectors.js';

const DIMS = 64;

describe('HnswIndex in Chromium (real WASM, real IndexedDB)', () => {
  const data = clusteredVectors({ count: 1500, dimensions: DIMS, clusters: 30, seed: 1 });
  const queries = clusteredVectors({ count: 40, dimensions: DIMS, clusters: 30, seed: 2 });
  const items = data.map((vector, i) => ({ id: `v${i}`, vector }));

  it('create() builds an index whose search() agrees with ExactIndex at recall@10 >= 0.95', async () => {
    const hnsw = await HnswIndex.create({ dimensions: DIMS, capacity: 256 });
    hnsw.addMany(items);
    const exact = ExactIndex.create({ dimensions: DIMS });
    exact.addMany(items);
    expect(hnsw.size).toBe(1500);
    expect(hnsw.capacity).toBe(2048);
    let hits = 0;
    for (const q of queries) {
      const truth = new Set(exact.search(q, 10).map((h) => h.id));
      const found = hnsw.search(q, 10);
      expect(found).toHaveLength(10);
      hits += found.filter((h) => truth.has(h.id)).length;
    }
    expect(hits / (queries.length * 10)).toBeGreaterThanOrEqual(0.95);
    expect(() => hnsw.search(new Float32Array(3), 10)).toThrow(DimensionMismatchError);
    hnsw.dispose();
  });

  it('snapshot() and restore() round-trip with identical results; corrupt bytes throw IndexError', async () => {
    const hnsw = await HnswIndex.create({ dimensions: DIMS });
    hnsw.addMany(items.slice(0, 800));
    hnsw.remove('v1');
    const bytes = hnsw.snapshot();
    const copy = await HnswIndex.restore(bytes);
    expect(copy.size).toBe(799);
    for (const q of queries) expect(copy.search(q, 10)).toEqual(hnsw.search(q, 10));
    const flipped = bytes.slice();
    flipped[bytes.length - 33]! ^= 0x04;
    await expect(HnswIndex.restore(flipped)).rejects.toThrow(IndexError);
    hnsw.dispose();
    copy.dispose();
  });

  it('create() leaves the page IndexedDB working and persists nothing for hnswlib', async () => {
    await HnswIndex.create({ dimensions: 4 });
    expect(typeof indexedDB.open).toBe('function');
    const name = `engram-index-probe-${String(Date.now())}`;
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDB.open(name, 1);
      request.onupgradeneeded = () => request.result.createObjectStore('s');
      request.onsuccess = () => {
        resolve(request.result);
      };
      request.onerror = () => {
        reject(request.error ?? new Error('open failed'));
      };
    });
    expect(db.objectStoreNames.contains('s')).toBe(true);
    db.close();
    indexedDB.deleteDatabase(name);
    const databases = await indexedDB.databases();
    expect(databases.some((d) => d.name === '/hnswlib-index')).toBe(false);
  });
});
