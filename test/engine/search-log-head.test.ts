import { describe, expect, it, vi } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { Engram } from '../../lib/index.js';

/**
 * A search ranks from the in-memory indexes as they stand and reads the log's head with its rows
 * in one read (an encrypted store too: its rows are opened after the read);
 * when another instance (tab) wrote since the indexes caught up, it catches up from that head and
 * ranks again. These tests hold the second path to what the first one skips.
 */
const embedder = (): HashEmbedder => new HashEmbedder({ dimensions: 64 });
const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;
const MODES = ['vector', 'hybrid', 'keyword'] as const;

async function texts(e: Engram, query: string, mode: (typeof MODES)[number], userId?: string): Promise<string[]> {
  const found = await e.search(query, { mode, limit: 5, ...(userId === undefined ? {} : { userId }) });
  return found.results.map((r) => r.memory);
}

function rawDatabase(name: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(name);
    request.onsuccess = () => {
      resolve(request.result);
    };
    request.onerror = () => {
      reject(request.error ?? new Error(`could not open ${name}`));
    };
  });
}

describe('search reads the log head and its rows, no more, and never answers from a moved log', () => {
  it.each([
    ['a plain store', 1, undefined],
    ['an encrypted store', 1, { passphrase: 'correct horse battery', kdfIterations: 1000 }],
  ] as const)(
    'with nothing logged since the indexes caught up, a search of %s reads the log head and its rows in %i read transaction(s) of the log and the memories',
    async (_store, transactions, encryption) => {
      const name = unique('head-read');
      // Counted at IndexedDB itself (a nested Dexie transaction opens none there): on the prototype of
      // the databases the global factory opens, before Dexie opens its own (it binds the method then).
      const opened = vi.spyOn(Object.getPrototypeOf(await rawDatabase(unique('probe'))) as IDBDatabase, 'transaction');
      const e = await Engram.open({ name, embedder: embedder(), ...(encryption === undefined ? {} : { encryption }) });
      await e.add(
        Array.from({ length: 30 }, (_, i) => ({ role: 'user' as const, content: `harbour boats number ${i} sail` })),
        { userId: 'ana' },
      );
      await e.search('harbour', { mode: 'hybrid', limit: 5 }); // caught up: both indexes at the log's end
      await e.flush(); // the snapshots the writes are due are taken now, not during the counted searches
      for (const mode of MODES) {
        opened.mockClear();
        expect(await texts(e, 'harbour boats sail', mode, 'ana'), mode).toHaveLength(5);
        // Background work of an encrypted store (its row ledger) may read `meta` alone meanwhile.
        const reads = opened.mock.calls.filter(([stores]) =>
          [stores].flat().some((store) => store === 'changes' || store === 'memories'),
        );
        expect(reads, mode).toHaveLength(transactions);
      }
      opened.mockRestore();
      await e.close();
    },
  );

  it("another instance's update, deletion and forget between two searches are seen by the next search, in every mode", async () => {
    const name = unique('moved');
    const a = await Engram.open({ name, embedder: embedder() });
    const b = await Engram.open({ name, embedder: embedder() });
    const [kept, changed, deleted] = (
      await a.add(
        [
          { role: 'user', content: 'the lighthouse keeper paints boats' },
          { role: 'user', content: 'the lighthouse keeper feeds gulls' },
          { role: 'user', content: 'the lighthouse keeper rows at night' },
        ],
        { userId: 'ana', dedupe: 'off' },
      )
    ).results.map((r) => r.id);
    await a.add('the lighthouse keeper of bea', { userId: 'bea' });
    for (const mode of MODES) expect(await texts(b, 'lighthouse keeper', mode, 'ana'), mode).toHaveLength(3);

    await a.update(changed!, 'the lighthouse keeper sings to whales');
    await a.delete(deleted!);
    for (const mode of MODES) {
      const found = await texts(b, 'lighthouse keeper whales', mode, 'ana');
      expect(found, mode).toContain('the lighthouse keeper sings to whales');
      expect(found, mode).not.toContain('the lighthouse keeper feeds gulls');
      expect(found, mode).not.toContain('the lighthouse keeper rows at night');
    }
    expect(kept).toBeDefined();

    await a.forget({ userId: 'ana' });
    for (const mode of MODES) {
      expect(await texts(b, 'lighthouse keeper', mode, 'ana'), mode).toEqual([]);
      expect(await texts(b, 'lighthouse keeper', mode), mode).toEqual(['the lighthouse keeper of bea']);
    }
    await a.close();
    await b.close();
  });

  it('another instance writing between the ranking and the read makes the search catch up and rank again', async () => {
    const name = unique('race');
    const a = await Engram.open({ name, embedder: embedder() });
    const b = await Engram.open({ name, embedder: embedder() });
    const [id] = (await a.add('the ferry leaves at noon', { userId: 'ana' })).results.map((r) => r.id);
    expect(await texts(b, 'ferry', 'vector', 'ana')).toEqual(['the ferry leaves at noon']);
    // The update commits while b's search is under way: whichever of b's reads sees it, b answers
    // with the row as stored and never with the text that was replaced.
    const [found] = await Promise.all([
      texts(b, 'ferry leaves', 'vector', 'ana'),
      a.update(id!, 'the ferry leaves at dawn'),
    ]);
    expect(found).toHaveLength(1);
    expect(['the ferry leaves at noon', 'the ferry leaves at dawn']).toContain(found[0]);
    expect(await texts(b, 'ferry leaves', 'vector', 'ana')).toEqual(['the ferry leaves at dawn']);
    await a.close();
    await b.close();
  });

  it('an encrypted store answers without a catch-up, and sees another instance’s deletion', async () => {
    const name = unique('head-read-sealed');
    const encryption = { passphrase: 'correct horse battery', kdfIterations: 1000 };
    const a = await Engram.open({ name, embedder: embedder(), encryption });
    const b = await Engram.open({ name, embedder: embedder(), encryption });
    const [first] = (
      await a.add(
        [
          { role: 'user', content: 'a sealed note about the orchard' },
          { role: 'user', content: 'a sealed note about the harbour' },
        ],
        { userId: 'ana', dedupe: 'off' },
      )
    ).results.map((r) => r.id);
    for (const mode of MODES) expect(await texts(b, 'sealed note orchard', mode, 'ana'), mode).toHaveLength(2);
    await a.delete(first!);
    for (const mode of MODES)
      expect(await texts(b, 'sealed note orchard', mode, 'ana'), mode).toEqual(['a sealed note about the harbour']);
    await a.close();
    await b.close();
  });
});
