import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import type { IndexProgress } from '../../lib/engine/vectors/vector-state.js';
import { DimensionMismatchError, Engram, KeyError, ValidationError } from '../../lib/index.js';
import { EngramDb } from '../../lib/store/schema.js';
import { getSnapshot, putSnapshot } from '../../lib/store/snapshot-chunks.js';
import { decodeSnapshot } from '../../lib/vector/snapshot-format.js';
import { waitUntil } from '../helpers.js';

const embedder = (d = 256): HashEmbedder => new HashEmbedder({ dimensions: d });
const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;

async function fill(e: Engram, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) await e.add(`memory number ${i} about topic${i}`, { userId: 'u' });
}

async function allFound(e: Engram, n: number): Promise<boolean> {
  for (let i = 0; i < n; i++) {
    const { results } = await e.search(`memory number ${i} about topic${i}`, { userId: 'u', mode: 'vector', limit: 1 });
    if (results[0]?.memory !== `memory number ${i} about topic${i}`) return false;
  }
  return true;
}

describe('vector index persistence', () => {
  it('open() restores the index from its snapshot after close()', async () => {
    const name = unique('snap');
    const a = await Engram.open({ name, embedder: embedder() });
    await fill(a, 0, 30);
    await a.close();
    const b = await Engram.open({ name, embedder: embedder() });
    const ready = await b.ready();
    expect(ready.index).toBe('snapshot');
    expect(ready.size).toBe(30);
    expect(await allFound(b, 30)).toBe(true);
    await b.close();
  });

  it('open() restores the scope table with the snapshot: scoped searches stay scoped', async () => {
    const name = unique('scopes');
    const a = await Engram.open({ name, embedder: embedder() });
    await a.add('shared sentence about the harbour', { userId: 'ana', agentId: 'helper' });
    await a.add('shared sentence about the harbour', { userId: 'bo' });
    const gone = await a.add('expired short thought about the harbour', { userId: 'ana' });
    await a.delete(gone.results[0]!.id);
    await a.close();
    const b = await Engram.open({ name, embedder: embedder() });
    expect((await b.ready()).index).toBe('snapshot');
    for (const mode of ['vector', 'keyword', 'hybrid'] as const) {
      const ana = await b.search('harbour', { userId: 'ana', mode, limit: 10 });
      expect(ana.results.map((r) => [r.userId, r.agentId])).toEqual([['ana', 'helper']]);
      expect((await b.search('harbour', { agentId: 'helper', mode })).results).toHaveLength(1);
      expect((await b.search('harbour', { userId: 'bo', mode })).results.map((r) => r.userId)).toEqual(['bo']);
    }
    await b.add('new harbour note written after the reopen', { userId: 'bo' });
    expect((await b.search('harbour', { userId: 'bo', mode: 'vector', limit: 10 })).results).toHaveLength(2);
    await b.close();
  });

  it('open() restores the scope table of a chunked snapshot (made while the chunks are read): scoped searches stay scoped', async () => {
    const name = unique('chunked-scopes');
    const a = await Engram.open({ name, embedder: embedder() });
    await a.add('a note about the lighthouse', { userId: 'ana' });
    await a.add('a note about the lighthouse keeper', { userId: 'bo', agentId: 'helper' });
    await a.close();
    // The same record stored again in chunks of 64 bytes (a 100k index is stored in chunks of 32 MB).
    const db = new EngramDb(name);
    await db.open();
    const stored = (await getSnapshot(db, 'indexSnapshot'))!.value as Record<string, unknown> & { bytes: Uint8Array };
    await putSnapshot(db, 'indexSnapshot', stored, 64);
    expect((await db.meta.get('indexSnapshot:1'))?.value).toBeInstanceOf(Uint8Array);
    db.close();
    const b = await Engram.open({ name, embedder: embedder() });
    expect((await b.ready()).index).toBe('snapshot');
    expect(
      (await b.search('lighthouse', { userId: 'ana', mode: 'vector', limit: 10 })).results.map((r) => r.userId),
    ).toEqual(['ana']);
    expect(
      (await b.search('lighthouse', { agentId: 'helper', mode: 'vector', limit: 10 })).results.map((r) => r.userId),
    ).toEqual(['bo']);
    await b.close();
  });

  it('open() replays writes newer than the snapshot (a crash after the snapshot)', async () => {
    const name = unique('stale');
    const a = await Engram.open({ name, embedder: embedder() });
    await fill(a, 0, 20);
    await a.flush();
    await fill(a, 20, 35);
    const deleted = (await a.getAll({ userId: 'u', limit: 1 })).results[0]!;
    await a.delete(deleted.id);
    // `a` never closes: its last writes exist only in the store and the change log.
    const b = await Engram.open({ name, embedder: embedder() });
    const ready = await b.ready();
    expect(ready.index).toBe('snapshot');
    expect(ready.size).toBe(34);
    expect(await allFound(b, 34)).toBe(true);
    expect(
      (await b.search(deleted.memory, { mode: 'vector', limit: 50 })).results.some((r) => r.id === deleted.id),
    ).toBe(false);
    await b.close();
    await a.close();
  });

  it('open() rebuilds from stored vectors when the snapshot is missing or corrupt, with progress', async () => {
    for (const damage of ['missing', 'corrupt', 'truncated'] as const) {
      const name = unique(damage);
      const a = await Engram.open({ name, embedder: embedder() });
      await fill(a, 0, 25);
      await a.close();
      const db = new EngramDb(name);
      await db.open();
      const record = (await db.meta.get('indexSnapshot'))!.value as { bytes: Uint8Array };
      if (damage === 'missing') await db.meta.delete('indexSnapshot');
      if (damage === 'corrupt')
        await db.meta.put({
          key: 'indexSnapshot',
          value: { ...record, bytes: new Uint8Array(record.bytes.length).fill(7) },
        });
      if (damage === 'truncated')
        await db.meta.put({
          key: 'indexSnapshot',
          value: { ...record, bytes: record.bytes.slice(0, record.bytes.length >> 1) },
        });
      db.close();
      const progress: IndexProgress[] = [];
      const b = await Engram.open({ name, embedder: embedder(), onProgress: (p) => progress.push(p) });
      const ready = await b.ready();
      expect(ready.index).toBe('rebuild');
      expect(ready.size).toBe(25);
      expect(progress.some((p) => p.phase === 'rebuild' && p.done === 25 && p.total === 25)).toBe(true);
      expect(await allFound(b, 25)).toBe(true);
      await b.close();
    }
  });

  it("two instances on one store see each other's memories in search", async () => {
    const name = unique('tabs');
    const a = await Engram.open({ name, embedder: embedder() });
    const b = await Engram.open({ name, embedder: embedder() });
    await a.add('written in tab a about gardening', { userId: 'u' });
    await b.ready();
    await a.add('written in tab a about sailing', { userId: 'u' });
    const found = await b.search('written in tab a about sailing', { mode: 'vector', limit: 1 });
    expect(found.results[0]!.memory).toBe('written in tab a about sailing');
    await a.close();
    await b.close();
  });

  it('open() with another embedder gives DimensionMismatchError unless asked to re-embed', async () => {
    const name = unique('mismatch');
    const a = await Engram.open({ name, embedder: embedder(256) });
    await fill(a, 0, 10);
    await a.close();
    await expect(Engram.open({ name, embedder: embedder(128) })).rejects.toThrow(DimensionMismatchError);
    const progress: IndexProgress[] = [];
    const b = await Engram.open({ name, embedder: embedder(128), reembed: { onProgress: (p) => progress.push(p) } });
    expect(progress.filter((p) => p.phase === 'reembed').at(-1)).toEqual({ phase: 'reembed', done: 10, total: 10 });
    expect((await b.ready()).dimensions).toBe(128);
    expect(await allFound(b, 10)).toBe(true);
    await b.close();
    const c = await Engram.open({ name, embedder: embedder(128) });
    expect((await c.ready()).index).toBe('snapshot');
    await c.close();
  });

  it('reembed honours its AbortSignal and a later re-embed finishes the job', async () => {
    const name = unique('abort');
    const a = await Engram.open({ name, embedder: embedder(256) });
    await fill(a, 0, 200);
    await a.close();
    const controller = new AbortController();
    const opening = Engram.open({
      name,
      embedder: embedder(128),
      reembed: {
        signal: controller.signal,
        onProgress: (p) => {
          if (p.done >= 64) controller.abort();
        },
      },
    });
    await expect(opening).rejects.toThrow(/aborted/);
    const b = await Engram.open({ name, embedder: embedder(128), reembed: true });
    expect(await allFound(b, 20)).toBe(true);
    expect((await b.getAll({ limit: 1 })).total).toBe(200);
    await b.close();
  });
});

