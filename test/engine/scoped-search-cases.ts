/**
 * A scoped search is answered from the index's memory: its vector results equal
 * an exact scan of the scope's stored vectors (ids and scores), whether the
 * index is exact or HNSW, with vectors waiting in the buffer or merged, after
 * deletes, text updates and a forgotten scope; no other scope's memory ever
 * comes back; and no vector is read from IndexedDB. Shared by the Node
 * (fake-indexeddb) and Chromium (real IndexedDB, the WASM build) tests.
 */
import { expect } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { EngineStore } from '../../lib/engine/engine-store.js';
import { forgetScope } from '../../lib/engine/forget.js';
import { addMemories, deleteMemories, updateMemory, type MemoryInput } from '../../lib/engine/memories/memories.js';
import { searchMemories, SEARCH_MODES } from '../../lib/engine/memories/memory-search.js';
import { openStore } from '../../lib/engine/open-store.js';
import { SemanticIndex } from '../../lib/engine/vectors/semantic-index.js';
import { compileFilters } from '../../lib/search/filters.js';
import type { BufferedIndex } from '../../lib/vector/buffered-index.js';
import { ExactIndex } from '../../lib/vector/exact-index.js';
import { scopeScanWins } from '../../lib/vector/hnsw-index.js';

const DIMS = 48;
const embedder = new HashEmbedder({ dimensions: DIMS });
const WORDS =
  'harbour violin garden pepper comet lantern meadow glacier saffron walnut orchid falcon copper thistle canyon pebble'.split(
    ' ',
  );
const textOf = (i: number): string =>
  `${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]} ${WORDS[(i * 5 + 1) % WORDS.length]} note ${i}`;
const input = (i: number, userId: string): MemoryInput => ({
  text: textOf(i),
  tier: 'long_term',
  scope: { userId },
  metadata: {},
});
const QUERIES = ['harbour violin', 'garden pepper comet', 'lantern', 'glacier saffron walnut', 'falcon copper note'];

interface Core {
  core: EngineStore;
  semantic: SemanticIndex;
}

async function openCore(): Promise<Core> {
  const { db, deviceId } = await openStore(`scoped-search-${Math.random().toString(36).slice(2)}`);
  const core = new EngineStore(db, { maxContentBytes: 1_000_000, now: Date.now, deviceId });
  const semantic = new SemanticIndex(core, embedder, undefined);
  await semantic.ready();
  return { core, semantic };
}

async function close({ core, semantic }: Core): Promise<void> {
  await semantic.close();
  core.closeDb();
}

/** Counts reads of the `vectors` object store (gets, ranges, cursors, counts, through the store or an index of it) while `work` runs. */
export async function vectorReads<T>(work: () => Promise<T>): Promise<{ reads: number; result: T }> {
  let reads = 0;
  const names = ['get', 'getAll', 'getAllKeys', 'getKey', 'openCursor', 'openKeyCursor', 'count'] as const;
  const patched: [Record<string, (...args: unknown[]) => unknown>, string, (...args: unknown[]) => unknown][] = [];
  for (const proto of [IDBObjectStore.prototype, IDBIndex.prototype] as unknown as Record<
    string,
    (...args: unknown[]) => unknown
  >[]) {
    for (const n of names) {
      const real = proto[n]!;
      patched.push([proto, n, real]);
      proto[n] = function (this: IDBObjectStore | IDBIndex, ...args: unknown[]): unknown {
        const store = 'objectStore' in this ? this.objectStore.name : this.name;
        if (store === 'vectors') reads += 1;
        return real.apply(this, args);
      };
    }
  }
  try {
    const result = await work();
    return { reads, result };
  } finally {
    for (const [proto, n, real] of patched) proto[n] = real;
  }
}

/** Whether memory-search (40 candidates) scans a scope of `size` in `index` rather than walking HNSW (efSearch 64). */
function scansScope(index: BufferedIndex, size: number): boolean {
  return index.main.kind === 'exact' || scopeScanWins(size, 64, index.main.size);
}

