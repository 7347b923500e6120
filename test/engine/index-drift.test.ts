import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import type { IndexProgress } from '../../lib/engine/vectors/vector-state.js';
import { Engram } from '../../lib/index.js';
import { ScopeTable, type ScopeColumns, type ScopeTuple } from '../../lib/engine/vectors/scope-table.js';
import { EngramDb } from '../../lib/store/schema.js';

const embedder = (d = 64): HashEmbedder => new HashEmbedder({ dimensions: d });
const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;

async function fill(e: Engram, from: number, to: number, userId = 'u'): Promise<void> {
  for (let i = from; i < to; i++) await e.add(`memory number ${i} about topic${i}`, { userId });
}

/** A closed store of 8 memories (its index snapshot saved on close); returns its name. */
async function storeOfEight(prefix: string): Promise<string> {
  const name = unique(prefix);
  const a = await Engram.open({ name, embedder: embedder() });
  await fill(a, 0, 8);
  await a.close();
  return name;
}

/** Runs `change` on the raw store `name` (as a damaged disk or another program would). */
async function tamper(name: string, change: (db: EngramDb) => Promise<unknown>): Promise<void> {
  const db = new EngramDb(name);
  await db.open();
  try {
    await change(db);
  } finally {
    db.close();
  }
}

describe('the vector index never drifts from the store', () => {
  it('search() after another instance reset() the store returns no ghost vectors, and close() saves none', async () => {
    const name = unique('ghost-reset');
    const a = await Engram.open({ name, embedder: embedder() });
    const b = await Engram.open({ name, embedder: embedder() });
    await fill(a, 0, 30);
    await b.ready();
    expect((await b.search('memory number 3 about topic3', { mode: 'vector', limit: 50 })).results).toHaveLength(30);
    await a.reset();
    await a.add('the only memory after the reset', { userId: 'u' });
    for (const mode of ['vector', 'hybrid'] as const) {
      const { results } = await b.search('memory number 3 about topic3', { mode, limit: 50 });
      expect(results.map((r) => r.memory)).toEqual(['the only memory after the reset']);
    }
    expect((await b.ready()).size).toBe(1);
    await b.close();
    await a.close();
    const c = await Engram.open({ name, embedder: embedder() });
    const ready = await c.ready();
    expect(ready.size).toBe(1);
    expect((await c.search('memory number 3', { mode: 'vector', limit: 50 })).results).toHaveLength(1);
    await c.close();
  });

  it('search() after another instance imported a file with mode replace sees only the imported memories', async () => {
    const source = await Engram.open({ name: unique('source'), embedder: embedder() });
    await source.add('imported fact about the lighthouse', { userId: 'u' });
    const file = await source.export();
    await source.close();

    const name = unique('ghost-import');
    const a = await Engram.open({ name, embedder: embedder() });
    await fill(a, 0, 20);
    await a.flush();
    const importer = await Engram.import(file, { name, embedder: embedder(), mode: 'replace' });
    for (const mode of ['vector', 'hybrid'] as const) {
      const { results } = await a.search('memory number 5 about topic5 lighthouse', { mode, limit: 50 });
      expect(results.map((r) => r.memory)).toEqual(['imported fact about the lighthouse']);
    }
    expect((await a.ready()).size).toBe(1);
    // `a` closes last: its snapshot is the one the next open finds.
    await importer.close();
    await a.close();
    const c = await Engram.open({ name, embedder: embedder() });
    expect((await c.ready()).size).toBe(1);
    await c.close();
  });

  it('recall.textSearch() and keyword search after another instance reset() the store count no ghosts', async () => {
    const name = unique('ghost-keywords');
    const a = await Engram.open({ name, embedder: embedder() });
    const b = await Engram.open({ name, embedder: embedder() });
    for (let i = 0; i < 5; i++) await a.conversation('t').add({ role: 'user', content: `harbour visit ${i}` });
    for (let i = 0; i < 5; i++) await a.add(`harbour memory ${i}`, { userId: 'u' });
    expect((await b.recall.textSearch('harbour')).total).toBe(5);
    expect((await b.search('harbour', { mode: 'keyword', limit: 50 })).results).toHaveLength(5);
    await a.reset();
    await a.conversation('t').add({ role: 'user', content: 'harbour after the reset' });
    await a.add('harbour memory after the reset', { userId: 'u' });
    const recall = await b.recall.textSearch('harbour');
    expect([recall.total, recall.results.map((m) => m.content)]).toEqual([1, ['harbour after the reset']]);
    expect((await b.search('harbour', { mode: 'keyword', limit: 50 })).results.map((r) => r.memory)).toEqual([
      'harbour memory after the reset',
    ]);
    await b.close();
    await a.close();
  });

  it('a snapshot saved before another instance reset the store is not restored', async () => {
    const name = unique('stale-snapshot');
    const a = await Engram.open({ name, embedder: embedder() });
    await fill(a, 0, 10);
    await a.flush();
    const record = await (async () => {
      let value: unknown;
      await tamper(name, async (db) => (value = (await db.meta.get('indexSnapshot'))?.value));
      return value;
    })();
    await a.reset();
    await a.close();
    // A stale snapshot written back (by an instance that missed the reset) must not come back.
    await tamper(name, (db) => db.meta.put({ key: 'indexSnapshot', value: record }));
    const b = await Engram.open({ name, embedder: embedder() });
    expect((await b.ready()).size).toBe(0);
    expect((await b.search('memory number 1', { mode: 'vector' })).results).toEqual([]);
    await b.close();
  });

  it('open() rebuilds when the snapshot position is beyond the change log', async () => {
    const name = unique('seq');
    const a = await Engram.open({ name, embedder: embedder() });
    await fill(a, 0, 5);
    await a.close();
    await tamper(name, async (db) => {
      const record = (await db.meta.get('indexSnapshot'))!.value as Record<string, unknown>;
      await db.meta.put({ key: 'indexSnapshot', value: { ...record, seq: 1_000_000 } });
    });
    const b = await Engram.open({ name, embedder: embedder() });
    expect((await b.ready()).index).toBe('rebuild');
    await b.add('written after the reopen about kites', { userId: 'u' });
    const { results } = await b.search('written after the reopen about kites', { mode: 'vector', limit: 1 });
    expect(results[0]?.memory).toBe('written after the reopen about kites');
    await b.close();
  });

  it('open() rebuilds when the snapshot scope table is emptied or does not match the index', async () => {
    for (const damage of ['empty', 'short', 'foreign'] as const) {
      const name = unique(`scopes-${damage}`);
      const a = await Engram.open({ name, embedder: embedder() });
      await fill(a, 0, 6, 'ana');
      await a.close();
      await tamper(name, async (db) => {
        const record = (await db.meta.get('indexSnapshot'))!.value as { scopeColumns: ScopeColumns };
        const tuples = ScopeTable.fromColumns(record.scopeColumns)!.toTuples();
        const scopes =
          damage === 'empty'
            ? []
            : damage === 'short'
              ? tuples.slice(1)
              : tuples.map((t): ScopeTuple => [`x${t[0]}`, ...t.slice(1)] as ScopeTuple);
        await db.meta.put({
          key: 'indexSnapshot',
          value: { ...record, scopeColumns: ScopeTable.fromTuples(scopes).toColumns() },
        });
      });
      const b = await Engram.open({ name, embedder: embedder() });
      expect((await b.ready()).index).toBe('rebuild');
      expect(
        (await b.search('memory number 2 about topic2', { userId: 'ana', mode: 'vector', limit: 10 })).results,
      ).toHaveLength(6);
      await b.close();
    }
  });

  it('open() rebuilds when the snapshot holds a vector the store no longer has, or lacks one it has', async () => {
    for (const damage of ['ghost', 'missing'] as const) {
      const name = await storeOfEight(`size-${damage}`);
      let victim = '';
      await tamper(name, async (db) => {
        const rows = await db.memories.toArray();
        victim = rows[3]!.id;
        if (damage === 'ghost') {
          // Rows removed behind the log's back (a tampered store): the snapshot still indexes them.
          await db.memories.delete(victim);
          await db.vectors.delete(victim);
        } else {
          // A snapshot missing an entry the store has: drop it from the saved scope table and index by re-saving an older one.
          const record = (await db.meta.get('indexSnapshot'))!.value as { scopeColumns: ScopeColumns };
          const tuples = ScopeTable.fromColumns(record.scopeColumns)!
            .toTuples()
            .filter((t) => t[0] !== victim);
          await db.meta.put({
            key: 'indexSnapshot',
            value: { ...record, scopeColumns: ScopeTable.fromTuples(tuples).toColumns() },
          });
        }
      });
      const b = await Engram.open({ name, embedder: embedder() });
      const ready = await b.ready();
      expect(ready.index).toBe('rebuild');
      expect(ready.size).toBe(damage === 'ghost' ? 7 : 8);
      const ids = (await b.search('memory number', { mode: 'vector', limit: 50 })).results.map((r) => r.id);
      expect(ids.includes(victim)).toBe(damage === 'missing');
      await b.close();
    }
  });
});

