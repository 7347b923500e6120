import { afterEach, describe, expect, it, vi } from 'vitest';
import { EngineStore } from '../../lib/engine/engine-store.js';
import { forgetScope } from '../../lib/engine/forget.js';
import {
  closeKeywordState,
  flushKeywordState,
  keywordState,
  KeywordState,
} from '../../lib/engine/keywords/keyword-state.js';
import { openStore, resetStore } from '../../lib/engine/open-store.js';
import { readLastSeq } from '../../lib/store/change-log.js';
import { MESSAGE_CORPUS } from '../../lib/store/keyword-terms.js';
import { Engram, HashEmbedder } from '../../lib/index.js';
import { EngramDb } from '../../lib/store/schema.js';
import {
  MESSAGE_SCOPES,
  addMessages,
  churn,
  expectSameAsStored,
  freshCore,
  messageMaker,
  queries,
} from './keyword-state-cases.js';

const cores: EngineStore[] = [];
afterEach(() => {
  for (const core of cores.splice(0)) core.db.close();
});

async function core(): Promise<EngineStore> {
  const c = await freshCore();
  cores.push(c);
  return c;
}

/** Every `meta` row of the keyword snapshot (record, chunks, position), read straight from IndexedDB, as text. */
async function rawKeywordSnapshot(name: string): Promise<string> {
  const db = new EngramDb(name);
  await db.open();
  try {
    const rows = await db.meta.where('key').startsWith('keywordSnapshot').toArray();
    return JSON.stringify(rows, (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Int32Array) : v));
  } finally {
    db.close();
  }
}

