// A vector state being made whose catch-up fails is disposed, not left registered with the store:
// its log position would hold the change log's compaction back for as long as the store stays open.
import { afterEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { VectorState } from '../../lib/engine/vectors/vector-state.js';
import { Engram, StoreError } from '../../lib/index.js';
import { EngramDb } from '../../lib/store/schema.js';
import { getSnapshot, putSnapshot } from '../../lib/store/snapshot-chunks.js';
import { ExactIndex } from '../../lib/vector/exact-index.js';
import { HnswIndex } from '../../lib/vector/hnsw-index.js';
import type { VectorIndex } from '../../lib/vector/vector-index.js';

const embedder = (): HashEmbedder => new HashEmbedder({ dimensions: 64 });
const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;

afterEach(() => {
  vi.restoreAllMocks();
});

/** Makes the first or every VectorState catch-up fail; returns the states it failed and the dispose spy. */
function failCatchUps(which: 'first' | 'every'): { failed: VectorState[]; dispose: MockInstance } {
  const failed: VectorState[] = [];
  const fail = function (this: VectorState): Promise<void> {
    failed.push(this);
    return Promise.reject(new StoreError('the change log could not be read'));
  };
  const catchUp = vi.spyOn(VectorState.prototype, 'catchUp');
  if (which === 'first') catchUp.mockImplementationOnce(fail);
  else catchUp.mockImplementation(fail);
  return { failed, dispose: vi.spyOn(VectorState.prototype, 'dispose') };
}

describe('VectorState when its catch-up fails', () => {
  it('open() disposes the state restored from a snapshot whose catch-up throws, then rebuilds and answers', async () => {
    const name = unique('letgo');
    const a = await Engram.open({ name, embedder: embedder() });
    for (let i = 0; i < 12; i++) await a.add(`note number ${i} about the harbour`, { userId: 'u' });
    await a.close();
    // The first catch-up (the restored state's) fails; the rebuild's runs as it is.
    const { failed, dispose } = failCatchUps('first');
    const b = await Engram.open({ name, embedder: embedder() });
    try {
      const ready = await b.ready();
      expect(failed).toHaveLength(1);
      expect(dispose.mock.contexts).toContain(failed[0]);
      expect(ready.index).toBe('rebuild');
      expect(ready.size).toBe(12);
      const { results } = await b.search('note number 7 about the harbour', { userId: 'u', mode: 'vector', limit: 1 });
      expect(results[0]?.memory).toBe('note number 7 about the harbour');
    } finally {
      await b.close();
    }
  });

  it('open() disposes the state rebuilt from the store whose catch-up throws, and reports the error', async () => {
    const name = unique('letgo-rebuild');
    const a = await Engram.open({ name, embedder: embedder() });
    await a.add('a single note', { userId: 'u' });
    await a.close();
    const { failed, dispose } = failCatchUps('every');
    const outcome = await Engram.open({ name, embedder: embedder() }).then(
      async (b) => {
        try {
          await b.ready();
          return 'ready';
        } catch (e) {
          return e;
        } finally {
          vi.restoreAllMocks();
          await b.close();
        }
      },
      (e: unknown) => e,
    );
    expect(outcome).toBeInstanceOf(StoreError);
    expect(failed.length).toBeGreaterThan(0);
    for (const state of failed) expect(dispose.mock.contexts).toContain(state);
  });

  it('open() lets the restored index go when the buffer of unmerged vectors of its snapshot does not restore, then rebuilds', async () => {
    const name = unique('letgo-pending');
    const a = await Engram.open({ name, embedder: embedder() });
    for (let i = 0; i < 12; i++) await a.add(`note number ${i} about the harbour`, { userId: 'u' });
    await a.close();
    // The record's buffer of unmerged vectors damaged (its index restores, the buffer does not).
    const db = new EngramDb(name);
    await db.open();
    const stored = (await getSnapshot(db, 'indexSnapshot'))!.value as Record<string, unknown> & { bytes: Uint8Array };
    await putSnapshot(db, 'indexSnapshot', { ...stored, pending: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]) });
    db.close();
    const restored: VectorIndex[] = [];
    const hnswRestore = HnswIndex.restore.bind(HnswIndex);
    vi.spyOn(HnswIndex, 'restore').mockImplementationOnce(async (...args) => {
      const index = await hnswRestore(...args);
      restored.push(index);
      return index;
    });
    const exactRestore = ExactIndex.restore.bind(ExactIndex);
    vi.spyOn(ExactIndex, 'restore').mockImplementationOnce((...args) => {
      const index = exactRestore(...args);
      restored.push(index);
      return index;
    });
    const disposedHnsw = vi.spyOn(HnswIndex.prototype, 'dispose');
    const disposedExact = vi.spyOn(ExactIndex.prototype, 'dispose');
    const b = await Engram.open({ name, embedder: embedder() });
    try {
      const ready = await b.ready();
      expect(ready.index).toBe('rebuild');
      expect(ready.size).toBe(12);
      // The snapshot's index restored (the first restore), and was let go when its buffer did not.
      const main = restored[0]!;
      expect([...disposedHnsw.mock.contexts, ...disposedExact.mock.contexts]).toContain(main);
      const { results } = await b.search('note number 3 about the harbour', { userId: 'u', mode: 'vector', limit: 1 });
      expect(results[0]?.memory).toBe('note number 3 about the harbour');
    } finally {
      await b.close();
    }
  });
});
