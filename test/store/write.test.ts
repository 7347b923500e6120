import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngineStore } from '../../lib/engine/engine-store.js';
import { openStore } from '../../lib/engine/open-store.js';
import { ValidationError } from '../../lib/errors.js';
import type { MessageRow } from '../../lib/store/rows.js';
import type { EngramDb } from '../../lib/store/schema.js';
import { analyzeDocument as termFrequencies } from '../../lib/search/analyze.js';
import { writeTransaction } from '../../lib/store/write.js';

let db: EngramDb;
let core: EngineStore;
beforeEach(async () => {
  ({ db } = await openStore(`write-${Math.random()}`));
  core = new EngineStore(db, { maxContentBytes: 1000, now: () => 1000, deviceId: 'dev' });
});
afterEach(() => {
  db.close();
});

function row(id: string, content: string): MessageRow {
  return { id, threadId: 't', role: 'user', content, createdAt: 1, position: 0, hash: 'h', inContext: 1 };
}

describe('writeTransaction', () => {
  it('writes the row, a change-log entry and its terms together; the history entries at the first change', async () => {
    const added = row('m1', 'blue whale');
    await writeTransaction(
      db,
      () => 5,
      termFrequencies,
      async () => ({
        changes: [{ table: 'messages', op: 'add', id: 'm1', after: added }],
        result: null,
      }),
    );
    expect(await db.messages.get('m1')).toBeDefined();
    // A creation writes no history entry: its add is written with the record's first logged change.
    expect(await db.history.count()).toBe(0);
    expect(await db.changes.toArray()).toEqual([expect.objectContaining({ seq: 1, recordId: 'm1', op: 'add' })]);
    expect((await db.terms.toArray()).map((t) => t.k)).toEqual([['m:blue', 'm:whale']]);
    expect((await db.meta.get('stats:m'))!.value).toEqual({ docs: 1, length: 2 });
    await writeTransaction(
      db,
      () => 9,
      termFrequencies,
      async () => ({
        changes: [{ table: 'messages', op: 'update', id: 'm1', before: added, after: row('m1', 'grey whale') }],
        result: null,
      }),
    );
    expect(await db.history.where('recordId').equals('m1').toArray()).toEqual([
      expect.objectContaining({ table: 'messages', op: 'add', before: null, after: null, at: added.createdAt }),
      expect.objectContaining({ table: 'messages', op: 'update', before: added, at: 9 }),
    ]);
  });

  it('rolls everything back when the plan throws halfway', async () => {
    await expect(
      core.write(async () => {
        await db.messages.put(row('early', 'written before the throw'));
        throw new ValidationError('x', 'boom');
      }),
    ).rejects.toThrow(ValidationError);
    expect(await db.messages.count()).toBe(0);
    expect(await db.changes.count()).toBe(0);
  });

  it('rolls back every change of a batch when one fails', async () => {
    await writeTransaction(
      db,
      () => 1,
      termFrequencies,
      async () => ({ changes: [{ table: 'messages', op: 'add', id: 'm1', after: row('m1', 'one') }], result: null }),
    );
    await expect(
      writeTransaction(
        db,
        () => 2,
        termFrequencies,
        async () => ({
          changes: [
            { table: 'messages', op: 'update', id: 'm1', before: row('m1', 'one'), after: row('m1', 'one more') },
            { table: 'messages', op: 'add', id: 'm2', after: row('m2', 'two') },
            {
              table: 'messages',
              op: 'add',
              id: 'bad',
              after: { ...row('bad', 'x'), id: undefined as unknown as string },
            },
          ],
          result: null,
        }),
      ),
    ).rejects.toThrow();
    expect((await db.messages.toArray()).map((m) => [m.id, m.content])).toEqual([['m1', 'one']]);
    // m1's first change (its add and update entries) went with the rest.
    expect(await db.history.count()).toBe(0);
    expect(await db.changes.count()).toBe(1);
    expect((await db.meta.get('stats:m'))!.value).toEqual({ docs: 1, length: 1 });
  });

  it('updates the terms when content changes and removes them on delete', async () => {
    const before = row('m1', 'red apple');
    const after = { ...before, content: 'green pear' };
    await writeTransaction(
      db,
      () => 1,
      termFrequencies,
      async () => ({ changes: [{ table: 'messages', op: 'add', id: 'm1', after: before }], result: null }),
    );
    await writeTransaction(
      db,
      () => 2,
      termFrequencies,
      async () => ({ changes: [{ table: 'messages', op: 'update', id: 'm1', before, after }], result: null }),
    );
    expect((await db.terms.toArray()).map((t) => t.k)).toEqual([['m:green', 'm:pear']]);
    await writeTransaction(
      db,
      () => 3,
      termFrequencies,
      async () => ({ changes: [{ table: 'messages', op: 'delete', id: 'm1', before: after }], result: null }),
    );
    expect(await db.terms.count()).toBe(0);
    expect((await db.meta.get('stats:m'))!.value).toEqual({ docs: 0, length: 0 });
    expect((await db.changes.toArray()).map((c) => c.op)).toEqual(['add', 'update', 'delete']);
  });
});
