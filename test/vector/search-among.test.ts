import { describe, expect, it } from 'vitest';
import { DimensionMismatchError, ValidationError } from '../../lib/errors.js';
import { BufferedIndex } from '../../lib/vector/buffered-index.js';
import { ExactIndex } from '../../lib/vector/exact-index.js';
import { BITMAP_WALK_SHARE, HnswIndex, scopeScanWins, WALK_VISIT_COST } from '../../lib/vector/hnsw-index.js';
import type { VectorHit, VectorIndex } from '../../lib/vector/vector-index.js';
import { clusteredVectors } from '../../bench/util/vectors.js';
import { mulberry32 } from '../../bench/util/rng.js';

const DIMS = 32;
const vectors = clusteredVectors({ count: 600, dimensions: DIMS, seed: 23 });
const items = vectors.map((vector, i) => ({ id: `v${i}`, vector }));
const queries = clusteredVectors({ count: 12, dimensions: DIMS, seed: 24 });

/** The ground truth: a fresh exact index of the scope's current vectors, scanned whole. */
function scanOf(
  current: ReadonlyMap<string, Float32Array>,
  scope: Iterable<string>,
  query: Float32Array,
  k: number,
): VectorHit[] {
  const truth = ExactIndex.create({ dimensions: DIMS });
  for (const id of scope) {
    const v = current.get(id);
    if (v !== undefined) truth.add(id, v);
  }
  const hits = truth.search(query, k);
  truth.dispose();
  return hits;
}

function expectSame(got: VectorHit[], want: VectorHit[], label: string): void {
  expect(
    got.map((h) => h.id),
    label,
  ).toEqual(want.map((h) => h.id));
  got.forEach((h, i) => {
    expect(h.score, `${label} ${h.id}`).toBeCloseTo(want[i]!.score, 5);
  });
}

/** A random scope of `size` ids of the first `of`, some of them never added. */
function scopeOf(seed: number, size: number, of = items.length): Set<string> {
  const rng = mulberry32(seed);
  const scope = new Set<string>();
  while (scope.size < size) scope.add(`v${Math.floor(rng() * of)}`);
  scope.add('never-added');
  return scope;
}

/** Every kind searchAmong runs on: the exact index, HNSW, and the buffered index with the vectors split between its buffer and HNSW. */
async function indexes(): Promise<{ name: string; index: VectorIndex }[]> {
  const exact = ExactIndex.create({ dimensions: DIMS });
  exact.addMany(items);
  const hnsw = await HnswIndex.create({ dimensions: DIMS, capacity: 1024 });
  hnsw.addMany(items);
  const buffered = new BufferedIndex(await HnswIndex.create({ dimensions: DIMS, capacity: 1024 }));
  buffered.addMany(items);
  buffered.merge(350); // 350 in HNSW, 250 waiting in the buffer
  return [
    { name: 'exact', index: exact },
    { name: 'hnsw', index: hnsw },
    { name: 'buffered', index: buffered },
  ];
}

