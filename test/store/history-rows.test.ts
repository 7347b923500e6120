// A record's creation writes no history entry, and an add's entry keeps no copy of the row it added
// (lib/store/history-rows.ts): the add is written at the record's first logged change, its row is
// the record's next entry's `before`, or the record as it stands now. What history() and an
// export / import round trip show is what they showed when every add wrote its entry with its copy.
import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { Engram } from '../../lib/index.js';
import type { HistoryRow } from '../../lib/store/rows.js';
import { creationsOf, withAddedRows } from '../../lib/store/history-rows.js';
import { EngramDb } from '../../lib/store/schema.js';
import { openTemp } from '../helpers.js';

const open = (name?: string): Promise<Engram> =>
  openTemp({ ...(name === undefined ? {} : { name }), embedder: new HashEmbedder({ dimensions: 32 }) });

const entry = (op: HistoryRow['op'], before: unknown, after: unknown): HistoryRow => ({
  table: 'memories',
  recordId: 'm1',
  op,
  before,
  after,
  at: 1,
});

async function rawHistory(name: string): Promise<HistoryRow[]> {
  const db = new EngramDb(name);
  try {
    return await db.history.toArray();
  } finally {
    db.close();
  }
}

describe('history rows', () => {
  it("withAddedRows: an add's row is the next entry's before, else the current row; a kept copy is used as it is", () => {
    const v1 = { text: 'one' };
    const v2 = { text: 'two' };
    expect(withAddedRows([entry('add', null, null)], v1)[0]!.after).toBe(v1);
    expect(withAddedRows([entry('add', null, null)], undefined)[0]!.after).toBeNull();
    const chain = withAddedRows([entry('add', null, null), entry('update', v1, v2)], v2);
    expect(chain.map((e) => e.after)).toEqual([v1, v2]);
    const deleted = withAddedRows([entry('add', null, null), entry('delete', v1, null)], undefined);
    expect(deleted.map((e) => e.after)).toEqual([v1, null]);
    const old = { text: 'as written then' };
    expect(withAddedRows([entry('add', null, old)], v2)[0]!.after).toBe(old);
    // A re-add after a deletion: each add takes what came right after it.
    const readded = withAddedRows([entry('add', null, null), entry('delete', v1, null), entry('add', null, null)], v2);
    expect(readded.map((e) => e.after)).toEqual([v1, null, v2]);
    // Two adds of one record (a merge import brought the other device's): each takes the next row found.
    const merged = withAddedRows([entry('add', null, null), entry('add', null, null), entry('update', v1, v2)], v2);
    expect(merged.map((e) => e.after)).toEqual([v1, v1, v2]);
  });

  it('creationsOf: one add a record with no stored entry, dated by its row here and keeping it', () => {
    const here = { text: 'mine', createdAt: 7 };
    const theirs = { text: 'theirs', createdAt: 7 };
    const losers: HistoryRow[] = [
      { ...entry('update', theirs, here), recordId: 'a' },
      { ...entry('update', theirs, here), recordId: 'a' },
      { ...entry('update', theirs, here), recordId: 'b' },
    ];
    const made = creationsOf(
      losers,
      (id) => id === 'b',
      (e) => e.after,
    );
    expect(made).toEqual([{ table: 'memories', recordId: 'a', op: 'add', before: null, after: here, at: 7 }]);
    // Read back, the add keeps its own row, not the losing version after it.
    expect(withAddedRows([...made, losers[0]!], here).map((e) => e.after)).toEqual([here, here]);
  });

  it("add() writes no history entry; history() shows the ADD all the same, and the first update writes it without the row's text", async () => {
    const engram = await open();
    const id = (await engram.add('Mira collects antique compasses', { userId: 'mira', metadata: { n: 1 } })).results[0]!
      .id;
    expect(await rawHistory(engram.name)).toEqual([]);
    await engram.get(id); // an access is counted quietly: no entry, and the ADD reads the same
    const created = (await engram.getAll({ userId: 'mira' })).results[0]!.createdAt;
    expect((await engram.history(id)).map((h) => [h.op, h.previous, h.memory, h.version, h.metadata, h.at])).toEqual([
      ['ADD', null, 'Mira collects antique compasses', 1, { n: 1 }, created],
    ]);
    await engram.update(id, 'Mira collects antique sextants');
    const raw = await rawHistory(engram.name);
    expect(raw.map((e) => e.op)).toEqual(['add', 'update']);
    expect(raw[0]).toMatchObject({
      table: 'memories',
      recordId: id,
      op: 'add',
      before: null,
      after: null,
      at: created,
    });
    await engram.update(id, { metadata: { n: 2 } });
    const history = (await engram.history(id)).map((h) => [h.op, h.previous, h.memory, h.version, h.metadata]);
    expect(history).toEqual([
      ['ADD', null, 'Mira collects antique compasses', 1, { n: 1 }],
      ['UPDATE', 'Mira collects antique compasses', 'Mira collects antique sextants', 2, { n: 1 }],
      ['UPDATE', 'Mira collects antique sextants', 'Mira collects antique sextants', 3, { n: 2 }],
    ]);

    // Carried whole by an export and an import into another store.
    const copy = await Engram.import(await engram.export(), {
      name: `${engram.name}-copy`,
      mode: 'replace',
      embedder: new HashEmbedder({ dimensions: 32 }),
    });
    expect((await copy.history(id)).map((h) => [h.op, h.previous, h.memory, h.version, h.metadata])).toEqual(history);
    await copy.close();
    await engram.close();
  });

  it('an add entry written with its copy (an older store) is read as it was written', async () => {
    const engram = await open();
    const id = (await engram.add('Tomas bakes rye bread', { userId: 'tomas' })).results[0]!.id;
    const name = engram.name;
    await engram.close();
    const db = new EngramDb(name);
    const row = (await db.memories.get(id))!;
    await db.history.add({
      table: 'memories',
      recordId: id,
      op: 'add',
      before: null,
      after: { ...row, text: 'Tomas bakes sourdough' },
      at: row.createdAt,
    });
    db.close();
    const again = await open(name);
    expect((await again.history(id)).map((h) => [h.op, h.memory])).toEqual([['ADD', 'Tomas bakes sourdough']]);
    await again.close();
  });

  it('the bound on a history counts the add written at the first change: the oldest entries go first', async () => {
    const engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 32 }), historyLimit: 3 });
    const id = (await engram.add('Lena grows basil', { userId: 'lena' })).results[0]!.id;
    await engram.update(id, 'Lena grows thyme');
    expect((await engram.history(id)).map((h) => [h.op, h.memory])).toEqual([
      ['ADD', 'Lena grows basil'],
      ['UPDATE', 'Lena grows thyme'],
    ]);
    await engram.update(id, 'Lena grows sage');
    await engram.update(id, 'Lena grows mint');
    expect((await engram.history(id)).map((h) => [h.op, h.memory])).toEqual([
      ['UPDATE', 'Lena grows thyme'],
      ['UPDATE', 'Lena grows sage'],
      ['UPDATE', 'Lena grows mint'],
    ]);
    expect(await rawHistory(engram.name)).toHaveLength(3);
    await engram.close();
  });
});
