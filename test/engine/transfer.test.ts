import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { Engram, ImportError, type TransferProgress } from '../../lib/index.js';
import { BLOCKS_TABLE, EngramDb, SCHEMA_VERSION } from '../../lib/store/schema.js';
import { manualClock } from '../helpers.js';

const embedder = (): HashEmbedder => new HashEmbedder({ dimensions: 64 });
const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;

/** A store with every kind of record: messages (trimmed too), memories (updated, deleted, keyed, expiring), blocks, traces. */
async function richStore(name: string): Promise<Engram> {
  const clock = manualClock();
  const e = await Engram.open({ name, embedder: embedder(), now: () => { clock.advance(7); return clock.now(); } });
  const chat = e.conversation('t1', { agentId: 'helper', userId: 'ana' });
  await chat.add([
    { role: 'system', content: 'persona' },
    { role: 'user', content: 'I live in Porto', name: 'ana', metadata: { mood: 'ok' } },
    { role: 'tool', content: '{"ok":1}', toolCallId: 'c1' },
  ]);
  await chat.trimMessages(1);
  const { results } = await e.add('Lives in Porto', { userId: 'ana', metadata: { source: 'chat' } });
  await e.update(results[0]!.id, 'Lives in Lisbon');
  const gone = await e.add('Temporary note', { agentId: 'helper' });
  await e.delete(gone.results[0]!.id);
  const mem = e.system({ sessionId: 's1', projectId: 'p1' });
  await mem.remember('goal', { text: 'ship', n: 2 }, { tier: 'project' });
  await mem.remember('scratch', 'short lived');
  await mem.addTrace('plan', 'thinking', { why: ['a'] }, 0.7);
  await e.blocks('helper').set('human', 'Name: Ana', { limit: 100 });
  return e;
}

async function tables(name: string): Promise<Record<string, unknown[]>> {
  const db = new EngramDb(name);
  await db.open();
  const out: Record<string, unknown[]> = {};
  for (const t of ['messages', 'memories', 'vectors', 'history', BLOCKS_TABLE, 'traces', 'terms'] as const) out[t] = await db.table(t).toArray();
  out['embedder'] = [(await db.meta.get('embedder'))?.value];
  out['stats'] = [(await db.meta.get('stats:m'))?.value, (await db.meta.get('stats:v'))?.value];
  db.close();
  return out;
}

describe('export / import', () => {
  it('a round trip through export() and import(replace) reproduces the store exactly', async () => {
    const a = await richStore(unique('src'));
    const progress: TransferProgress[] = [];
    const file = await a.export({ onProgress: (p) => progress.push(p) });
    expect(progress.at(-1)).toMatchObject({ phase: 'export' });
    expect(progress.at(-1)!.done).toBe(progress.at(-1)!.total);
    const lines = (await file.text()).trim().split('\n').map((l) => JSON.parse(l) as { type: string });
    expect(lines[0]).toMatchObject({ type: 'header', format: 'engram-export', version: 1, schemaVersion: SCHEMA_VERSION, embedder: { id: 'hash-64', dimensions: 64 } });
    expect(new Set(lines.map((l) => l.type))).toEqual(new Set(['header', 'message', 'memory', 'history', 'block', 'trace', 'end']));
    await a.close();

    const target = unique('dst');
    const b = await Engram.import(file, { name: target, mode: 'replace', embedder: embedder() });
    await b.close();
    expect(await tables(target)).toEqual(await tables(a.name));

    const c = await Engram.open({ name: target, embedder: embedder() });
    const again = (await (await c.export()).text()).split('\n').slice(1);
    expect(again).toEqual((await file.text()).split('\n').slice(1));
    expect((await c.search('Lisbon', { userId: 'ana', mode: 'vector', limit: 1 })).results[0]!.memory).toBe('Lives in Lisbon');
    expect((await c.recall.textSearch('porto')).total).toBe(1);
    expect(await c.system({ sessionId: 's1', projectId: 'p1' }).recall('goal')).toEqual({ text: 'ship', n: 2 });
    await c.close();
  });

  it('import(merge) keeps what is there and takes new or newer records', async () => {
    const a = await richStore(unique('src'));
    const file = await a.export();
    await a.close();
    const name = unique('merge');
    const b = await Engram.open({ name, embedder: embedder() });
    await b.add('Already here', { userId: 'bo' });
    await b.close();
    const merged = await Engram.import(file, { name, mode: 'merge', embedder: embedder() });
    expect((await merged.getAll({ userId: 'bo' })).results.map((r) => r.memory)).toEqual(['Already here']);
    expect((await merged.getAll({ userId: 'ana' })).results.map((r) => r.memory)).toEqual(['Lives in Lisbon']);
    expect((await merged.search('Lisbon', { userId: 'ana', mode: 'vector', limit: 1 })).results[0]!.memory).toBe('Lives in Lisbon');
    await merged.close();
    // merging the same file twice changes nothing
    const before = await tables(name);
    const twice = await Engram.import(file, { name, mode: 'merge', embedder: embedder() });
    await twice.close();
    const after = await tables(name);
    expect(after['memories']).toEqual(before['memories']);
    expect(after['history']).toHaveLength(before['history']!.length);
  });

  it('a bad file gives ImportError with its line number and leaves the store as it was', async () => {
    const a = await richStore(unique('src'));
    const good = (await (await a.export()).text()).trim().split('\n');
    await a.close();
    const name = unique('victim');
    const v = await Engram.open({ name, embedder: embedder() });
    await v.add('precious memory', { userId: 'x' });
    await v.close();
    const snapshot = await tables(name);
    const mutate = (i: number, f: (o: Record<string, unknown>) => unknown): string => good.map((l, j) => (j === i ? JSON.stringify(f(JSON.parse(l) as Record<string, unknown>)) : l)).join('\n');
    const memoryLine = good.findIndex((l) => l.includes('"type":"memory"'));
    const cases: [string, number, RegExp][] = [
      ['', 1, /empty|header/],
      [good.slice(0, -1).join('\n'), good.length, /truncated/],
      [good.map((l, i) => (i === 3 ? '{oops' : l)).join('\n'), 4, /not valid JSON/],
      [mutate(0, (o) => ({ ...o, version: 99 })), 1, /format version 99/],
      [mutate(2, (o) => ({ ...o, type: 'alien' })), 3, /unknown record type/],
      [mutate(1, (o) => ({ ...o, row: { ...(o['row'] as object), role: 'robot' } })), 2, /role/],
      [mutate(memoryLine, (o) => ({ ...o, vector: { embedderId: 'hash-64', data: 'AAAA' } })), memoryLine + 1, /finite 32-bit floats/],
      [good.slice(0, 2).concat([good[1]!], good.slice(2)).join('\n'), 3, /duplicate message|end line counts/],
    ];
    for (const [text, line, message] of cases) {
      const attempt = Engram.import(text, { name, mode: 'replace', embedder: embedder() });
      await expect(attempt).rejects.toThrow(ImportError);
      await expect(attempt).rejects.toMatchObject({ line });
      await expect(attempt).rejects.toThrow(message);
    }
    expect(await tables(name)).toEqual(snapshot);
  });

  it('import(merge) refuses vectors from another embedder', async () => {
    const a = await richStore(unique('src'));
    const file = await a.export();
    await a.close();
    const name = unique('other');
    const o = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 32 }) });
    await o.add('mine', {});
    await o.close();
    await expect(Engram.import(file, { name, mode: 'merge', embedder: new HashEmbedder({ dimensions: 32 }) })).rejects.toThrow(/hash-64/);
  });
});