describe('a restored index whose counts match the store is still checked id by id', () => {
  it("a vector replaced behind the log's back (same counts) is found right after open, reported, and the index rebuilt", async () => {
    const name = await storeOfEight('swap');
    let victim = '';
    await tamper(name, async (db) => {
      const rows = await db.memories.toArray();
      const victimRow = rows[3]!;
      victim = victimRow.id;
      const vector = (await db.vectors.get(victim))!;
      // One memory and its vector gone, another in their place: the counts still agree with the snapshot.
      await db.memories.delete(victim);
      await db.vectors.delete(victim);
      const text = 'a memory written behind the log';
      await db.memories.put({ ...victimRow, id: 'swapped', text });
      await db.vectors.put({ ...vector, id: 'swapped', vector: (await embedder().embed([text]))[0]! });
    });
    const damaged: string[] = [];
    const b = await Engram.open({
      name,
      embedder: embedder(),
      onProgress: (p) => {
        if (p.phase === 'damaged' && p.damaged !== undefined) damaged.push(p.damaged.key);
      },
    });
    expect((await b.ready()).index).toBe('snapshot');
    let ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      ids = (await b.search('a memory written behind the log', { mode: 'vector', limit: 50 })).results.map((r) => r.id);
      if (ids.includes('swapped')) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(ids).toContain('swapped');
    expect(ids).not.toContain(victim);
    expect(damaged).toContain('indexSnapshot');
    await b.close();
  });
});

