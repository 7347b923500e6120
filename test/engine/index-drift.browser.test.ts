// The vector index as a cache of the store, in real Chromium IndexedDB: two
// instances on one store (two tabs), damaged rows, close() with writes in flight.
import { describe, expect, it } from 'vitest';
import { ClosedError, Engram, HashEmbedder, isEngramError } from '../../lib/index.js';
import { EngramDb } from '../../lib/store/schema.js';

const unique = (p: string): string => `${p}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
const embedder = (): HashEmbedder => new HashEmbedder({ dimensions: 64 });

async function fill(e: Engram, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await e.add(`memory number ${i} about topic${i}`, { userId: 'u' });
}

describe('two instances on one store in Chromium', () => {
  it('search() in one instance after the other reset() the store finds no ghosts, and its snapshot holds none', async () => {
    const name = unique('tabs-reset');
    const a = await Engram.open({ name, embedder: embedder() });
    const b = await Engram.open({ name, embedder: embedder() });
    await fill(a, 30);
    await b.ready();
    expect((await b.search('memory number 7', { mode: 'vector', limit: 50 })).results).toHaveLength(30);
    await a.reset();
    await a.add('the one memory after the reset', { userId: 'u' });
    for (const mode of ['vector', 'hybrid'] as const) {
      const { results } = await b.search('memory number 7 about topic7', { mode, limit: 50 });
      expect(
        results.map((r) => r.memory),
        mode,
      ).toEqual(['the one memory after the reset']);
    }
    await b.close();
    await a.close();
    const c = await Engram.open({ name, embedder: embedder() });
    expect((await c.ready()).size).toBe(1);
    await c.close();
  });

  it('search() in one instance after another imported a file with mode replace sees only the file', async () => {
    const source = await Engram.open({ name: unique('source'), embedder: embedder() });
    await source.add('imported fact about the lighthouse', { userId: 'u' });
    const file = await source.export();
    await source.close();
    const name = unique('tabs-import');
    const a = await Engram.open({ name, embedder: embedder() });
    await fill(a, 20);
    const importer = await Engram.import(file, { name, embedder: embedder(), mode: 'replace' });
    const { results } = await a.search('memory number 5 lighthouse', { mode: 'vector', limit: 50 });
    expect(results.map((r) => r.memory)).toEqual(['imported fact about the lighthouse']);
    expect((await a.ready()).size).toBe(1);
    await importer.close();
    await a.close();
    const c = await Engram.open({ name, embedder: embedder() });
    expect((await c.ready()).size).toBe(1);
    await c.close();
  });
});

describe('damaged rows in Chromium', () => {
  it('open() skips a stored vector with NaN and a null embedder record, reports both, and the rest works', async () => {
    const name = unique('damaged');
    const a = await Engram.open({ name, embedder: embedder() });
    await fill(a, 6);
    await a.conversation('t').add({ role: 'user', content: 'a message that must stay readable' });
    const victim = (await a.getAll({ userId: 'u', limit: 1 })).results[0]!;
    await a.close();
    const db = new EngramDb(name);
    await db.open();
    const row = (await db.vectors.get(victim.id))!;
    await db.vectors.put({ ...row, vector: row.vector.map((x, i) => (i === 0 ? Number.NaN : x)) });
    await db.meta.put({ key: 'indexSnapshot', value: null });
    await db.meta.put({ key: 'embedder', value: null });
    db.close();
    const b = await Engram.open({ name, embedder: embedder() });
    const ready = await b.ready();
    expect(ready.size).toBe(5);
    const stats = await b.stats();
    expect(stats.damagedRows.map((d) => `${d.table}:${d.key}`).sort()).toEqual(
      ['meta:embedder', 'meta:indexSnapshot', `vectors:${victim.id}`].sort(),
    );
    expect((await b.get(victim.id))?.memory).toBe(victim.memory);
    expect((await b.conversation('t').getMessages()).map((m) => m.content)).toEqual([
      'a message that must stay readable',
    ]);
    expect(
      (await b.search('memory number 2 about topic2', { userId: 'u', mode: 'vector', limit: 1 })).results[0]?.memory,
    ).toBe('memory number 2 about topic2');
    await b.close();
  });
});

describe('close() in Chromium', () => {
  it('close() with writes in flight: committed ones resolve and are stored, the rest reject with ClosedError', async () => {
    const name = unique('close');
    const e = await Engram.open({ name, embedder: embedder() });
    await e.add('loaded first', { userId: 'u' });
    const texts = Array.from({ length: 30 }, (_, i) => `written during close ${i}`);
    const runs = texts.map((text) => e.add(text, { userId: 'u' }));
    const settled = Promise.allSettled(runs);
    await new Promise((r) => setTimeout(r, 1));
    await e.close();
    const outcomes = await settled;
    for (const o of outcomes) {
      if (o.status === 'rejected') {
        expect(isEngramError(o.reason)).toBe(true);
        expect(o.reason).toBeInstanceOf(ClosedError);
      }
    }
    const reopened = await Engram.open({ name, embedder: embedder() });
    const stored = new Set((await reopened.getAll({ userId: 'u', limit: 100 })).results.map((r) => r.memory));
    texts.forEach((text, i) => {
      expect(stored.has(text), text).toBe(outcomes[i]!.status === 'fulfilled');
    });
    await reopened.close();
  });
});
