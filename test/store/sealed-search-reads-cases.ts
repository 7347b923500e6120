/**
 * A search's reads of a store encrypted at rest (lib/store/head-with-rows.ts), shared by the Node
 * (fake-indexeddb) and Chromium (real IndexedDB) tests: the head and the rows are read in one
 * IndexedDB transaction below Dexie and opened by the row-sealing middleware's own code, so they
 * equal what a read through the middleware returns, and a row swapped, put back at an older
 * version or copied from another store is refused and reported exactly as the middleware reports
 * it. A row another instance wrote since the ledger read the journal is read through the
 * middleware, which reads the journal first.
 */
import { describe, expect, it, vi } from 'vitest';
import { Engram } from '../../lib/index.js';
import { openStore } from '../../lib/engine/open-store.js';
import { logBoundsRow, readLogHead } from '../../lib/store/change-log.js';
import { bumpGeneration } from '../../lib/store/generation.js';
import { readMemories, startHeadWithRows } from '../../lib/store/head-with-rows.js';
import { RowCipher } from '../../lib/store/row-cipher.js';
import { RowSealing, type SealedRowDamage } from '../../lib/store/row-sealing.js';
import { EngramDb } from '../../lib/store/schema.js';
import { PASS, embedder, unique } from './at-rest-cases.js';
import { memoryRow as memory } from './memory-row-fixture.js';

/** The `memories` rows `ids` as stored (sealed), read without a key. */
async function storedRows(name: string, ids: readonly string[]): Promise<Record<string, unknown>[]> {
  const raw = new EngramDb(name);
  await raw.open();
  try {
    return (await raw.table('memories').bulkGet([...ids])) as Record<string, unknown>[];
  } finally {
    raw.close();
  }
}

async function putStored(name: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  const raw = new EngramDb(name);
  await raw.open();
  try {
    await raw.table('memories').bulkPut([...rows]);
  } finally {
    raw.close();
  }
}

const byKey = (a: SealedRowDamage, b: SealedRowDamage): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