describe('VectorIndex.searchAmong', () => {
  it('searchAmong() equals an exact scan of the scope (ids and scores) on every index kind, before and after merges', async () => {
    const current = new Map(items.map((i) => [i.id, i.vector]));
    for (const { name, index } of await indexes()) {
      for (const [s, size] of [10, 60, 300].entries()) {
        const scope = scopeOf(100 + s, size);
        for (const [q, query] of queries.entries()) {
          const got = index.searchAmong(query, 10, scope);
          expectSame(got, scanOf(current, scope, query, 10), `${name} scope ${size} query ${q}`);
          for (const h of got) expect(scope.has(h.id)).toBe(true);
        }
      }
      if (index instanceof BufferedIndex) {
        index.merge();
        const scope = scopeOf(7, 200);
        expectSame(
          index.searchAmong(queries[0]!, 10, scope),
          scanOf(current, scope, queries[0]!, 10),
          `${name} merged`,
        );
      }
      index.dispose();
    }
  });

  it('searchAmong() follows removals and replaced vectors, and never returns an id outside the scope or removed', async () => {
    for (const { name, index } of await indexes()) {
      const current = new Map(items.map((i) => [i.id, i.vector]));
      const scope = scopeOf(9, 120);
      const members = [...scope].filter((id) => current.has(id));
      // Remove a third of the scope; give another third the vectors of ids outside it.
      members.slice(0, 40).forEach((id) => {
        expect(index.remove(id)).toBe(true);
        current.delete(id);
      });
      members.slice(40, 80).forEach((id, i) => {
        const moved = vectors[(i * 7 + 3) % vectors.length]!.map((x, d) => x + (d === i % DIMS ? 0.5 : 0));
        index.add(id, moved);
        current.set(id, moved);
      });
      for (const [q, query] of queries.entries()) {
        const got = index.searchAmong(query, 25, scope);
        expectSame(got, scanOf(current, scope, query, 25), `${name} query ${q}`);
        for (const h of got) expect(current.has(h.id) && scope.has(h.id), `${name} ${h.id}`).toBe(true);
      }
      index.dispose();
    }
  });

  it('searchAmong() clamps k to the scope, answers an empty scope with nothing, and checks its input', async () => {
    for (const { name, index } of await indexes()) {
      expect(
        index
          .searchAmong(queries[0]!, 10, ['v1', 'v2', 'gone'])
          .map((h) => h.id)
          .sort(),
        name,
      ).toEqual(['v1', 'v2']);
      expect(index.searchAmong(queries[0]!, 10, []), name).toEqual([]);
      expect(index.searchAmong(queries[0]!, 10, new Set(['nope'])), name).toEqual([]);
      expect(() => index.searchAmong(new Float32Array(DIMS + 1), 10, ['v1']), name).toThrow(DimensionMismatchError);
      expect(index.searchAmong(queries[0]!, 0, ['v1']), name).toEqual([]);
      expect(() => index.searchAmong(queries[0]!, -1, ['v1']), name).toThrow(ValidationError);
      index.dispose();
    }
  });

  it('searchAmong() gives every id of vectors HNSW holds once (identical vectors) its own hit', async () => {
    const hnsw = await HnswIndex.create({ dimensions: DIMS, capacity: 64 });
    const same = vectors[0]!;
    hnsw.addMany([
      { id: 'a', vector: same },
      { id: 'b', vector: same },
      { id: 'c', vector: vectors[1]! },
    ]);
    const hits = hnsw.searchAmong(same, 10, ['b', 'c', 'a']);
    expect(hits.map((h) => h.id)).toEqual(['a', 'b', 'c']);
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    expect(hits[1]!.score).toBe(hits[0]!.score);
    hnsw.dispose();
  });

  it('searchIn() is the scan of the scope where scopeScanWins() says so, and a walk filtered to the scope otherwise, on every index kind', async () => {
    const current = new Map(items.map((i) => [i.id, i.vector]));
    // At 600 vectors, ef 64: scanned up to sqrt(WALK_VISIT_COST · 64 · 600) members.
    const bound = Math.sqrt(WALK_VISIT_COST * 64 * 600);
    expect(scopeScanWins(Math.floor(bound), 64, 600)).toBe(true);
    expect(scopeScanWins(Math.ceil(bound + 1), 64, 600)).toBe(false);
    for (const { name, index } of await indexes()) {
      for (const size of [40, 450]) {
        const scope = scopeOf(size, size);
        let found = 0;
        for (const query of queries) {
          const got = index.searchIn(query, 10, scope);
          const want = scanOf(current, scope, query, 10);
          const exactScores = new Map(scanOf(current, scope, query, 600).map((h) => [h.id, h.score]));
          expect(got.length, name).toBe(want.length);
          for (const h of got) {
            expect(scope.has(h.id), `${name} ${h.id}`).toBe(true);
            expect(h.score, `${name} ${h.id}`).toBeCloseTo(exactScores.get(h.id)!, 5);
          }
          found += got.filter((h) => want.some((w) => w.id === h.id)).length;
          if (index.kind === 'exact' || size === 40) expectSame(got, want, `${name} scope ${size}`);
        }
        expect(found / (10 * queries.length), `${name} scope ${size}`).toBeGreaterThanOrEqual(0.9);
      }
      index.dispose();
    }
  });

  it('searchWalk() returns only members of the scope, also of a vector it shares with an id outside', async () => {
    const hnsw = await HnswIndex.create({ dimensions: DIMS, capacity: 1024 });
    hnsw.addMany(items);
    const shared = vectors[3]!.map((x, d) => x + (d % 2 === 0 ? 0.3 : -0.3));
    hnsw.addMany([
      { id: 'inside', vector: shared },
      { id: 'outside', vector: shared },
    ]);
    // 60 of 602: the bitmap filter (below BITMAP_WALK_SHARE); 300: a filter call into JS per candidate.
    expect(60 / 602).toBeLessThan(BITMAP_WALK_SHARE);
    expect(300 / 602).toBeGreaterThan(BITMAP_WALK_SHARE);
    for (const size of [60, 300]) {
      const scope = new Set([...scopeOf(5, size), 'inside']);
      for (const query of [shared, ...queries]) {
        const got = hnsw.searchWalk(query, 40, scope);
        expect(got.length, `scope ${size}`).toBe(40);
        for (const h of got) expect(scope.has(h.id), `scope ${size}: ${h.id}`).toBe(true);
      }
      expect(hnsw.searchWalk(shared, 1, scope)[0]!.id, `scope ${size}`).toBe('inside');
    }
    // A scope of a few members the walk cannot gather: widened, then the exact scan of the scope.
    const few = new Set(['v1', 'v2', 'outside']);
    expect(
      hnsw
        .searchWalk(queries[0]!, 10, few)
        .map((h) => h.id)
        .sort(),
    ).toEqual(['outside', 'v1', 'v2']);
    hnsw.dispose();
  });
});
