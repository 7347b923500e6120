// What the desktop's import view relies on, in real Chromium IndexedDB (fake-indexeddb
// in Node does not enforce transaction lifetimes): Engram.import() of an export with
// a hundred memories, in both modes. Small files passing and larger ones failing
// with PrematureCommitError means something inside the write transaction awaits a
// promise that is not IndexedDB's.
import { expect, it } from 'vitest';
import { Engram, HashEmbedder } from '../../lib/index.js';

for (const mode of ['replace', 'merge'] as const) {
  it(`Engram.import() writes an export of 100 memories (${mode})`, async () => {
    const stamp = `${mode}-${Date.now()}`;
    const source = await Engram.open({
      name: `desktop-import-src-${stamp}`,
      embedder: new HashEmbedder({ dimensions: 16 }),
    });
    await source.add(
      Array.from({ length: 100 }, (_, i) => ({
        role: 'user',
        content: `The teacher number ${i} likes gardening on day ${i % 7}`,
      })),
      { userId: 'zoe' },
    );
    const file = await source.export();
    await source.close();
    const target = await Engram.import(file, {
      name: `desktop-import-dst-${stamp}`,
      mode,
      embedder: new HashEmbedder({ dimensions: 16 }),
    });
    expect((await target.getAll({ limit: 1 })).total).toBe(100);
    expect((await target.search('teacher number 42', { mode: 'keyword', limit: 1 })).results[0]?.memory).toBe(
      'The teacher number 42 likes gardening on day 0',
    );
    await target.close();
  });
}
