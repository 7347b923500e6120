import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import { BufferedIndex } from '../../lib/vector/buffered-index.js';
import { restoreIndex } from '../../lib/vector/choose-index.js';
import { ExactIndex } from '../../lib/vector/exact-index.js';
import { HnswIndex } from '../../lib/vector/hnsw-index.js';
import { clusteredVectors } from '../../bench/util/vectors.js';

const DIMS = 24;
const vectors = clusteredVectors({ count: 400, dimensions: DIMS, seed: 23 });
const items = vectors.map((vector, i) => ({ id: `v${i}`, vector }));

/** 300 vectors in HNSW, 100 more waiting in the buffer. */
async function buffered(): Promise<BufferedIndex> {
  const main = await HnswIndex.create({ dimensions: DIMS, capacity: 512 });
  main.addMany(items.slice(0, 300));
  const index = new BufferedIndex(main);
  index.addMany(items.slice(300));
  return index;
}

function scan(query: Float32Array, k: number, allowed: (id: string) => boolean = () => true): string[] {
  const truth = ExactIndex.create({ dimensions: DIMS });
  truth.addMany(items.filter((i) => allowed(i.id)));
  return truth.search(query, k).map((h) => h.id);
}

describe('BufferedIndex', () => {
  it('finds buffered vectors at once, and the same after they are merged into HNSW', async () => {
    const index = await buffered();
    expect(index.size).toBe(400);
    expect(index.pending).toBe(100);
    expect(index.main.size).toBe(300);
    for (const probe of [5, 150, 310, 399]) expect(index.search(vectors[probe]!, 1)[0]!.id).toBe(`v${probe}`);
    const even = (id: string): boolean => Number(id.slice(1)) % 2 === 0;
    expect(index.search(vectors[320]!, 10, even).map((h) => h.id)).toEqual(scan(vectors[320]!, 10, even));
    expect(index.merge(30)).toBe(30);
    expect(index.pending).toBe(70);
    expect(index.merge()).toBe(70);
    expect(index.pending).toBe(0);
    expect(index.main.size).toBe(400);
    for (const probe of [5, 310, 399]) expect(index.search(vectors[probe]!, 1)[0]!.id).toBe(`v${probe}`);
    index.dispose();
  });

  it('an id lives in one place: one the main index holds is replaced there, remove() takes it from either', async () => {
    const index = await buffered();
    const main = index.main;
    if (!(main instanceof HnswIndex)) throw new TypeError('expected HNSW behind the buffer');
    // Read back unchanged (a catch-up re-reading writes it has): nothing moves, no node is deleted.
    index.addMany(items.slice(0, 50));
    expect(main.tombstones).toBe(0);
    expect(index.pending).toBe(100);
    index.add('v10', vectors[200]!);
    expect(main.has('v10')).toBe(true);
    expect(index.pending).toBe(100);
    expect(index.size).toBe(400);
    expect(index.similarities(vectors[200]!, ['v10']).get('v10')).toBeCloseTo(1, 5);
    expect(index.similarities(vectors[10]!, ['v10']).get('v10')).toBeLessThan(0.99);
    // A bad item anywhere in the batch changes neither part.
    expect(() => {
      index.addMany([
        { id: 'new', vector: vectors[0]! },
        { id: 'v11', vector: new Float32Array(3) },
      ]);
    }).toThrow();
    expect(index.has('new')).toBe(false);
    expect(index.similarities(vectors[11]!, ['v11']).get('v11')).toBeCloseTo(1, 5);
    expect(index.remove('v10')).toBe(true);
    expect(index.remove('v20')).toBe(true);
    expect(index.remove('v350')).toBe(true);
    expect(index.remove('v350')).toBe(false);
    expect(index.size).toBe(397);
    for (const id of ['v10', 'v20', 'v350']) expect(index.has(id)).toBe(false);
    expect(index.search(vectors[350]!, 5).map((h) => h.id)).not.toContain('v350');
    index.dispose();
  });

  it('merges oldest first, whatever removals did to the buffer (a re-added id counts from its re-add)', () => {
    const index = new BufferedIndex(ExactIndex.create({ dimensions: DIMS }));
    index.addMany(items.slice(0, 10));
    index.remove('v0');
    index.remove('v4');
    index.add('v1', vectors[50]!);
    const mergedAfter = (count: number): string[] => {
      index.merge(count);
      return items
        .slice(0, 10)
        .map((i) => i.id)
        .filter((id) => index.main.has(id));
    };
    expect(mergedAfter(3)).toEqual(['v2', 'v3', 'v5']);
    expect(mergedAfter(4)).toEqual(['v2', 'v3', 'v5', 'v6', 'v7', 'v8', 'v9']);
    expect(mergedAfter(1)).toEqual(['v1', 'v2', 'v3', 'v5', 'v6', 'v7', 'v8', 'v9']);
    expect(index.pending).toBe(0);
    expect(index.similarities(vectors[50]!, ['v1']).get('v1')).toBeCloseTo(1, 5);
    index.dispose();
  });

  it('rejects a bad vector before anything changes', async () => {
    const index = await buffered();
    expect(() => {
      index.addMany([
        { id: 'v1', vector: vectors[2]! },
        { id: 'bad', vector: new Float32Array(DIMS - 1) },
      ]);
    }).toThrow();
    expect(index.main.has('v1')).toBe(true);
    expect(index.size).toBe(400);
    index.dispose();
  });

  it('snapshotParts() keeps the buffer apart; both parts restore to the same answers', async () => {
    const index = await buffered();
    const parts = index.snapshotParts();
    expect(index.pending).toBe(100);
    const copy = new BufferedIndex(await restoreIndex(parts.main), ExactIndex.restore(parts.buffer));
    expect(copy.size).toBe(400);
    expect(copy.pending).toBe(100);
    for (const probe of [7, 333]) expect(copy.search(vectors[probe]!, 10)).toEqual(index.search(vectors[probe]!, 10));
    // snapshot() of the seam merges first: one index holds everything.
    const whole = await restoreIndex(copy.snapshot());
    expect(whole.size).toBe(400);
    for (const i of [index, copy, whole]) i.dispose();
  });
  it('rebuildBehind() puts an empty HNSW index behind the buffer, which takes the exact index and what waited; merges fill HNSW, searches agree throughout', async () => {
    const exact = ExactIndex.create({ dimensions: DIMS });
    exact.addMany(items.slice(0, 300));
    const index = new BufferedIndex(exact);
    index.addMany(items.slice(300, 350));
    const even = (id: string): boolean => Number(id.slice(1)) % 2 === 0;
    const before = index.search(vectors[120]!, 10, even).map((h) => h.id);
    const hnsw = await HnswIndex.create({ dimensions: DIMS, capacity: 1024 });
    index.rebuildBehind(hnsw);
    expect(index.kind).toBe('hnsw');
    expect(index.main).toBe(hnsw);
    expect(index.main.size).toBe(0);
    expect(index.pending).toBe(350);
    expect(index.search(vectors[120]!, 10, even).map((h) => h.id)).toEqual(before);
    // The exact index's vectors first, then those that waited: the first merge takes v0….
    expect(index.merge(10)).toBe(10);
    for (let i = 0; i < 10; i++) expect(hnsw.has(`v${i}`)).toBe(true);
    expect(hnsw.has('v300')).toBe(false);
    index.addMany(items.slice(350));
    expect(index.merge()).toBe(390);
    expect(index.size).toBe(400);
    expect(index.search(vectors[120]!, 10, even).map((h) => h.id)).toEqual(scan(vectors[120]!, 10, even));
    index.dispose();
  });

  it('rebuildBehind() refuses a main index that is not exact or a next one that is not empty, and changes nothing', async () => {
    const index = await buffered();
    const next = await HnswIndex.create({ dimensions: DIMS, capacity: 16 });
    expect(() => {
      index.rebuildBehind(next);
    }).toThrow(ValidationError);
    expect(index.pending).toBe(100);
    expect(index.main.size).toBe(300);
    const exact = ExactIndex.create({ dimensions: DIMS });
    exact.addMany(items.slice(0, 5));
    const small = new BufferedIndex(exact);
    const full = await HnswIndex.create({ dimensions: DIMS, capacity: 16 });
    full.add('x', vectors[0]!);
    expect(() => {
      small.rebuildBehind(full);
    }).toThrow(ValidationError);
    const other = await HnswIndex.create({ dimensions: DIMS + 1, capacity: 16 });
    expect(() => {
      small.rebuildBehind(other);
    }).toThrow(ValidationError);
    expect(small.main).toBe(exact);
    expect(small.size).toBe(5);
    for (const x of [index, next, small, full, other]) x.dispose();
  });
});