/** Every live memory of `userId` with its stored vector, read from the store (outside any counted read). */
async function storedScope(core: EngineStore, userId: string): Promise<Map<string, Float32Array>> {
  const rows = (await core.db.memories.toArray()).filter((r) => r.deletedAt === undefined && r.userId === userId);
  const vectors = await core.db.vectors.bulkGet(rows.map((r) => r.id));
  return new Map(vectors.map((v, i) => [rows[i]!.id, v!.vector]));
}

/**
 * Checks every query in `userId`'s scope: vector results equal the exact scan of
 * the scope (ids, then similarities), every mode returns the scope's memories
 * only, and no vector was read. Returns the scope's size.
 */
async function expectExactScoped({ core, semantic }: Core, userId: string, label: string): Promise<number> {
  const scope = await storedScope(core, userId);
  // A scope too large a share of an HNSW index for the scan is walked (approximate): its hits are
  // then checked for their scores and scope, and for recall, not rank by rank.
  const scanned = scansScope((await semantic.ready()).state.index, scope.size);
  let found = 0;
  let wanted = 0;
  const truth = ExactIndex.create({ dimensions: DIMS });
  for (const [id, vector] of scope) truth.add(id, vector);
  const filter = compileFilters({ userId });
  const { reads } = await vectorReads(async () => {
    for (const query of QUERIES) {
      const q = (await embedder.embed([core.analyzer.queryText(query)]))[0]!;
      const want = truth.search(q, 10);
      const got = await searchMemories(core, semantic, query, { filter, limit: 10, mode: 'vector' });
      // The same hits as the scan: rank by rank the same similarity, each hit's own exact similarity
      // (where texts tie, either of the tied memories may come first), no id twice.
      const label2 = `${label}: ${userId} "${query}"`;
      expect(got.length, label2).toBe(want.length);
      expect(new Set(got.map((h) => h.row.id)).size, label2).toBe(got.length);
      const exactOf = truth.similarities(
        q,
        got.map((h) => h.row.id),
      );
      got.forEach((h, r) => {
        expect(h.similarity!, `${label2} ${h.row.id}`).toBeCloseTo(exactOf.get(h.row.id)!, 5);
        if (scanned) expect(h.similarity!, `${label2} rank ${r}`).toBeCloseTo(want[r]!.score, 5);
      });
      wanted += want.length;
      found += got.filter((h) => h.similarity! >= want[want.length - 1]!.score - 1e-5).length;
      if (!scanned) continue;
      // Where no tie straddles the cut, the ids are the scan's own.
      if (want.length < 10 || Math.abs(want[9]!.score - (truth.search(q, 11)[10]?.score ?? -2)) > 1e-5) {
        expect(new Set(got.map((h) => h.row.id)), label2).toEqual(new Set(want.map((h) => h.id)));
      }
      for (const mode of SEARCH_MODES) {
        const hits = await searchMemories(core, semantic, query, { filter, limit: 50, mode });
        for (const h of hits)
          expect(
            scope.has(h.row.id) && h.row.userId === userId,
            `${label}: ${mode} "${query}" returned ${h.row.id} of ${h.row.userId ?? 'no user'}`,
          ).toBe(true);
      }
    }
  });
  truth.dispose();
  expect(reads, `${label}: vector reads`).toBe(0);
  if (!scanned) expect(found / wanted, `${label}: ${userId} walked, recall@10`).toBeGreaterThanOrEqual(0.8);
  return scope.size;
}

/**
 * Below the crossover (an exact index): three users, searched, then after
 * deletes and updates of scope members.
 */
export async function exactIndexScopes(): Promise<void> {
  const c = await openCore();
  try {
    const { state } = await c.semantic.ready();
    await addMemories(
      c.core,
      c.semantic,
      Array.from({ length: 240 }, (_, i) => input(i, i % 8 === 0 ? 'ana' : i % 3 === 0 ? 'bo' : 'cy')),
      undefined,
      'off',
    );
    await state.idle();
    expect(state.index.kind).toBe('exact');
    for (const user of ['ana', 'bo', 'cy']) await expectExactScoped(c, user, 'exact index');
    const anas = (await c.core.db.memories.toArray()).filter((r) => r.userId === 'ana');
    await deleteMemories(
      c.core,
      c.semantic,
      anas.slice(0, 5).map((r) => r.id),
    );
    await updateMemory(c.core, c.semantic, anas[6]!.id, { text: 'harbour violin lantern, rewritten' });
    expect(await expectExactScoped(c, 'ana', 'exact index, after deletes and an update')).toBe(anas.length - 5);
    const hits = await searchMemories(c.core, c.semantic, 'harbour violin', {
      filter: compileFilters({ userId: 'ana' }),
      limit: 40,
      mode: 'vector',
    });
    for (const gone of anas.slice(0, 5)) expect(hits.some((h) => h.row.id === gone.id)).toBe(false);
  } finally {
    await close(c);
  }
}