describe('re-embedding a store', () => {
  it('reembed stopped by its AbortSignal leaves every vector as it was (what it made is only staged): the old embedder opens a store that is all its own', async () => {
    const name = unique('rollback');
    const a = await Engram.open({ name, embedder: embedder(256) });
    await fill(a, 0, 200);
    await a.close();
    const db = new EngramDb(name);
    await db.open();
    const before = await db.vectors.toArray();
    const controller = new AbortController();
    const progress: IndexProgress[] = [];
    const opening = Engram.open({
      name,
      embedder: embedder(128),
      reembed: {
        signal: controller.signal,
        onProgress: (p) => {
          progress.push(p);
          if (p.done >= 128) controller.abort();
        },
      },
    });
    await expect(opening).rejects.toThrow(/aborted/);
    expect(progress.map((p) => p.done)).toEqual([0, 64, 128]);
    expect(await Engram.storedEmbedder(name)).toEqual({ id: embedder(256).id, dimensions: 256 });
    // Every vector is as it was, bit for bit: the old embedder's, of its dimension; the new model's
    // vectors made before the stop wait beside them for the next run.
    const after = await db.vectors.toArray();
    expect(after.map(({ id, vector, embedderId }) => ({ id, vector, embedderId }))).toEqual(before);
    expect(after.filter((v) => v.staged?.embedderId === embedder(128).id)).toHaveLength(128);
    db.close();
    expect(new Set(before.map((v) => v.embedderId))).toEqual(new Set([embedder(256).id]));
    const b = await Engram.open({ name, embedder: embedder(256) });
    const ready = await b.ready();
    expect([ready.index, ready.size]).toEqual(['snapshot', 200]);
    expect(await allFound(b, 20)).toBe(true);
    await b.close();
  });

  it('reembed that fails mid-way (the embedder throws) leaves every vector as it was and rethrows', async () => {
    const name = unique('failing');
    const a = await Engram.open({ name, embedder: embedder(256) });
    await fill(a, 0, 100);
    await a.close();
    const db = new EngramDb(name);
    await db.open();
    const before = await db.vectors.toArray();
    const failing = embedder(128);
    let calls = 0;
    const embed = failing.embed.bind(failing);
    failing.embed = (texts, options) =>
      ++calls === 2 ? Promise.reject(new TypeError('model crashed')) : embed(texts, options);
    await expect(Engram.open({ name, embedder: failing, reembed: true })).rejects.toThrow(/model crashed/);
    const after = await db.vectors.toArray();
    expect(after.map(({ id, vector, embedderId }) => ({ id, vector, embedderId }))).toEqual(before);
    db.close();
    const b = await Engram.open({ name, embedder: embedder(256) });
    expect(await allFound(b, 20)).toBe(true);
    await b.close();
  });

  it("reembed's own onProgress hears the re-embed when open() has an onProgress too, and so does open()'s", async () => {
    const name = unique('listeners');
    const a = await Engram.open({ name, embedder: embedder(256) });
    await fill(a, 0, 70);
    await a.close();
    const own: IndexProgress[] = [];
    const opens: IndexProgress[] = [];
    const b = await Engram.open({
      name,
      embedder: embedder(128),
      reembed: { onProgress: (p) => own.push(p) },
      onProgress: (p) => opens.push(p),
    });
    expect(own.map((p) => [p.phase, p.done, p.total])).toEqual([
      ['reembed', 0, 70],
      ['reembed', 64, 70],
      ['reembed', 70, 70],
    ]);
    expect(opens.filter((p) => p.phase === 'reembed')).toEqual(own);
    await b.close();
  });

  it('Engram.storedEmbedder() reads the recorded embedder, and nothing for a store that never embedded', async () => {
    const name = unique('stored');
    expect(await Engram.storedEmbedder(name)).toBeUndefined();
    const a = await Engram.open({ name, embedder: embedder(64) });
    expect(await Engram.storedEmbedder(name)).toBeUndefined();
    await a.add('one memory', { userId: 'u' });
    expect(await Engram.storedEmbedder(name)).toEqual({ id: embedder(64).id, dimensions: 64 });
    await a.close();
    await expect(Engram.storedEmbedder('')).rejects.toThrow(ValidationError);
  });

  it('Engram.storedEmbedder() of a store encrypted at rest needs its key, and reads the sealed record with it', async () => {
    const name = unique('stored-sealed');
    const encryption = { passphrase: 'correct horse battery', kdfIterations: 1000 };
    const a = await Engram.open({ name, embedder: embedder(64), encryption });
    await a.add('one sealed memory', { userId: 'u' });
    await a.close();
    await expect(Engram.storedEmbedder(name)).rejects.toMatchObject({ name: 'KeyError', reason: 'key-needed' });
    expect(await Engram.storedEmbedder(name, { encryption })).toEqual({ id: embedder(64).id, dimensions: 64 });
    await expect(
      Engram.storedEmbedder(name, { encryption: { passphrase: 'incorrect horse battery', kdfIterations: 1000 } }),
    ).rejects.toThrow(KeyError);
  });
});

