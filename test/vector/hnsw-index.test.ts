import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClosedError, DimensionMismatchError, IndexError, ValidationError } from '../../lib/errors.js';
import { ExactIndex } from '../../lib/vector/exact-index.js';
import { HnswIndex } from '../../lib/vector/hnsw-index.js';
import { decodeSnapshot, encodeSnapshot } from '../../lib/vector/snapshot-format.js';
import { clusteredVectors } from '../../bench/util/vectors.js';

const DIMS = 32;
const v = (...xs: number[]): Float32Array => new Float32Array(xs);

function recallAt10(exact: ExactIndex, hnsw: HnswIndex, queries: readonly Float32Array[]): number {
  let hits = 0;
  for (const q of queries) {
    const truth = new Set(exact.search(q, 10).map((h) => h.id));
    hits += hnsw.search(q, 10).filter((h) => truth.has(h.id)).length;
  }
  return hits / (queries.length * 10);
}

describe('HnswIndex', () => {
  const data = clusteredVectors({ count: 2000, dimensions: DIMS, clusters: 40, seed: 1 });
  const queries = clusteredVectors({ count: 50, dimensions: DIMS, clusters: 40, seed: 2 });
  const items = data.map((vector, i) => ({ id: `v${i}`, vector }));
  let built: HnswIndex;
  let exact: ExactIndex;

  beforeAll(async () => {
    built = await HnswIndex.create({ dimensions: DIMS, capacity: 64 });
    built.addMany(items);
    exact = ExactIndex.create({ dimensions: DIMS });
    exact.addMany(items);
  });

  afterAll(() => {
    built.dispose();
  });

  it('create() applies the documented defaults', async () => {
    const index = await HnswIndex.create({ dimensions: 8 });
    expect(index.kind).toBe('hnsw');
    expect(index.dimensions).toBe(8);
    expect(index.size).toBe(0);
    expect(index.capacity).toBe(1024);
    expect(index.efSearch).toBe(64);
    expect(index.search(new Float32Array(8).fill(1), 10)).toEqual([]);
    index.dispose();
  });

  it('create() rejects invalid options with ValidationError', async () => {
    await expect(HnswIndex.create({ dimensions: 0 })).rejects.toThrow(ValidationError);
    await expect(HnswIndex.create({ dimensions: 4, m: 1 })).rejects.toThrow(ValidationError);
    await expect(HnswIndex.create({ dimensions: 4, efSearch: 0 })).rejects.toThrow(ValidationError);
    await expect(HnswIndex.create({ dimensions: 4, capacity: 2.5 })).rejects.toThrow(ValidationError);
  });

  it('create() leaves the global indexedDB and window as they were', async () => {
    const before = globalThis.indexedDB;
    const index = await HnswIndex.create({ dimensions: 4 });
    expect(globalThis.indexedDB).toBe(before);
    expect('window' in globalThis).toBe(false);
    index.dispose();
  });

  it('search() returns k hits ordered by score, with cosine similarities', () => {
    const hits = built.search(queries[0]!, 10);
    expect(hits).toHaveLength(10);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
    const truth = new Map(exact.search(queries[0]!, 2000).map((h) => [h.id, h.score]));
    for (const hit of hits) expect(hit.score).toBeCloseTo(truth.get(hit.id)!, 4);
  });

  it('search() top-10 agrees with ExactIndex at recall@10 >= 0.95 on clustered data', () => {
    expect(recallAt10(exact, built, queries)).toBeGreaterThanOrEqual(0.95);
  });

  it('addMany() grew the capacity by doubling past the initial 64 slots', () => {
    expect(built.size).toBe(2000);
    expect(built.capacity).toBe(2048);
    for (const i of [0, 63, 64, 1999]) expect(built.search(data[i]!, 1)[0]!.id).toBe(`v${i}`);
  });

  it('add() grows capacity one vector at a time past a full index', async () => {
    const index = await HnswIndex.create({ dimensions: DIMS, capacity: 4 });
    for (let i = 0; i < 20; i++) index.add(`v${i}`, data[i]!);
    expect(index.size).toBe(20);
    expect(index.capacity).toBe(32);
    for (let i = 0; i < 20; i++) expect(index.search(data[i]!, 1)[0]!.id).toBe(`v${i}`);
    index.dispose();
  });

  it('add() replaces the vector of an existing id in place', async () => {
    const index = await HnswIndex.create({ dimensions: 2, capacity: 2 });
    index.add('a', v(1, 0));
    index.add('b', v(0.6, 0.8));
    index.add('a', v(0, 1));
    expect(index.size).toBe(2);
    // The new vector takes over the slot its old one left: a full index does not grow for a replacement.
    expect(index.capacity).toBe(2);
    expect(index.tombstones).toBe(0);
    expect(index.search(v(0, 1), 1)[0]!.id).toBe('a');
    expect(index.search(v(0, 1), 1)[0]!.score).toBeCloseTo(1, 5);
    index.dispose();
  });

  it('remove() hides the id; re-adding it works; new vectors take over deleted slots', async () => {
    const index = await HnswIndex.create({ dimensions: DIMS, capacity: 256 });
    index.addMany(items.slice(0, 200));
    expect(index.remove('v5')).toBe(true);
    expect(index.remove('v5')).toBe(false);
    expect(index.remove('nope')).toBe(false);
    expect(index.has('v5')).toBe(false);
    expect(index.size).toBe(199);
    expect(index.search(data[5]!, 199).some((h) => h.id === 'v5')).toBe(false);
    index.add('v5', data[5]!);
    expect(index.has('v5')).toBe(true);
    expect(index.search(data[5]!, 1)[0]!.id).toBe('v5');
    // Churn: remove 50, add 50 new ones; the freed slots are reused, so no growth.
    for (let i = 100; i < 150; i++) index.remove(`v${i}`);
    expect(index.tombstones).toBe(50);
    index.addMany(items.slice(200, 250));
    expect(index.tombstones).toBe(0);
    expect(index.size).toBe(200);
    expect(index.capacity).toBe(256);
    for (const i of [0, 99, 150, 249]) expect(index.search(data[i]!, 1)[0]!.id).toBe(`v${i}`);
    expect(index.search(data[120]!, 200).some((h) => h.id === 'v120')).toBe(false);
    index.dispose();
  });

  it('search() clamps k to the live count', async () => {
    const index = await HnswIndex.create({ dimensions: DIMS, capacity: 8 });
    index.addMany(items.slice(0, 5));
    index.remove('v0');
    const hits = index.search(queries[0]!, 100);
    expect(hits.map((h) => h.id).sort()).toEqual(['v1', 'v2', 'v3', 'v4']);
    expect(index.search(queries[0]!, 0)).toEqual([]);
    index.dispose();
  });

  it('search() with a filter returns k filtered hits, matching ExactIndex with the same filter', () => {
    const tenth = (id: string): boolean => Number(id.slice(1)) % 10 === 3;
    let agree = 0;
    for (const q of queries.slice(0, 20)) {
      const hits = built.search(q, 10, tenth);
      expect(hits).toHaveLength(10);
      expect(hits.every((h) => tenth(h.id))).toBe(true);
      const truth = new Set(exact.search(q, 10, tenth).map((h) => h.id));
      agree += hits.filter((h) => truth.has(h.id)).length;
    }
    expect(agree / 200).toBeGreaterThanOrEqual(0.95);
  });

  it('search() with a very selective filter returns every match', () => {
    const few = new Set(['v3', 'v1500', 'v777']);
    const hits = built.search(queries[1]!, 10, (id) => few.has(id));
    expect(hits.map((h) => h.id).sort()).toEqual([...few].sort());
    const expected = exact.search(queries[1]!, 10, (id) => few.has(id));
    expect(hits.map((h) => h.id)).toEqual(expected.map((h) => h.id));
    hits.forEach((hit, i) => {
      expect(hit.score).toBeCloseTo(expected[i]!.score, 4);
    });
  });

  it('search() rethrows an error thrown by the filter and stays usable', () => {
    const boom = new RangeError('filter failed');
    expect(() =>
      built.search(queries[0]!, 10, () => {
        throw boom;
      }),
    ).toThrow(boom);
    expect(built.search(queries[0]!, 10)).toHaveLength(10);
  });

  it('add() and search() reject a wrong dimension with DimensionMismatchError before touching WASM', () => {
    expect(() => {
      built.add('bad', new Float32Array(DIMS + 1));
    }).toThrow(DimensionMismatchError);
    expect(() => built.search(new Float32Array(DIMS - 1), 10)).toThrow(DimensionMismatchError);
    expect(() => {
      built.addMany([
        { id: 'x', vector: data[0]! },
        { id: 'bad', vector: new Float32Array(3) },
      ]);
    }).toThrow(DimensionMismatchError);
    expect(built.has('x')).toBe(false);
    expect(built.size).toBe(2000);
  });

  it('add() rejects NaN and infinite values with ValidationError', () => {
    const nan = data[0]!.slice();
    nan[3] = Number.NaN;
    const inf = data[0]!.slice();
    inf[0] = Number.NEGATIVE_INFINITY;
    expect(() => {
      built.add('nan', nan);
    }).toThrow(ValidationError);
    expect(() => {
      built.add('inf', inf);
    }).toThrow(ValidationError);
    expect(() => built.search(nan, 10)).toThrow(ValidationError);
    expect(() => built.search(queries[0]!, -1)).toThrow(ValidationError);
    expect(built.has('nan')).toBe(false);
  });

  it('setEfSearch() changes the search effort and rejects invalid values', async () => {
    const index = await HnswIndex.restore(built.snapshot());
    index.setEfSearch(10);
    expect(index.efSearch).toBe(10);
    const low = recallAt10(exact, index, queries);
    index.setEfSearch(200);
    expect(recallAt10(exact, index, queries)).toBeGreaterThanOrEqual(low);
    expect(() => {
      index.setEfSearch(0);
    }).toThrow(ValidationError);
    index.dispose();
  });

  it('snapshot() and restore() round-trip: identical results, parameters and ids', async () => {
    const index = await HnswIndex.create({ dimensions: DIMS, capacity: 512, m: 12, efConstruction: 100, efSearch: 48 });
    index.addMany(items.slice(0, 500));
    index.remove('v7');
    index.remove('v8');
    const copy = await HnswIndex.restore(index.snapshot());
    expect(copy.size).toBe(498);
    expect(copy.capacity).toBe(512);
    expect(copy.efSearch).toBe(48);
    expect(copy.tombstones).toBe(2);
    expect(copy.has('v7')).toBe(false);
    for (const q of queries) expect(copy.search(q, 10)).toEqual(index.search(q, 10));
    const odd = (id: string): boolean => id.endsWith('1');
    expect(copy.search(queries[3]!, 10, odd)).toEqual(index.search(queries[3]!, 10, odd));
    // The restored index keeps working: adds reuse the two deleted slots, then grow.
    copy.addMany(items.slice(500, 520));
    copy.remove('v0');
    expect(copy.size).toBe(517);
    expect(copy.search(data[510]!, 1)[0]!.id).toBe('v510');
    index.dispose();
    copy.dispose();
  });

  it('snapshot() of an empty index restores to an empty index', async () => {
    const empty = await HnswIndex.create({ dimensions: 4 });
    const copy = await HnswIndex.restore(empty.snapshot());
    expect(copy.size).toBe(0);
    copy.add('a', v(1, 0, 0, 0));
    const hits = copy.search(v(1, 0, 0, 0), 3);
    expect(hits.map((h) => h.id)).toEqual(['a']);
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    empty.dispose();
    copy.dispose();
  });

  it('restore() throws IndexError for corrupt or truncated bytes', async () => {
    const bytes = built.snapshot();
    const flipped = bytes.slice();
    flipped[Math.floor(bytes.length / 2)]! ^= 0x01;
    await expect(HnswIndex.restore(flipped)).rejects.toThrow(IndexError);
    await expect(HnswIndex.restore(bytes.subarray(0, bytes.length - 1000))).rejects.toThrow(IndexError);
    await expect(HnswIndex.restore(bytes.subarray(0, 20))).rejects.toThrow(IndexError);
    await expect(HnswIndex.restore(new Uint8Array(0))).rejects.toThrow(IndexError);
    await expect(HnswIndex.restore(ExactIndex.create({ dimensions: 3 }).snapshot())).rejects.toThrow(IndexError);
  });

  it('restore() throws IndexError for well-formed envelopes around invalid hnswlib data', async () => {
    const parts = decodeSnapshot(built.snapshot(), 'hnsw');
    const badLink = parts.payload.slice();
    // First neighbour of element 0 at level 0 (header 56 bytes, then the link count word): point it out of range.
    new DataView(badLink.buffer).setUint32(56 + 4, 0x7fffffff, true);
    await expect(HnswIndex.restore(encodeSnapshot({ ...parts, payload: badLink }))).rejects.toThrow(
      /link to a missing element/,
    );
    const cut = parts.payload.subarray(0, parts.payload.length - 4);
    await expect(HnswIndex.restore(encodeSnapshot({ ...parts, payload: cut }))).rejects.toThrow(IndexError);
    await expect(HnswIndex.restore(encodeSnapshot({ ...parts, dimensions: DIMS + 1 }))).rejects.toThrow(IndexError);
    await expect(HnswIndex.restore(encodeSnapshot({ ...parts, ids: parts.ids.slice(1) }))).rejects.toThrow(
      /does not match/,
    );
    const relabelled = parts.ids.map((entry, i) => (i === 1 ? { ...entry, label: parts.ids[0]!.label } : entry));
    await expect(HnswIndex.restore(encodeSnapshot({ ...parts, ids: relabelled }))).rejects.toThrow(/does not match/);
    await expect(HnswIndex.restore(encodeSnapshot({ ...parts, dimensions: 0 }))).rejects.toThrow(IndexError);
    await expect(HnswIndex.restore(encodeSnapshot({ ...parts, params: parts.params.slice(0, 2) }))).rejects.toThrow(
      IndexError,
    );
    // The module is unharmed: the real snapshot still opens.
    const ok = await HnswIndex.restore(encodeSnapshot(parts));
    expect(ok.size).toBe(2000);
    ok.dispose();
  });

  it('restore() reads a snapshot written by the hnswlib-wasm 0.8.2 build that engram used before its own', async () => {
    // Made by HnswIndex on hnswlib-wasm: 60 vectors of 16 dimensions (vector i: sin(7.1 i + 1.3 j), plus 2 at j = i mod 16),
    // 'twin' added with m5's vector, then m3, m17 and m42 removed.
    const dims = 16;
    const vec = (i: number): Float32Array =>
      Float32Array.from({ length: dims }, (_, j) => Math.sin(i * 7.1 + j * 1.3) + (j === i % dims ? 2 : 0));
    const fixture = new Uint8Array(readFileSync(new URL('./fixtures/hnswlib-wasm-0.8.2.snapshot', import.meta.url)));
    const index = await HnswIndex.restore(fixture);
    // snapshot() writes hnswlib's file itself (not through saveIndex): byte for byte what hnswlib-wasm's saveIndex wrote.
    expect(decodeSnapshot(index.snapshot(), 'hnsw').payload).toEqual(decodeSnapshot(fixture, 'hnsw').payload);
    expect(index.size).toBe(58);
    expect(index.tombstones).toBe(3);
    expect(index.capacity).toBe(64);
    const top = index.search(vec(10), 3);
    expect(top.map((h) => h.id)).toEqual(['m10', 'm26', 'm25']);
    expect(top[1]!.score).toBeCloseTo(0.93115, 4);
    expect(
      index
        .search(vec(5), 2)
        .map((h) => h.id)
        .sort(),
    ).toEqual(['m5', 'twin']);
    for (const gone of ['m3', 'm17', 'm42']) expect(index.has(gone)).toBe(false);
    expect(index.search(vec(3), 58).some((h) => h.id === 'm3')).toBe(false);
    // New vectors take over the three deleted slots: no growth.
    index.addMany([61, 62, 63].map((i) => ({ id: `n${i}`, vector: vec(i) })));
    expect(index.tombstones).toBe(0);
    expect(index.capacity).toBe(64);
    expect(index.search(vec(62), 1)[0]!.id).toBe('n62');
    index.dispose();
  });

  it('search() scores are the exact cosine for dimensions that are not a multiple of the SIMD width', async () => {
    for (const dims of [1, 3, 7, 19, 33]) {
      const vectors = clusteredVectors({ count: 200, dimensions: dims, clusters: 5, seed: dims });
      const index = await HnswIndex.create({ dimensions: dims });
      const exactIndex = ExactIndex.create({ dimensions: dims });
      const rows = vectors.map((vector, i) => ({ id: `d${i}`, vector }));
      index.addMany(rows);
      exactIndex.addMany(rows);
      const query = clusteredVectors({ count: 1, dimensions: dims, clusters: 5, seed: 100 + dims })[0]!;
      const truth = new Map(exactIndex.search(query, 200).map((h) => [h.id, h.score]));
      for (const hit of index.search(query, 10)) expect(hit.score).toBeCloseTo(truth.get(hit.id)!, 5);
      index.dispose();
    }
  });

  it('dispose() is idempotent and later calls throw ClosedError', async () => {
    const index = await HnswIndex.create({ dimensions: 2 });
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

describe('HnswIndex with many identical vectors', () => {
  const DIM = 16;
  const shared = clusteredVectors({ count: 1, dimensions: DIM, seed: 41 })[0]!;
  const others = clusteredVectors({ count: 600, dimensions: DIM, clusters: 12, seed: 42 });
  /** 1500 copies of one vector (the same text stored for many users), ids c0…, user = i % 10, and 600 distinct vectors. */
  const copies = Array.from({ length: 1500 }, (_, i) => ({ id: `c${i}`, vector: shared.slice() }));
  const distinct = others.map((vector, i) => ({ id: `d${i}`, vector }));
  const userOf = (id: string): number => Number(id.slice(1)) % 10;

  it("share one node: a search filtered to one user finds that user's copies first", async () => {
    const index = await HnswIndex.create({ dimensions: DIM, capacity: 1024 });
    index.addMany([...copies.slice(0, 700), ...distinct]);
    for (const item of copies.slice(700)) index.add(item.id, item.vector);
    expect(index.size).toBe(2100);
    // 601 nodes: the copies take one slot, so 1024 slots were never outgrown.
    expect(index.capacity).toBe(1024);
    const user3 = (id: string): boolean => userOf(id) === 3;
    const hits = index.search(shared, 40, user3);
    expect(hits).toHaveLength(40);
    for (const hit of hits) {
      expect(hit.id.startsWith('c') && user3(hit.id)).toBe(true);
      expect(hit.score).toBeCloseTo(1, 5);
    }
    // Unfiltered: k ids even though the nearest node holds them all.
    expect(index.search(shared, 25)).toHaveLength(25);
    // Near a distinct vector, the copies come after the closer distinct ones, as in an exact scan.
    const exact = ExactIndex.create({ dimensions: DIM });
    exact.addMany([...copies, ...distinct]);
    const truth = exact.search(others[5]!, 5, user3);
    const found = index.search(others[5]!, 5, user3);
    expect(found).toHaveLength(5);
    found.forEach((hit, i) => {
      expect(hit.score).toBeCloseTo(truth[i]!.score, 5);
    });
    expect(index.similarities(others[5]!, ['c3', 'c13', 'd5']).get('c13')).toBeCloseTo(
      index.similarities(others[5]!, ['c3']).get('c3')!,
      6,
    );
    index.dispose();
  });

  it('removing and changing copies keeps the rest; the last copy removed frees the node', async () => {
    const index = await HnswIndex.create({ dimensions: DIM, capacity: 64 });
    index.addMany([...copies.slice(0, 20), ...distinct.slice(0, 20)]);
    expect(index.remove('c0')).toBe(true);
    expect(index.has('c0')).toBe(false);
    expect(index.tombstones).toBe(0);
    expect(
      index
        .search(shared, 19)
        .map((h) => h.id)
        .sort(),
    ).toEqual(
      copies
        .slice(1, 20)
        .map((c) => c.id)
        .sort(),
    );
    // A copy given another vector leaves the node and is found at its new place.
    index.add('c1', others[300]!);
    expect(index.search(others[300]!, 1)[0]!.id).toBe('c1');
    expect(
      index
        .search(shared, 40)
        .filter((h) => h.score > 0.9999)
        .map((h) => h.id),
    ).not.toContain('c1');
    // Re-adding an unchanged vector changes nothing.
    index.add('d3', distinct[3]!.vector);
    expect(index.tombstones).toBe(0);
    for (let i = 2; i < 20; i++) index.remove(`c${i}`);
    expect(index.tombstones).toBe(1);
    expect(index.size).toBe(21);
    expect(index.search(shared, 21).some((h) => h.id.startsWith('c') && h.id !== 'c1')).toBe(false);
    index.dispose();
  });

  it('snapshot() keeps the shared nodes: a restored index adds further copies to them', async () => {
    const index = await HnswIndex.create({ dimensions: DIM, capacity: 64 });
    index.addMany([...copies.slice(0, 30), ...distinct.slice(0, 30)]);
    const copy = await HnswIndex.restore(index.snapshot());
    expect(copy.size).toBe(60);
    copy.addMany(copies.slice(30, 100));
    expect(copy.size).toBe(130);
    expect(copy.capacity).toBe(64);
    expect(copy.search(shared, 100, (id) => id.startsWith('c'))).toHaveLength(100);
    index.dispose();
    copy.dispose();
  });

  it('restore() refuses ids of one node that disagree on its vector hash, and reads snapshots without hashes', async () => {
    const index = await HnswIndex.create({ dimensions: DIM, capacity: 64 });
    index.addMany([...copies.slice(0, 3), ...distinct.slice(0, 3)]);
    const parts = decodeSnapshot(index.snapshot(), 'hnsw');
    const c0 = parts.ids.find((e) => e.id === 'c0')!;
    const c1 = parts.ids.find((e) => e.id === 'c1')!;
    expect(c1.label).toBe(c0.label);
    expect(c0.flags).not.toBe(0);
    const tampered = parts.ids.map((e) => (e.id === 'c1' ? { ...e, flags: e.flags ^ 1 } : e));
    await expect(HnswIndex.restore(encodeSnapshot({ ...parts, ids: tampered }))).rejects.toThrow(IndexError);
    // An older snapshot (no hashes): it restores; an unchanged re-add is still recognised, and a new copy still searchable.
    const old = await HnswIndex.restore(encodeSnapshot({ ...parts, ids: parts.ids.map((e) => ({ ...e, flags: 0 })) }));
    old.add('d1', distinct[1]!.vector);
    expect(old.tombstones).toBe(0);
    old.add('c9', shared.slice());
    expect(old.search(shared, 4, (id) => id.startsWith('c'))).toHaveLength(4);
    index.dispose();
    old.dispose();
  });
});

describe('HnswIndex filtered search far from the allowed ids', () => {
  it('search() with a filter that allows a tenth of the ids returns the k best allowed, best first', async () => {
    const dims = 32;
    // Tight clusters; "ours" are every tenth vector, and queries sit among the others' near duplicates.
    const vectors = clusteredVectors({ count: 6000, dimensions: dims, clusters: 30, spread: 0.15, seed: 41 });
    const items = vectors.map((vector, i) => ({ id: `v${i}`, vector }));
    const index = await HnswIndex.create({ dimensions: dims, capacity: 8192 });
    index.addMany(items);
    const truth = ExactIndex.create({ dimensions: dims });
    const ours = (id: string): boolean => Number(id.slice(1)) % 10 === 3;
    truth.addMany(items.filter((i) => ours(i.id)));
    let found = 0;
    let wanted = 0;
    for (let q = 0; q < 30; q++) {
      const query = vectors[q * 199 + 1]!;
      const hits = index.search(query, 40, ours);
      expect(hits).toHaveLength(40);
      expect(hits.every((h) => ours(h.id))).toBe(true);
      expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
      const best = new Set(truth.search(query, 40).map((h) => h.id));
      found += hits.filter((h) => best.has(h.id)).length;
      wanted += 40;
    }
    expect(found / wanted).toBeGreaterThan(0.95);
    index.dispose();
  });
});