/**
 * Past the crossover (HNSW behind the exact buffer): a small user (scanned), a
 * user of over half the store (the filtered walk) and the rest, with the vectors
 * waiting in the buffer, all merged, partly merged, after deletes and updates,
 * and after one scope is forgotten.
 */
export async function hnswIndexScopes(): Promise<void> {
  const c = await openCore();
  try {
    const { state } = await c.semantic.ready();
    const userOf = (i: number): string => (i % 20 === 0 ? 'ana' : i % 5 === 0 ? 'cy' : 'bo');
    await addMemories(
      c.core,
      c.semantic,
      Array.from({ length: 1200 }, (_, i) => input(i, userOf(i))),
      undefined,
      'off',
    );
    await state.idle();
    expect(state.index.kind).toBe('hnsw');
    const sizes = new Map<string, number>();
    // Whatever the merge in the background has moved so far (it starts when writing pauses).
    for (const user of ['ana', 'bo', 'cy']) sizes.set(user, await expectExactScoped(c, user, 'hnsw, buffered'));
    await state.mergeAll();
    expect(state.index.pending).toBe(0);
    // ana and cy are scanned, bo (most of the store) walked: both ways are checked.
    expect([...sizes].map(([user, n]) => [user, scansScope(state.index, n)])).toEqual([
      ['ana', true],
      ['bo', false],
      ['cy', true],
    ]);
    for (const user of ['ana', 'bo', 'cy']) await expectExactScoped(c, user, 'hnsw, merged');

    // New memories of ana wait in the buffer beside her merged ones; some merged ones go, one changes its text.
    await addMemories(
      c.core,
      c.semantic,
      Array.from({ length: 30 }, (_, i) => input(5000 + i, 'ana')),
      undefined,
      'off',
    );
    const anas = (await c.core.db.memories.toArray()).filter((r) => r.userId === 'ana');
    await deleteMemories(
      c.core,
      c.semantic,
      anas.slice(0, 8).map((r) => r.id),
    );
    await updateMemory(c.core, c.semantic, anas[10]!.id, { text: 'glacier saffron walnut, said differently' });
    await updateMemory(c.core, c.semantic, anas[anas.length - 1]!.id, { text: 'falcon copper note, a new one' });
    await state.idle();
    expect(await expectExactScoped(c, 'ana', 'hnsw, after deletes and updates')).toBe(anas.length - 8);
    await state.mergeAll();
    await expectExactScoped(c, 'ana', 'hnsw, after deletes and updates, merged');

    // A forgotten scope: nothing of it in any search, scoped to it or not.
    const cys = new Set((await c.core.db.memories.toArray()).filter((r) => r.userId === 'cy').map((r) => r.id));
    await forgetScope(c.core, { userId: 'cy' });
    for (const mode of SEARCH_MODES) {
      expect(
        await searchMemories(c.core, c.semantic, 'harbour violin', {
          filter: compileFilters({ userId: 'cy' }),
          limit: 50,
          mode,
        }),
      ).toEqual([]);
      const all = await searchMemories(c.core, c.semantic, 'harbour violin note', {
        filter: compileFilters({}),
        limit: 200,
        mode,
      });
      for (const h of all) expect(cys.has(h.row.id), `${mode}: forgotten ${h.row.id}`).toBe(false);
    }
    for (const user of ['ana', 'bo']) await expectExactScoped(c, user, 'hnsw, after forgetting cy');
  } finally {
    await close(c);
  }
}
