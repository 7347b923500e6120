// Log compaction reads a snapshot's position from the small row written beside it
// (older snapshots: from the record), not the record, megabytes at 100k memories.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../lib/engine/open-store.js';
import { compactChangeLog, LOG_FLOOR_KEY } from '../../lib/store/change-log.js';
import type { EngramDb } from '../../lib/store/schema.js';
import { deleteSnapshot, putSnapshot, snapshotPositionKey } from '../../lib/store/snapshot-chunks.js';

let db: EngramDb;
beforeEach(async () => {
  ({ db } = await openStore(`change-log-${Math.random()}`));
});
afterEach(() => {
  db.close();
});

/** `n` change-log entries (seq 1…n). */
async function logEntries(n: number): Promise<void> {
  await db.changes.bulkAdd(
    Array.from({ length: n }, (_, i) => ({ table: 'messages' as const, recordId: `m${i}`, op: 'add' as const, at: i })),
  );
}

describe('compactChangeLog', () => {
  it('keeps a snapshot replayable by the position row written beside it, and drops one that lags too far with its row', async () => {
    await logEntries(100);
    await putSnapshot(db, 'indexSnapshot', { bytes: new Uint8Array(8), seq: 60 }, 4);
    expect((await db.meta.get(snapshotPositionKey('indexSnapshot')))?.value).toBe(60);
    // The record itself is never read: a record that says otherwise does not count.
    const head = (await db.meta.get('indexSnapshot'))!;
    await db.meta.put({ key: 'indexSnapshot', value: { ...(head.value as object), seq: 5 } });
    expect(await compactChangeLog(db, 50)).toEqual({ removed: 60, floor: 60, droppedSnapshots: [] });
    await logEntries(100);
    expect(await compactChangeLog(db, 50)).toMatchObject({ floor: 199, droppedSnapshots: ['indexSnapshot'] });
    expect(await db.meta.get('indexSnapshot')).toBeUndefined();
    expect(await db.meta.get(snapshotPositionKey('indexSnapshot'))).toBeUndefined();
    expect((await db.meta.get(LOG_FLOOR_KEY))?.value).toEqual({ seq: 199, last: 200 });
  });

  it('reads the position of a snapshot written before position rows from its record', async () => {
    await logEntries(100);
    await db.meta.put({ key: 'keywordSnapshot', value: { seq: 70, postings: [] } });
    expect(await compactChangeLog(db, 50)).toEqual({ removed: 70, floor: 70, droppedSnapshots: [] });
  });

  it('a deleted snapshot takes its position row along, so it holds the log no longer', async () => {
    await logEntries(100);
    await putSnapshot(db, 'indexSnapshot', { bytes: new Uint8Array(16), seq: 30 }, 4);
    await deleteSnapshot(db, 'indexSnapshot');
    expect(await db.meta.where('key').startsWith('indexSnapshot').count()).toBe(0);
    expect(await compactChangeLog(db, 50)).toEqual({ removed: 99, floor: 99, droppedSnapshots: [] });
  });
});