describe('vector index snapshots while writing', () => {
  it('counts memory changes only: messages logged between them do not bring the next snapshot forward', async () => {
    const name = unique('cadence');
    const e = await Engram.open({ name, embedder: embedder(32) });
    const db = new EngramDb(name);
    await db.open();
    const snapshotSeq = async (): Promise<number | undefined> =>
      ((await db.meta.get('indexSnapshot'))?.value as { seq?: number } | undefined)?.seq;
    const batch = (from: number, n: number): { role: 'user'; content: string }[] =>
      Array.from({ length: n }, (_, i) => ({
        role: 'user' as const,
        content: `note ${from + i} about subject${from + i}`,
      }));
    const chat = e.conversation('t1', { userId: 'u' });
    await e.add(batch(0, 100), { userId: 'u', dedupe: 'off' });
    await e.search('note', { mode: 'vector' }); // the background snapshot work is queued before the search
    const first = await snapshotSeq();
    expect(first).toBeDefined();
    // 900 memories and 900 messages in turns: 1800 logged changes, but under the 1000 memory changes that call for the next snapshot.
    for (let i = 100; i < 1000; i += 100) {
      await chat.add(batch(10_000 + i, 100));
      await e.add(batch(i, 100), { userId: 'u', dedupe: 'off' });
    }
    await e.search('note', { mode: 'vector' });
    expect(await snapshotSeq()).toBe(first);
    // The next 100 memories make 1000: a snapshot follows, at once or (spaced after the last one) a little later.
    await e.add(batch(1000, 100), { userId: 'u', dedupe: 'off' });
    await waitUntil(async () => (await snapshotSeq()) !== first, 20_000, 50);
    expect(await snapshotSeq()).toBeGreaterThan(first!);
    db.close();
    await e.close();
  });
});

