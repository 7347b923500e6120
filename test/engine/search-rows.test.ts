import { describe, expect, it, vi } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { EngineStore } from '../../lib/engine/engine-store.js';
import { addMemories, type MemoryInput } from '../../lib/engine/memories/memories.js';
import { searchMemories } from '../../lib/engine/memories/memory-search.js';
import { openStore } from '../../lib/engine/open-store.js';
import { SemanticIndex } from '../../lib/engine/vectors/semantic-index.js';
import { compileFilters } from '../../lib/search/filters.js';
import { manualClock } from '../helpers.js';

describe('search() reads rows for the best ranked only', () => {
  it('when the best ranked fail the filter on a second look (expired since the index saw them), the next ones are read until the limit is met', async () => {
    const clock = manualClock();
    const { db, deviceId } = await openStore(`search-rows-${Math.random().toString(36).slice(2)}`);
    const core = new EngineStore(db, { maxContentBytes: 1_000_000, now: clock.now, deviceId });
    const semantic = new SemanticIndex(core, new HashEmbedder({ dimensions: 128 }), undefined);
    const memory = (text: string, expiresAt?: number): MemoryInput => ({
      text,
      tier: 'long_term',
      scope: { userId: 'ana' },
      metadata: {},
      ...(expiresAt === undefined ? {} : { expiresAt }),
    });
    // Twelve close matches that expire, then five lasting ones further from the query.
    await addMemories(core, semantic, [
      ...Array.from({ length: 12 }, (_, i) => memory(`harbour boats sail at dawn ${i}`, clock.now() + 1000)),
      ...Array.from({ length: 5 }, (_, i) => memory(`harbour boats rest ${i}`)),
    ]);
    clock.advance(5000);
    for (const mode of ['hybrid', 'vector', 'keyword'] as const) {
      const hits = await searchMemories(core, semantic, 'harbour boats sail at dawn', {
        filter: compileFilters({}),
        limit: 3,
        mode,
      });
      expect(
        hits.map((h) => h.row.text),
        mode,
      ).toHaveLength(3);
      for (const h of hits) expect(h.row.text, mode).toMatch(/^harbour boats rest/);
    }
    await semantic.close();
    core.closeDb();
  });

  it('a vector or keyword search reads only the rows it returns, and with nothing new in the log it reads no change entry', async () => {
    const { db, deviceId } = await openStore(`search-rows-${Math.random().toString(36).slice(2)}`);
    const core = new EngineStore(db, { maxContentBytes: 1_000_000, now: Date.now, deviceId });
    const semantic = new SemanticIndex(core, new HashEmbedder({ dimensions: 64 }), undefined);
    await addMemories(
      core,
      semantic,
      Array.from({ length: 40 }, (_, i) => ({
        text: `harbour boats number ${i} sail`,
        tier: 'long_term',
        scope: { userId: 'ana' },
        metadata: {},
      })),
    );
    // Settled: the indexes have caught up with everything logged.
    await searchMemories(core, semantic, 'harbour', { filter: compileFilters({}), limit: 5, mode: 'hybrid' });
    // Counted at IndexedDB itself: the rows are read beside the log head, below Dexie's table API.
    const get = vi.spyOn(IDBObjectStore.prototype, 'get');
    const changesAbove = vi.spyOn(db.changes, 'where');
    for (const mode of ['vector', 'keyword'] as const) {
      get.mockClear();
      const hits = await searchMemories(core, semantic, 'harbour boats sail', {
        filter: compileFilters({}),
        limit: 5,
        mode,
      });
      expect(hits, mode).toHaveLength(5);
      const rowsRead = get.mock.contexts.filter((store) => (store as IDBObjectStore).name === 'memories');
      expect(rowsRead, mode).toHaveLength(5);
    }
    get.mockRestore();
    expect(changesAbove).not.toHaveBeenCalled();
    await semantic.close();
    core.closeDb();
  });
});
