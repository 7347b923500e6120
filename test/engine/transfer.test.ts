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
  const e = await Engram.open({
    name,
    embedder: embedder(),
    now: () => {
      clock.advance(7);
      return clock.now();
    },
  });
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
  for (const t of ['messages', 'memories', 'vectors', 'history', BLOCKS_TABLE, 'traces', 'terms'] as const)
    out[t] = await db.table(t).toArray();
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
    const lines = (await file.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines[0]).toMatchObject({
      type: 'header',
      format: 'engram-export',
      version: 2,
      schemaVersion: SCHEMA_VERSION,
      embedder: { id: 'hash-64', dimensions: 64 },
    });
    expect(new Set(lines.map((l) => l.type))).toEqual(
      new Set(['header', 'message', 'memory', 'history', 'block', 'trace', 'end']),
    );
    await a.close();

    const target = unique('dst');
    const b = await Engram.import(file, { name: target, mode: 'replace', embedder: embedder() });
    await b.close();
    expect(await tables(target)).toEqual(await tables(a.name));

    const c = await Engram.open({ name: target, embedder: embedder() });
    // Every record line again (the header's time and so the end line's digest differ).
    const again = (await (await c.export()).text()).split('\n').slice(1, -2);
    expect(again).toEqual((await file.text()).split('\n').slice(1, -2));
    expect((await c.search('Lisbon', { userId: 'ana', mode: 'vector', limit: 1 })).results[0]!.memory).toBe(
      'Lives in Lisbon',
    );
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
    expect((await merged.search('Lisbon', { userId: 'ana', mode: 'vector', limit: 1 })).results[0]!.memory).toBe(
      'Lives in Lisbon',
    );
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
    const mutate = (i: number, f: (o: Record<string, unknown>) => unknown): string =>
      good.map((l, j) => (j === i ? JSON.stringify(f(JSON.parse(l) as Record<string, unknown>)) : l)).join('\n');
    const memoryLine = good.findIndex((l) => l.includes('"type":"memory"'));
    const cases: [string, number, RegExp][] = [
      ['', 1, /empty|header/],
      [good.slice(0, -1).join('\n'), good.length, /truncated/],
      [good.map((l, i) => (i === 3 ? '{oops' : l)).join('\n'), 4, /not valid JSON/],
      [mutate(0, (o) => ({ ...o, version: 99 })), 1, /format version 99/],
      [mutate(2, (o) => ({ ...o, type: 'alien' })), 3, /unknown record type/],
      [mutate(1, (o) => ({ ...o, row: { ...(o['row'] as object), role: 'robot' } })), 2, /role/],
      [
        mutate(memoryLine, (o) => ({ ...o, vector: { embedderId: 'hash-64', data: 'AAAA' } })),
        memoryLine + 1,
        /finite 32-bit floats/,
      ],
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
    await expect(
      Engram.import(file, { name, mode: 'merge', embedder: new HashEmbedder({ dimensions: 32 }) }),
    ).rejects.toThrow(/hash-64/);
  });
});