describe('a restored HNSW snapshot whose vector bytes are corrupt', () => {
  it('opens from it, then finds the bad checksum right after, reports it and rebuilds', async () => {
    const name = unique('checksum');
    const dims = 16;
    const a = await Engram.open({ name, embedder: embedder(dims) });
    const texts = Array.from({ length: 1200 }, (_, i) => `entry ${i} on theme${i}`);
    await a.add(
      texts.map((content) => ({ role: 'user' as const, content })),
      { userId: 'u', dedupe: 'off' },
    );
    // Every vector into HNSW before the snapshot (past the crossover they wait in the exact buffer first).
    await a.flush();
    await a.close();
    const db = new EngramDb(name);
    await db.open();
    const record = (await db.meta.get('indexSnapshot'))!.value as { bytes: Uint8Array };
    const { payload, kind } = decodeSnapshot(record.bytes, 'hnsw');
    expect(kind).toBe('hnsw');
    // A byte inside element 7's vector (hnswlib's 56-byte header, then per element 2m+1 link words, the vector, the label): the structure stays valid.
    const element = (2 * 16 + 1) * 4 + dims * 4 + 4;
    const at =
      record.bytes.length - payload.length - ((4 - (payload.length % 4)) % 4) + 56 + 7 * element + (2 * 16 + 1) * 4 + 2;
    const bytes = record.bytes.slice();
    bytes[at] = bytes[at]! ^ 0x40;
    await db.meta.put({ key: 'indexSnapshot', value: { ...record, bytes } });
    db.close();
    const damaged: string[] = [];
    const b = await Engram.open({
      name,
      embedder: embedder(dims),
      onProgress: (p) => {
        if (p.phase === 'damaged' && p.damaged !== undefined) damaged.push(p.damaged.reason);
      },
    });
    expect((await b.ready()).index).toBe('snapshot');
    await waitUntil(() => damaged.length > 0, 20_000, 50);
    expect(damaged.some((reason) => reason.includes('checksum'))).toBe(true);
    const { results } = await b.search(texts[7]!, { userId: 'u', mode: 'vector', limit: 1 });
    expect(results[0]?.memory).toBe(texts[7]);
    await b.close();
  });
});