export function sealedSearchReadTests(where: string): void {
  describe(`a search's reads of an encrypted store (${where})`, () => {
    it('return what a read through the row sealing returns; a swapped, rolled-back or foreign row is refused and reported the same way, once', async () => {
      const name = unique('sealed-reads');
      const { db } = await openStore(name, PASS);
      const other = unique('sealed-reads-other');
      const { db: otherDb } = await openStore(other, PASS);
      try {
        await db.memories.bulkPut(['a', 'b', 'c', 'd', 'e'].map((id) => memory(id, `the ${id} note`)));
        await otherDb.memories.put(memory('d', 'a note of another store'));
        const [oldA] = await storedRows(name, ['a']);
        await db.memories.put(memory('a', 'the a note, changed'));
        const [rowB, rowC] = await storedRows(name, ['b', 'c']);
        const [foreignD] = await storedRows(other, ['d']);
        // A's older version put back, B's and C's seals swapped, D replaced by the other store's D.
        await putStored(name, [oldA!, { ...rowB!, $: rowC!['$'] }, { ...rowC!, $: rowB!['$'] }, foreignD!]);

        const reported: SealedRowDamage[] = [];
        db.sealing!.onDamaged = (row) => reported.push(row);
        const ids = ['a', 'b', 'missing', 'c', 'd', 'e'];
        const { head, rows: read } = await startHeadWithRows(db)(ids);
        // Rows are opened as they arrive, quietly: nothing is reported before it is asked for; each row
        // that does not open is opened again when it is, and reported then, once.
        expect(reported).toEqual([]);
        const openedLater = vi.spyOn(db.sealing!, 'openStored');
        expect(read.get(5)).toEqual(memory('e', 'the e note'));
        expect(openedLater).not.toHaveBeenCalled();
        openedLater.mockRestore();
        expect(read.get(4)).toBeUndefined();
        expect(reported.map((r) => r.key)).toEqual(['d']);
        const rows = read.all();
        expect(reported.map((r) => r.key).sort()).toEqual(['a', 'b', 'c', 'd']);
        const fromSearch = [...reported].sort(byKey);
        expect(rows.map((r) => r?.text)).toEqual([undefined, undefined, undefined, undefined, undefined, 'the e note']);
        expect(rows[5]).toEqual(memory('e', 'the e note'));
        expect(fromSearch.map((r) => r.key)).toEqual(['a', 'b', 'c', 'd']);
        expect(fromSearch.every((r) => r.table === 'memories')).toBe(true);
        expect(fromSearch[0]!.reason).toMatch(/older version/);

        // Through Dexie and the middleware: the same rows, the same reports.
        reported.length = 0;
        expect(await db.memories.bulkGet(ids)).toEqual(rows);
        expect([...reported].sort(byKey)).toEqual(fromSearch);
        expect(head).toEqual(await readLogHead(db));
        // The further rows a search reads once its order is known: the same again.
        reported.length = 0;
        expect((await readMemories(db, ids)).all()).toEqual(rows);
        expect([...reported].sort(byKey)).toEqual(fromSearch);
      } finally {
        db.close();
        otherDb.close();
      }
    });

    it('a cipher that refuses while a read is under way (the store closing) fails the read where its rows are asked for, not in IndexedDB', async () => {
      const name = unique('sealed-reads-closing');
      const { db } = await openStore(name, PASS);
      try {
        await db.memories.bulkPut([memory('x', 'the x note'), memory('y', 'the y note')]);
        const reading = startHeadWithRows(db)(['x', 'y']);
        // Wiped before any request is answered: each row's opening on arrival throws, and is left for later.
        db.sealing!.cipher.wipe();
        const { rows } = await reading;
        expect(() => rows.get(0)).toThrow(/after its store closed/);
      } finally {
        db.close();
      }
      // With the log's bounds row stored (opened as the transaction runs, not on arrival): the same.
      const { db: again } = await openStore(name, PASS);
      try {
        await again.meta.put(logBoundsRow(0, 0));
        const reading = startHeadWithRows(again)(['x']);
        again.sealing!.cipher.wipe();
        const { rows } = await reading;
        expect(() => rows.get(0)).toThrow(/after its store closed/);
      } finally {
        db.close();
      }
    });

    it('a row or head another instance wrote since is read after the journal: taken, not reported, and only then through Dexie', async () => {
      const name = unique('sealed-reads-behind');
      const { db: a } = await openStore(name, PASS);
      const { db: b } = await openStore(name, PASS);
      try {
        await a.memories.bulkPut([memory('x', 'the x note'), memory('y', 'the y note')]);
        const reported: SealedRowDamage[] = [];
        a.sealing!.onDamaged = (row) => reported.push(row);
        const throughDexie = vi.spyOn(a.memories, 'bulkGet');
        expect((await startHeadWithRows(a)(['x', 'y'])).rows.all().map((r) => r?.text)).toEqual([
          'the x note',
          'the y note',
        ]);
        expect(throughDexie).not.toHaveBeenCalled();

        // The other instance changes a row: newer than what this instance's ledger has read.
        await b.memories.put(memory('x', 'the x note, changed by b'));
        expect((await startHeadWithRows(a)(['x', 'y'])).rows.all().map((r) => r?.text)).toEqual([
          'the x note, changed by b',
          'the y note',
        ]);
        expect(throughDexie).toHaveBeenCalledTimes(1);
        // The journal read, the next read opens the rows itself again.
        expect((await startHeadWithRows(a)(['x'])).rows.get(0)?.text).toBe('the x note, changed by b');
        expect(throughDexie).toHaveBeenCalledTimes(1);

        // The further rows a search reads: the same way.
        await b.memories.put(memory('y', 'the y note, changed by b'));
        expect((await readMemories(a, ['y', 'x'])).all().map((r) => r?.text)).toEqual([
          'the y note, changed by b',
          'the x note, changed by b',
        ]);
        expect(throughDexie).toHaveBeenCalledTimes(2);
        expect((await readMemories(a, ['y'])).get(0)?.text).toBe('the y note, changed by b');
        expect(throughDexie).toHaveBeenCalledTimes(2);

        // The other instance moves the store's generation (a `meta` row of the head).
        await b.transaction('rw', b.meta, () => bumpGeneration(b));
        const { head } = await startHeadWithRows(a)([]);
        expect(head.generation).toBe(1);
        expect(head).toEqual(await readLogHead(a));
        expect(reported).toEqual([]);
        throughDexie.mockRestore();
      } finally {
        a.close();
        b.close();
      }
    });

    it("the head's rows read again unchanged are not opened by the cipher again, a memory's are; put back at an older version, a row is refused though its bytes were opened before", async () => {
      const name = unique('sealed-reads-memo');
      const { db: a } = await openStore(name, PASS);
      const { db: b } = await openStore(name, PASS);
      const cipherOpens = vi.spyOn(RowCipher.prototype, 'open');
      try {
        await a.memories.put(memory('x', 'the x note'));
        const [first] = await storedRows(name, ['x']);
        expect((await startHeadWithRows(a)(['x'])).rows.get(0)?.text).toBe('the x note');
        cipherOpens.mockClear();
        // The head's `meta` rows and the row, unchanged: the same rows; the cipher opens the memory alone
        // (every search reads the head's rows; a memory is seldom read again, and keeping it fed GC).
        const again = await startHeadWithRows(a)(['x']);
        expect(again.rows.get(0)).toEqual(memory('x', 'the x note'));
        expect(cipherOpens).toHaveBeenCalledTimes(1);
        expect(again.head).toEqual(await readLogHead(a));

        // Another instance changes the row; then its first version is put back, bytes and all.
        await b.memories.put(memory('x', 'the x note, changed by b'));
        expect((await startHeadWithRows(a)(['x'])).rows.get(0)?.text).toBe('the x note, changed by b');
        const [changed] = await storedRows(name, ['x']);
        const reported: SealedRowDamage[] = [];
        a.sealing!.onDamaged = (row) => reported.push(row);
        await putStored(name, [first!]);
        expect((await startHeadWithRows(a)(['x'])).rows.get(0)).toBeUndefined();
        expect(reported.map((r) => [r.key, r.reason])).toEqual([['x', expect.stringMatching(/older version/)]]);
        // Its bytes with the newer version claimed beside them: they no longer open.
        reported.length = 0;
        await putStored(name, [{ ...first!, $v: changed!['$v'] }]);
        expect((await startHeadWithRows(a)(['x'])).rows.get(0)).toBeUndefined();
        expect(reported.map((r) => [r.key, r.reason])).toEqual([['x', expect.stringMatching(/does not open/)]]);
      } finally {
        cipherOpens.mockRestore();
        a.close();
        b.close();
      }
    });

    it('a search opens only the rows its results reach: a damaged row it does not reach is not opened', async () => {
      const name = unique('sealed-search-lazy');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      // A row is opened as it arrives (quietly) or when the results reach it: either counts.
      const openedLater = vi.spyOn(RowSealing.prototype, 'openStored');
      const openedOnArrival = vi.spyOn(RowSealing.prototype, 'openStoredQuietly');
      const opened = {
        mockClear: (): void => {
          for (const spy of [openedLater, openedOnArrival]) spy.mockClear();
        },
        mockRestore: (): void => {
          for (const spy of [openedLater, openedOnArrival]) spy.mockRestore();
        },
        get mock() {
          return { calls: [...openedLater.mock.calls, ...openedOnArrival.mock.calls] };
        },
      };
      try {
        const texts = Array.from({ length: 40 }, (_, i) => `harbour note ${i}: the tide came in at ${i} o'clock`);
        const ids: string[] = [];
        for (const text of texts) ids.push((await e.add(text, { userId: 'ana', dedupe: 'off' })).results[0]!.id);
        for (const mode of ['hybrid', 'vector', 'keyword'] as const) {
          opened.mockClear();
          const found = await e.search('harbour tide', { mode, limit: 3, userId: 'ana' });
          expect(found.results, mode).toHaveLength(3);
          const rowsOpened = opened.mock.calls.filter(([table]) => table === 'memories').map(([, , key]) => key);
          // Each returned row opened once, no other (a hybrid search reads each side's best, about 3 times as many).
          expect(rowsOpened.sort(), mode).toEqual(found.results.map((r) => r.id).sort());
        }
        // A row the results do not reach is damaged: a search that does not reach it does not open it.
        const top = (await e.search('harbour tide', { mode: 'vector', limit: 1, userId: 'ana' })).results[0]!.id;
        const other = ids.find((id) => id !== top)!;
        await e.close();
        const [row] = await storedRows(name, [other]);
        const [topRow] = await storedRows(name, [top]);
        await putStored(name, [{ ...row!, $: topRow!['$'] }]);
        const again = await Engram.open({ name, embedder: embedder(), encryption: PASS });
        try {
          opened.mockClear();
          const hit = (await again.search('harbour tide', { mode: 'vector', limit: 1, userId: 'ana' })).results;
          expect(hit.map((r) => r.id)).toEqual([top]);
          expect(opened.mock.calls.filter(([table]) => table === 'memories').map(([, , key]) => key)).toEqual([top]);
          // Read in full (get), it is refused.
          expect(await again.get(other)).toBeUndefined();
          expect((await again.stats()).damagedRows.map((r) => r.key)).toContain(other);
        } finally {
          await again.close();
        }
      } finally {
        opened.mockRestore();
        await e.close();
      }
    });

    it('a search refuses and reports the rows it reads that were swapped or rolled back, and returns the rest as a plain store does', async () => {
      const name = unique('sealed-search');
      const plainName = unique('plain-search');
      const texts = [
        'the lighthouse keeper sings to whales',
        'the lighthouse keeper feeds gulls',
        'the lighthouse keeper rows at night',
        'the lighthouse keeper paints the door',
      ];
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      const p = await Engram.open({ name: plainName, embedder: embedder() });
      const ids: string[] = [];
      for (const text of texts) {
        ids.push((await e.add(text, { userId: 'ana' })).results[0]!.id);
        await p.add(text, { userId: 'ana' });
      }
      for (const mode of ['hybrid', 'vector', 'keyword'] as const) {
        const found = async (s: Engram) =>
          (await s.search('lighthouse keeper', { mode, limit: 10, userId: 'ana' })).results.map((r) => [
            r.memory,
            r.score,
          ]);
        expect(await found(e), mode).toEqual(await found(p));
      }
      const [old0] = await storedRows(name, [ids[0]!]);
      await e.update(ids[0]!, 'the lighthouse keeper sings to seals');
      await e.close();
      await p.close();
      const [row1, row2] = await storedRows(name, [ids[1]!, ids[2]!]);
      await putStored(name, [old0!, { ...row1!, $: row2!['$'] }, { ...row2!, $: row1!['$'] }]);

      const again = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      for (const mode of ['hybrid', 'vector', 'keyword'] as const)
        expect(
          (await again.search('lighthouse keeper', { mode, limit: 10, userId: 'ana' })).results.map((r) => r.memory),
          mode,
        ).toEqual(['the lighthouse keeper paints the door']);
      const damaged = (await again.stats()).damagedRows.filter((r) => r.table === 'memories');
      expect(damaged.map((r) => r.key).sort()).toEqual([ids[0]!, ids[1]!, ids[2]!].sort());
      expect(damaged.find((r) => r.key === ids[0])?.reason).toMatch(/older version/);
      await again.close();
    });
  });
}