describe('KeywordState', () => {
  it('search() ranks like the IndexedDB keyword search, scoped and unscoped, as writes, updates and deletes arrive through the log', async () => {
    for (const [seed, vocabulary] of [
      [11, 1500],
      [12, 40],
    ] as const) {
      const c = await core();
      const make = messageMaker(seed, vocabulary);
      let rows = Array.from({ length: 600 }, make);
      await addMessages(c, rows);
      const indexed = await c.db.terms.count();
      const state = await KeywordState.load(c);
      expect(state.origin).toBe('rebuild');
      // Written after the load: seen by the catch-up before each search.
      const more = Array.from({ length: 300 }, make);
      await addMessages(c, more);
      rows = await churn(c, [...rows, ...more], seed + 1);
      expect(state.postings(MESSAGE_CORPUS).size).toBe(indexed);
      for (const q of queries(seed + 2, 25, vocabulary)) {
        await expectSameAsStored(c, MESSAGE_CORPUS, q, 10, () => state.search(MESSAGE_CORPUS, q, { depth: 10 }));
        for (const scope of MESSAGE_SCOPES) {
          await expectSameAsStored(
            c,
            MESSAGE_CORPUS,
            q,
            10,
            () => state.search(MESSAGE_CORPUS, q, { depth: 10, accept: (_, f) => scope(f) }),
            scope,
          );
        }
      }
      expect(state.postings(MESSAGE_CORPUS).size).toBe(await c.db.terms.count());
    }
  });

  it('load() restores from the snapshot, replays the changes after it, and agrees with a rebuild', async () => {
    const c = await core();
    const make = messageMaker(21, 300);
    await addMessages(c, Array.from({ length: 400 }, make));
    const first = await KeywordState.load(c);
    await first.snapshot();
    const later = Array.from({ length: 50 }, make);
    await addMessages(c, later);
    await churn(c, later, 22);
    // The churn deleted messages: a deletion drops the snapshot (it holds their words), so take it again.
    expect(await c.db.meta.get('keywordSnapshot')).toBeUndefined();
    await first.catchUp();
    await first.snapshot();
    await addMessages(c, Array.from({ length: 20 }, make));
    const restored = await KeywordState.load(c);
    expect(restored.origin).toBe('snapshot');
    const rebuilt = await KeywordState.rebuild(c);
    expect(restored.seq).toBe(rebuilt.seq);
    for (const q of queries(23, 30, 300)) {
      expect(await restored.search(MESSAGE_CORPUS, q, { depth: 10 })).toEqual(
        await rebuilt.search(MESSAGE_CORPUS, q, { depth: 10 }),
      );
      await expectSameAsStored(c, MESSAGE_CORPUS, q, 10, () => restored.search(MESSAGE_CORPUS, q, { depth: 10 }));
    }
  });

  it('load() rebuilds when the snapshot is corrupt, or the store changed behind it, or the analyzer changed', async () => {
    const c = await core();
    await addMessages(c, Array.from({ length: 120 }, messageMaker(31, 80)));
    const state = await KeywordState.load(c);
    await state.snapshot();
    expect((await KeywordState.load(c)).origin).toBe('snapshot');
    // A terms row gone without a change-log entry: the counts disagree.
    const row = (await c.db.terms.toCollection().first())!;
    await c.db.terms.delete([row.c, row.d]);
    expect((await KeywordState.load(c)).origin).toBe('rebuild');
    await c.db.terms.put(row);
    expect((await KeywordState.load(c)).origin).toBe('snapshot');
    await c.db.meta.put({ key: 'analyzer', value: { id: 'another/9' } });
    expect((await KeywordState.load(c)).origin).toBe('rebuild');
    await c.db.meta.put({
      key: 'keywordSnapshot',
      value: { seq: 1, analyzerId: 'another/9', messages: { version: 1, ids: ['x'] }, memories: {}, at: 0 },
    });
    const rebuilt = await KeywordState.load(c);
    expect(rebuilt.origin).toBe('rebuild');
    expect(rebuilt.postings(MESSAGE_CORPUS).size).toBe(await c.db.terms.count());
  });

  it('snapshot() does not write back a copy taken before a deletion committed', async () => {
    const c = await core();
    const make = messageMaker(41, 60);
    const rows = Array.from({ length: 30 }, make);
    await addMessages(c, rows);
    const state = await KeywordState.load(c);
    await state.catchUp();
    // The copy is taken at the current seq; a deletion commits before it is written.
    const pending = state.snapshot();
    await c.write(async () => ({
      changes: [{ table: 'messages', op: 'delete', id: rows[0]!.id, before: rows[0]! }],
      result: undefined,
    }));
    await pending;
    expect(await c.db.meta.get('keywordSnapshot')).toBeUndefined();
    expect(state.unsnapshotted).toBe(Infinity);
  });

  it('reset() empties the postings after the store was reset', async () => {
    const c = await core();
    await addMessages(c, Array.from({ length: 50 }, messageMaker(41, 20)));
    const state = await KeywordState.load(c);
    expect((await state.search(MESSAGE_CORPUS, 'w0')).total).toBeGreaterThan(0);
    await resetStore(c.db);
    await state.reset();
    expect(await state.search(MESSAGE_CORPUS, 'w0')).toEqual({
      hits: [],
      total: 0,
      bound: expect.any(Number) as number,
    });
    await addMessages(c, [{ ...messageMaker(42, 5)(), content: 'w0 w0' }]);
    expect((await state.search(MESSAGE_CORPUS, 'w0')).total).toBe(1);
  });

  it('recall.textSearch() and keyword search() see writes made after a reopen from the snapshot', async () => {
    const name = `kw-engram-${Math.random().toString(36).slice(2)}`;
    const embedder = new HashEmbedder({ dimensions: 32 });
    const a = await Engram.open({ name, embedder });
    await a.conversation('t1', { userId: 'ana' }).add([{ role: 'user', content: 'The ferry to Hydra leaves at noon' }]);
    await a.add('Ana keeps bees on the roof', { userId: 'ana' });
    expect((await a.recall.textSearch('ferry')).results).toHaveLength(1);
    expect((await a.search('bees', { userId: 'ana', mode: 'keyword' })).results).toHaveLength(1);
    await a.close();
    const b = await Engram.open({ name, embedder });
    await b.conversation('t2', { userId: 'bo' }).add([{ role: 'user', content: 'Another ferry, to Paros' }]);
    await b.add('Bo keeps bees too', { userId: 'bo' });
    expect((await b.recall.textSearch('ferry')).results).toHaveLength(2);
    expect((await b.recall.textSearch('ferry', { userId: 'bo' })).results.map((m) => m.content)).toEqual([
      'Another ferry, to Paros',
    ]);
    expect((await b.search('bees', { userId: 'bo', mode: 'keyword' })).results.map((r) => r.memory)).toEqual([
      'Bo keeps bees too',
    ]);
    await b.delete((await b.search('bees', { userId: 'ana', mode: 'keyword' })).results[0]!.id);
    expect((await b.search('bees', { mode: 'keyword' })).results.map((r) => r.memory)).toEqual(['Bo keeps bees too']);
    await b.close();
  });
  it("the shared state follows this instance's writes without reading them; another instance's are caught up before a search", async () => {
    const c = await core();
    const make = messageMaker(51, 200);
    await addMessages(c, Array.from({ length: 200 }, make));
    const state = await keywordState(c);
    const bulkGet = vi.spyOn(c.db.terms, 'bulkGet');
    const rows = Array.from({ length: 300 }, make);
    await addMessages(c, rows);
    await churn(c, rows, 52);
    await state.settle();
    // Applied from what the writes logged: no catch-up read the terms rows.
    expect(bulkGet).not.toHaveBeenCalled();
    expect(state.seq).toBe(await readLastSeq(c.db));
    expect(state.postings(MESSAGE_CORPUS).size).toBe(await c.db.terms.count());
    // Another instance over the same database writes in between: this one's next write does not follow its seq.
    const { db: otherDb } = await openStore(c.db.name);
    const other = new EngineStore(otherDb, c.settings);
    await addMessages(other, Array.from({ length: 40 }, make));
    await addMessages(c, Array.from({ length: 40 }, make));
    await state.settle();
    expect(state.seq).toBeLessThan(await readLastSeq(c.db));
    for (const q of queries(53, 20, 200))
      await expectSameAsStored(c, MESSAGE_CORPUS, q, 10, () => state.search(MESSAGE_CORPUS, q, { depth: 10 }));
    otherDb.close();
    await closeKeywordState(c);
  });

  it('flush() after writes alone leaves a snapshot of the last log position, and the next load restores it', async () => {
    const c = await core();
    const make = messageMaker(61, 150);
    await keywordState(c);
    for (let i = 0; i < 5; i++) await addMessages(c, Array.from({ length: 100 }, make));
    await flushKeywordState(c);
    const record = (await c.db.meta.get('keywordSnapshot'))?.value as { seq: number } | undefined;
    expect(record?.seq).toBe(await readLastSeq(c.db));
    const restored = await KeywordState.load(c);
    expect(restored.origin).toBe('snapshot');
    for (const q of queries(62, 20, 150))
      await expectSameAsStored(c, MESSAGE_CORPUS, q, 10, () => restored.search(MESSAGE_CORPUS, q, { depth: 10 }));
    await closeKeywordState(c);
  });

  it('snapshot() does not write back a copy taken before the store was reset (its generation moved)', async () => {
    const c = await core();
    const rows = Array.from({ length: 30 }, messageMaker(71, 40));
    rows[0] = { ...rows[0]!, content: 'the axolotl sleeps' };
    await addMessages(c, rows);
    const state = await KeywordState.load(c);
    const pending = state.snapshot();
    await resetStore(c.db);
    await pending;
    expect(await rawKeywordSnapshot(c.db.name)).not.toContain('axolotl');
  });

  it('forget() leaves none of the forgotten words or ids in the keyword snapshot rows, nor does a snapshot in flight', async () => {
    const embedder = new HashEmbedder({ dimensions: 32 });
    const name = `kw-forget-${Math.random().toString(36).slice(2)}`;
    const a = await Engram.open({ name, embedder });
    const ana = await a.add(
      [
        { role: 'user', content: 'Ana feeds the quokka at dawn' },
        { role: 'user', content: 'Ana sails a zeppelin' },
      ],
      { userId: 'ana', dedupe: 'off' },
    );
    await a.conversation('t1', { userId: 'ana' }).add([{ role: 'user', content: 'my narwhal is ill' }]);
    await a.add('Ben keeps a parrot', { userId: 'ben' });
    await a.flush();
    // The snapshot was written without any search: it holds both users' words now.
    let raw = await rawKeywordSnapshot(name);
    for (const word of ['quokka', 'zeppelin', 'narwhal', 'parrot']) expect(raw).toContain(word);
    await a.forget({ userId: 'ana' });
    raw = await rawKeywordSnapshot(name);
    for (const word of ['quokka', 'zeppelin', 'narwhal']) expect(raw).not.toContain(word);
    for (const r of ana.results) expect(raw).not.toContain(r.id);
    await a.add('Ben paints a heron', { userId: 'ben' });
    await a.close();
    raw = await rawKeywordSnapshot(name);
    expect(raw).toContain('heron'); // close() wrote one again, after the forget
    for (const word of ['quokka', 'zeppelin', 'narwhal']) expect(raw).not.toContain(word);
    for (const r of ana.results) expect(raw).not.toContain(r.id);
    const b = await Engram.open({ name, embedder });
    expect((await b.search('quokka zeppelin', { mode: 'keyword' })).results).toEqual([]);
    expect((await b.search('parrot heron', { mode: 'keyword', userId: 'ben' })).results).toHaveLength(2);
    await b.close();

    // A copy taken just before a forget commits is never written after it.
    const c = await core();
    await addMessages(c, [
      { ...messageMaker(81, 10)(), userId: 'ana', content: 'the quokka hides' },
      { ...messageMaker(82, 10)(), userId: 'ben', content: 'the parrot sings' },
    ]);
    const state = await keywordState(c);
    await Promise.all([state.snapshot(), forgetScope(c, { userId: 'ana' })]);
    await state.settle();
    expect(await rawKeywordSnapshot(c.db.name)).not.toContain('quokka');
    await closeKeywordState(c);
    expect(await rawKeywordSnapshot(c.db.name)).not.toContain('quokka');
    expect(await rawKeywordSnapshot(c.db.name)).toContain('parrot');
  });
});