describe('export / import integrity', () => {
  it('export() reads one consistent state while another instance deletes', async () => {
    const name = unique('busy');
    const a = await Engram.open({ name, embedder: embedder() });
    const chat = a.conversation('t');
    const N = 2400;
    for (let i = 0; i < N; i += 400)
      await chat.add(Array.from({ length: 400 }, (_, j) => ({ role: 'user' as const, content: `message ${i + j}` })));
    const ids = (await chat.getMessages()).map((m) => m.id);
    const b = await Engram.open({ name, embedder: embedder() });
    const doomed = ids.filter((_, i) => i % 3 === 0);
    const deleting = (async () => {
      for (let i = 0; i < doomed.length; i += 20) await b.conversation('t').delete(doomed.slice(i, i + 20));
    })();
    const file = await a.export();
    await deleting;
    const lines = (await file.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; counts?: Record<string, number>; row?: { id: string } });
    const exported = new Set(lines.filter((l) => l.type === 'message').map((l) => l.row!.id));
    // The header's counts and the lines agree, and every message never deleted is in the file.
    expect(exported.size).toBe(lines[0]!.counts!['message']);
    for (const id of ids.filter((_, i) => i % 3 !== 0)) expect(exported.has(id)).toBe(true);
    // What was exported is a prefix of the deletions: deleted messages are all absent or a consistent set.
    const present = doomed.map((id) => exported.has(id));
    expect(present.indexOf(true) === -1 || present.lastIndexOf(false) < present.indexOf(true)).toBe(true);
    await a.close();
    await b.close();
  });

  it('import() refuses a line edited in transit and a record removed with the counts fixed, naming the line', async () => {
    const a = await richStore(unique('src'));
    const good = (await (await a.export()).text()).trim().split('\n');
    await a.close();
    const end = JSON.parse(good.at(-1)!) as {
      records: number;
      digest: { algorithm: string; lines: string[]; body: string };
    };
    expect(end.digest.algorithm).toBe('SHA-256');
    expect(end.digest.lines).toHaveLength(good.length - 1);
    const name = unique('victim');
    const v = await Engram.open({ name, embedder: embedder() });
    await v.add('precious memory', { userId: 'x' });
    await v.close();
    const snapshot = await tables(name);
    const memoryLine = good.findIndex((l) => l.includes('"type":"memory"') && l.includes('Lisbon'));
    const edited = good.map((l, i) => (i === memoryLine ? l.replace('Lisbon', 'Lisboa') : l));
    const messageLine = good.findIndex((l) => l.includes('"type":"message"'));
    const header = JSON.parse(good[0]!) as { counts: Record<string, number> };
    const removed = [
      JSON.stringify({ ...header, counts: { ...header.counts, message: header.counts['message']! - 1 } }),
      ...good.slice(1, -1).filter((_, i) => i + 1 !== messageLine),
      JSON.stringify({ ...end, records: end.records - 1 }),
    ];
    const forged = good.map((l, i) =>
      i === good.length - 1 ? JSON.stringify({ ...end, digest: { ...end.digest, body: '0'.repeat(64) } }) : l,
    );
    const cases: [string, number, RegExp][] = [
      [edited.join('\n'), memoryLine + 1, /does not match its SHA-256 digest/],
      [removed.join('\n'), 1, /does not match its SHA-256 digest/],
      [forged.join('\n'), good.length, /SHA-256 of the file body/],
      [
        good
          .map((l, i) => (i === good.length - 1 ? JSON.stringify({ type: 'end', records: end.records }) : l))
          .join('\n'),
        good.length,
        /no valid SHA-256 digest/,
      ],
    ];
    for (const [text, line, message] of cases) {
      const attempt = Engram.import(text, { name, mode: 'merge', embedder: embedder() });
      await expect(attempt).rejects.toThrow(ImportError);
      await expect(attempt).rejects.toMatchObject({ line });
      await expect(attempt).rejects.toThrow(message);
    }
    // With the header left as it was, the removed record is named by the line that took its place.
    const cut = [
      ...good.slice(0, messageLine),
      ...good.slice(messageLine + 1, -1),
      JSON.stringify({ ...end, records: end.records - 1 }),
    ];
    await expect(Engram.import(cut.join('\n'), { name, mode: 'merge', embedder: embedder() })).rejects.toMatchObject({
      line: messageLine + 1,
    });
    expect(await tables(name)).toEqual(snapshot);
    // The untouched file imports.
    const ok = await Engram.import(good.join('\n'), { name: unique('ok'), mode: 'replace', embedder: embedder() });
    expect((await ok.getAll({ userId: 'ana' })).results.map((r) => r.memory)).toEqual(['Lives in Lisbon']);
    await ok.close();
  });

  it('import(merge) applies add()’s duplicate rule: a text already in the scope under another id is not stored twice', async () => {
    const src = await Engram.open({ name: unique('src'), embedder: embedder() });
    await src.add('Ana likes green tea', { userId: 'ana' });
    await src.add('Ana likes green tea!', { userId: 'ana', dedupe: 'off' });
    await src.add('Ana likes green tea', { userId: 'ben' });
    await src.add('Ana plays chess', { userId: 'ana' });
    const file = await src.export();
    await src.close();
    const name = unique('dst');
    const dst = await Engram.open({ name, embedder: embedder() });
    const standing = (await dst.add('Ana likes green tea', { userId: 'ana' })).results[0]!.id;
    await dst.close();
    const merged = await Engram.import(file, { name, mode: 'merge', embedder: embedder() });
    const ana = (await merged.getAll({ userId: 'ana' })).results;
    expect(ana.map((r) => r.memory).sort()).toEqual(['Ana likes green tea', 'Ana plays chess']);
    expect(ana.find((r) => r.memory === 'Ana likes green tea')!.id).toBe(standing);
    expect((await merged.getAll({ userId: 'ben' })).results.map((r) => r.memory)).toEqual(['Ana likes green tea']);
    // Importing the same file again changes nothing.
    await merged.close();
    const again = await Engram.import(file, { name, mode: 'merge', embedder: embedder() });
    expect((await again.getAll({ limit: 100 })).total).toBe(3);
    await again.close();
  });
});
