// A search's reads: the change-log head and the rows it returns, in one read on a plain store
// (below Dexie's table API), through Dexie on an encrypted one; the same head either way.
import { describe, expect, it } from 'vitest';
import { ClosedError } from '../../lib/errors.js';
import { openStore } from '../../lib/engine/open-store.js';
import { compactChangeLog, readLogHead } from '../../lib/store/change-log.js';
import { EMBEDDER_KEY } from '../../lib/store/embedder-record.js';
import { bumpGeneration } from '../../lib/store/generation.js';
import { startHeadWithRows } from '../../lib/store/head-with-rows.js';
import type { EngramDb } from '../../lib/store/schema.js';
import { memoryRow as memory } from './memory-row-fixture.js';

const ENCRYPTION = { passphrase: 'correct horse battery', kdfIterations: 1000 };

async function logEntries(db: EngramDb, n: number): Promise<void> {
  await db.changes.bulkAdd(
    Array.from({ length: n }, (_, i) => ({ table: 'memories' as const, recordId: `m${i}`, op: 'add' as const, at: i })),
  );
}

describe('startHeadWithRows', () => {
  it.each([
    ['a plain store', undefined],
    ['an encrypted store', ENCRYPTION],
  ] as const)(
    'on %s, reads the head readLogHead reads, and the rows asked for in order',
    async (_store, encryption) => {
      const { db } = await openStore(`head-with-rows-${Math.random()}`, encryption);
      try {
        // An empty log: nothing logged, never compacted, first generation.
        expect((await startHeadWithRows(db)([])).head).toEqual({
          last: 0,
          floor: 0,
          generation: 0,
          embedderId: undefined,
        });
        await db.memories.bulkPut([memory('a', 'the ferry leaves at noon'), memory('b', 'the gulls follow it')]);
        await logEntries(db, 120);
        await compactChangeLog(db, 50);
        await db.transaction('rw', db.meta, () => bumpGeneration(db));
        await db.meta.put({ key: EMBEDDER_KEY, value: { id: 'hash-64', dimensions: 64 } });
        const { head, rows } = await startHeadWithRows(db)(['b', 'missing', 'a']);
        expect(head).toEqual(await readLogHead(db));
        expect(head).toMatchObject({ last: 120, generation: 1, embedderId: 'hash-64' });
        expect(head.floor).toBeGreaterThan(0);
        expect(rows.all().map((r) => r?.text)).toEqual(['the gulls follow it', undefined, 'the ferry leaves at noon']);
        expect(rows.get(0)).toEqual(memory('b', 'the gulls follow it'));
        // Every entry compacted away: the floor still tells that the log moved.
        await compactChangeLog(db, 0);
        expect((await startHeadWithRows(db)([])).head).toEqual(await readLogHead(db));
      } finally {
        db.close();
      }
    },
  );

  it('on a closed store, rejects with ClosedError', async () => {
    const { db } = await openStore(`head-with-rows-${Math.random()}`);
    db.close();
    await expect(startHeadWithRows(db)(['a'])).rejects.toBeInstanceOf(ClosedError);
  });
});
