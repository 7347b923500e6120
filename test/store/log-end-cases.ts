/**
 * The change log's end is read by key: every logging write records it in the log's `meta` row
 * (LOG_FLOOR_KEY, `{ seq: floor, last }`), and readers take it when the entries beside it confirm it,
 * by cursor otherwise (a row an older engram left behind, the floor alone, a damaged one, none). Both readers: readLastSeq / readLogHead (through Dexie) and a
 * search's head (startHeadWithRows, below Dexie), on a plain and on an encrypted store. Shared by
 * the Node (fake-indexeddb) and Chromium (real IndexedDB, whose LevelDB made the cursor slow) tests.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openStore, resetStore } from '../../lib/engine/open-store.js';
import { analyzeDocument } from '../../lib/search/analyze.js';
import { compactChangeLog, LOG_FLOOR_KEY, readLastSeq, readLogHead } from '../../lib/store/change-log.js';
import { startHeadWithRows } from '../../lib/store/head-with-rows.js';
import type { MessageRow } from '../../lib/store/rows.js';
import type { EngramDb } from '../../lib/store/schema.js';
import { writeTransaction } from '../../lib/store/write.js';

const ENCRYPTION = { passphrase: 'correct horse battery', kdfIterations: 1000 };

afterEach(() => {
  vi.restoreAllMocks();
});

function message(id: string): MessageRow {
  return { id, threadId: 't', role: 'user', content: `note ${id}`, createdAt: 1, position: 0, hash: id, inContext: 1 };
}

/** One write through the write path, logging `n` messages. */
async function write(db: EngramDb, ids: string[], fail = false): Promise<void> {
  await writeTransaction(
    db,
    () => 5,
    analyzeDocument,
    async () => {
      await Promise.resolve();
      if (fail) throw new Error('the plan failed');
      return {
        changes: ids.map((id) => ({ table: 'messages' as const, op: 'add' as const, id, after: message(id) })),
        result: null,
      };
    },
  );
}

/** Entries logged the way an engram from before the recorded end logged them: without moving it. */
async function logWithoutRow(db: EngramDb, n: number): Promise<void> {
  await db.changes.bulkAdd(
    Array.from({ length: n }, (_, i) => ({
      table: 'messages' as const,
      recordId: `old${i}`,
      op: 'add' as const,
      at: i,
    })),
  );
}

/** The log's end as each reader reads it. */
async function ends(db: EngramDb): Promise<number[]> {
  return [await readLastSeq(db), (await readLogHead(db)).last, (await startHeadWithRows(db)([])).head.last];
}

/** Counts the cursors opened over `changes` while `run` runs. */
async function cursorsOverChanges(run: () => Promise<unknown>): Promise<number> {
  const spies = [vi.spyOn(IDBObjectStore.prototype, 'openCursor'), vi.spyOn(IDBObjectStore.prototype, 'openKeyCursor')];
  await run();
  const opened = spies
    .flatMap((spy) => spy.mock.contexts)
    .filter((store) => (store as IDBObjectStore).name === 'changes').length;
  vi.restoreAllMocks();
  return opened;
}

/** The cases, under `where` (the IndexedDB they run on). */
export function logEndTests(where: string): void {
  describe.each([
    ['a plain store', undefined],
    ['an encrypted store', ENCRYPTION],
  ] as const)(`the change log end, on %s (${where})`, (_store, encryption) => {
    let db: EngramDb;
    afterEach(() => {
      db.close();
    });

    it('is the row each logging write puts, read without a cursor', async () => {
      ({ db } = await openStore(`log-end-${Math.random()}`, encryption));
      expect(await ends(db)).toEqual([0, 0, 0]);
      await write(db, ['a', 'b']);
      await write(db, ['c']);
      expect((await db.meta.get(LOG_FLOOR_KEY))?.value).toEqual({ seq: 0, last: 3 });
      let read: number[] = [];
      expect(
        await cursorsOverChanges(async () => {
          read = await ends(db);
        }),
      ).toBe(0);
      expect(read).toEqual([3, 3, 3]);
      // A write that fails moves neither the log nor its end.
      await expect(write(db, ['d'], true)).rejects.toThrow();
      expect(await ends(db)).toEqual([3, 3, 3]);
      await write(db, ['e']);
      expect(await ends(db)).toEqual([4, 4, 4]);
    });

    it('a search head told where its indexes stand reads the same end, asking nothing more when they are at it', async () => {
      ({ db } = await openStore(`log-end-${Math.random()}`, encryption));
      await write(db, ['a', 'b', 'c']);
      const read = startHeadWithRows(db);
      for (const expected of [3, 2, 0, 7]) expect((await read([], expected)).head.last).toBe(3);
      const gets = vi.spyOn(IDBObjectStore.prototype, 'get');
      await read([], 3);
      // The row's two confirming entries, asked beside it: no second request for them.
      const asked = (name: string): number =>
        gets.mock.contexts.filter((store) => (store as IDBObjectStore).name === name).length;
      // The three `meta` rows of the head (the floor's holds the end) and the two entries confirming it.
      expect([asked('meta'), asked('changes')]).toEqual([3, 2]);
      vi.restoreAllMocks();
      // Told a position the row does not record, or behind a row an older engram left: still the log's end.
      await logWithoutRow(db, 2);
      for (const expected of [3, 5]) expect((await read([], expected)).head.last).toBe(5);
    });

    it('falls back to the cursor when the row is behind the log, holds the floor alone, is damaged or gone', async () => {
      ({ db } = await openStore(`log-end-${Math.random()}`, encryption));
      await write(db, ['a']);
      // An older engram logged two more without moving the row.
      await logWithoutRow(db, 2);
      expect(await ends(db)).toEqual([3, 3, 3]);
      await write(db, ['b']);
      expect(await ends(db)).toEqual([4, 4, 4]);
      // Behind again: compaction reads the end by cursor and records it with the new floor.
      await logWithoutRow(db, 100);
      expect((await compactChangeLog(db, 0)).floor).toBe(103);
      expect((await db.meta.get(LOG_FLOOR_KEY))?.value).toEqual({ seq: 103, last: 104 });
      expect(await ends(db)).toEqual([104, 104, 104]);
      // An older engram's compaction writes the floor alone; a row whose end was compacted away (4 < 103).
      for (const value of [
        103,
        { seq: 103, last: 4 },
        { seq: 103, last: 'a hundred and four' },
        { seq: 103, last: 999 },
      ]) {
        await db.meta.put({ key: LOG_FLOOR_KEY, value });
        expect(await ends(db)).toEqual([104, 104, 104]);
        expect((await readLogHead(db)).floor).toBe(103);
      }
      await db.meta.delete(LOG_FLOOR_KEY);
      expect(await cursorsOverChanges(() => ends(db))).toBeGreaterThan(0);
      expect(await ends(db)).toEqual([104, 104, 104]);
      // The next write records the end again, keeping the floor it finds.
      await db.meta.put({ key: LOG_FLOOR_KEY, value: 103 });
      await write(db, ['b2']);
      expect((await db.meta.get(LOG_FLOOR_KEY))?.value).toEqual({ seq: 103, last: 105 });
      // A reset empties the log and drops the row with it.
      await resetStore(db);
      expect(await db.meta.get(LOG_FLOOR_KEY)).toBeUndefined();
      expect(await ends(db)).toEqual([0, 0, 0]);
      await write(db, ['c']);
      const [end] = await ends(db);
      expect(end).toBeGreaterThan(105);
      expect(await ends(db)).toEqual([end, end, end]);
    });
  });
}
