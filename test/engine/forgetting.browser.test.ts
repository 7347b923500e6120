// Delete means forgotten, over real IndexedDB in Chromium: after delete(),
// conversation.clear() and forget({ userId }), no table holds the text, and
// other users' data is untouched and still found.
import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { Engram } from '../../lib/index.js';
import { EngramDb } from '../../lib/store/schema.js';
import { rawStore, tablesHolding } from './raw-store.js';

describe('forgetting in Chromium', () => {
  it('delete(), clear() and forget({ userId }) leave no text in any table; others stay', async () => {
    const name = `forget-browser-${Date.now()}`;
    const engram = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 32 }) });
    const gone = (await engram.add('Ana hides a quokka', { userId: 'ana', metadata: { m: 'mdsecret' } })).results[0]!
      .id;
    await engram.update(gone, 'Ana hides a zeppelin');
    await engram.add('Ana plays the theremin', { userId: 'ana', agentId: 'a1' });
    await engram.add('Ben keeps a heron', { userId: 'ben', agentId: 'a1' });
    await engram
      .conversation('ta', { userId: 'ana', agentId: 'a1' })
      .add({ role: 'user', content: 'my narwhal is ill' });
    const scratch = engram.conversation('tz', { userId: 'zoe' });
    await scratch.add({ role: 'user', content: 'the gondola was late' });
    await engram.conversation('tb', { userId: 'ben', agentId: 'a1' }).add({ role: 'user', content: 'my heron sings' });
    await engram.blocks('a1', { userId: 'ana' }).set('human', 'Ana, armadillo fan');
    await engram.blocks('a1', { userId: 'ben' }).set('human', 'Ben, heron fan');
    await engram.flush();
    await engram.delete(gone);
    await scratch.clear();
    let raw = await rawStore(name);
    for (const word of ['quokka', 'zeppelin', 'mdsecret', 'gondola'])
      expect(tablesHolding(raw, word), word).toEqual([]);

    const removed = await engram.forget({ userId: 'ana' });
    expect(removed).toMatchObject({ memories: 1, messages: 1, blocks: 1, vectors: 1 });
    await engram.close();
    raw = await rawStore(name);
    for (const word of ['quokka', 'zeppelin', 'theremin', 'narwhal', 'armadillo', 'gondola'])
      expect(tablesHolding(raw, word), word).toEqual([]);
    const db = new EngramDb(name);
    const ana = await db.memories.where('userId').equals('ana').toArray();
    db.close();
    expect(ana.every((m) => m.deletedAt !== undefined && m.text === '' && m.hash === '')).toBe(true);

    const again = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 32 }) });
    expect((await again.search('heron', { userId: 'ben' })).results.map((r) => r.memory)).toEqual([
      'Ben keeps a heron',
    ]);
    expect((await again.recall.textSearch('heron')).total).toBe(1);
    expect((await again.blocks('a1', { userId: 'ben' }).get('human'))!.value).toBe('Ben, heron fan');
    expect((await again.ready()).size).toBe(1);
    await again.close();
    indexedDB.deleteDatabase(name);
  });
});