describe('damaged rows are skipped and reported, the rest opens', () => {
  it('open() survives every meta row set to null: messages stay readable, search works, the damage is reported', async () => {
    const base = unique('meta-null');
    const seed = await Engram.open({ name: base, embedder: embedder() });
    await fill(seed, 0, 5);
    await seed.conversation('t').add({ role: 'user', content: 'hello about the harbour' });
    await seed.recall.textSearch('harbour');
    await seed.close();
    let keys: string[] = [];
    await tamper(base, async (db) => (keys = await db.meta.toCollection().primaryKeys()));
    expect(keys).toEqual(expect.arrayContaining(['embedder', 'indexSnapshot', 'schemaVersion', 'deviceId']));
    const file = await (async () => {
      const e = await Engram.open({ name: base, embedder: embedder() });
      const f = await e.export();
      await e.close();
      return f;
    })();
    for (const key of keys) {
      const name = unique(`meta-null-${key}`);
      await (await Engram.import(file, { name, embedder: embedder(), mode: 'replace' })).close();
      const warm = await Engram.open({ name, embedder: embedder() });
      await warm.recall.textSearch('harbour');
      await warm.close();
      await tamper(name, (db) => db.meta.put({ key, value: null }));
      const progress: IndexProgress[] = [];
      const e = await Engram.open({ name, embedder: embedder(), onProgress: (p) => progress.push(p) });
      expect(
        (await e.conversation('t').getMessages()).map((m) => m.content),
        key,
      ).toEqual(['hello about the harbour']);
      expect((await e.recall.textSearch('harbour')).results, key).toHaveLength(1);
      const { results } = await e.search('memory number 2 about topic2', { mode: 'vector', limit: 1 });
      expect(results[0]?.memory, key).toBe('memory number 2 about topic2');
      if (key === 'embedder' || key === 'indexSnapshot') {
        const stats = await e.stats();
        expect(stats.damagedRows, key).toContainEqual(expect.objectContaining({ table: 'meta', key }));
        expect(
          progress.some((p) => p.phase === 'damaged' && p.damaged?.key === key),
          key,
        ).toBe(true);
      }
      await e.close();
    }
  });

  it('open() skips a stored vector of the wrong length or with NaN, reports it, and keeps its memory readable', async () => {
    for (const damage of ['short', 'nan', 'not-a-vector'] as const) {
      for (const snapshot of [true, false]) {
        const name = unique(`vec-${damage}`);
        const a = await Engram.open({ name, embedder: embedder() });
        await fill(a, 0, 6);
        await a.conversation('t').add({ role: 'user', content: 'a message that must stay readable' });
        const victim = (await a.search('memory number 4 about topic4', { mode: 'keyword', limit: 1 })).results[0]!;
        if (snapshot) await a.flush();
        await a.close();
        await tamper(name, async (db) => {
          const row = (await db.vectors.get(victim.id))!;
          const vector =
            damage === 'short'
              ? row.vector.slice(0, 10)
              : damage === 'nan'
                ? row.vector.map((x, i) => (i === 3 ? Number.NaN : x))
                : 'garbage';
          await db.vectors.put({ ...row, vector: vector as Float32Array });
          if (!snapshot) await db.meta.delete('indexSnapshot');
        });
        const progress: IndexProgress[] = [];
        let b = await Engram.open({ name, embedder: embedder(), onProgress: (p) => progress.push(p) });
        const ready = await b.ready();
        // From a snapshot the index keeps its own good copy, and search scores from it without reading the stored row.
        expect(ready.size, `${damage} ${snapshot}`).toBe(snapshot ? 6 : 5);
        expect((await b.get(victim.id))?.memory).toBe(victim.memory);
        expect((await b.conversation('t').getMessages()).map((m) => m.content)).toEqual([
          'a message that must stay readable',
        ]);
        for (const mode of ['vector', 'hybrid', 'keyword'] as const) {
          for (const scope of [{}, { userId: 'u' }]) {
            const { results } = await b.search('memory number 4 about topic4', { ...scope, mode, limit: 10 });
            expect(results.length, mode).toBeGreaterThan(0);
          }
        }
        if (snapshot) {
          expect((await b.stats()).damaged, `${damage}: search read no stored vector`).toBe(0);
          // The damage shows once the index is built from the store again.
          await b.close();
          await tamper(name, (db) => db.meta.delete('indexSnapshot'));
          b = await Engram.open({ name, embedder: embedder(), onProgress: (p) => progress.push(p) });
          expect((await b.ready()).size, damage).toBe(5);
          expect((await b.get(victim.id))?.memory).toBe(victim.memory);
        }
        const stats = await b.stats();
        expect(stats.damaged).toBe(1);
        expect(stats.damagedRows).toEqual([expect.objectContaining({ table: 'vectors', key: victim.id })]);
        expect(progress.filter((p) => p.phase === 'damaged').map((p) => p.damaged?.key)).toEqual([victim.id]);
        expect((await b.search('memory number 4 about topic4', { mode: 'keyword', limit: 1 })).results[0]?.id).toBe(
          victim.id,
        );
        await b.close();
      }
    }
  });
});
