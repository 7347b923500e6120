/**
 * engram.reembed() on an open store (lib/engine/vectors/reembed.ts), shared by the Node
 * (fake-indexeddb) and Chromium (real IndexedDB) tests: searches and writes during the run,
 * the atomic switch, a stopped or killed run resumed, forget during the run, every scope,
 * another instance on the store, and an encrypted store.
 */
import { describe, expect, it } from 'vitest';
import type { Embedder, EmbedOptions } from '../../lib/embed/embedder.js';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import {
  ClosedError,
  EmbedderChangedError,
  Engram,
  ValidationError,
  type EngramOptions,
  type IndexProgress,
} from '../../lib/index.js';
import { EngramDb } from '../../lib/store/schema.js';
import type { VectorRow } from '../../lib/store/rows.js';
import { waitUntil } from '../helpers.js';

export const OLD = 256;
export const NEW = 128;
export const OLD_ID = `hash-${OLD}`;
export const NEW_ID = `hash-${NEW}`;
export const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;
/** Few KDF rounds: a real store has 600k. */
const PASS = { passphrase: 'correct horse battery', kdfIterations: 1000 };

/** The new model, with a hook run before each batch it embeds (the test acts mid-run there). */
export class HookedEmbedder implements Embedder {
  readonly #inner = new HashEmbedder({ dimensions: NEW });
  readonly id = NEW_ID;
  readonly dimensions = NEW;
  batches = 0;
  disposed = false;
  onBatch: ((batch: number) => Promise<void> | void) | undefined;

  async embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]> {
    this.batches += 1;
    await this.onBatch?.(this.batches);
    return this.#inner.embed(texts, options);
  }

  dispose(): Promise<void> {
    this.disposed = true;
    return Promise.resolve();
  }
}

export const text = (i: number): string => `memory number ${i} about topic${i}`;

export async function fill(e: Engram, from: number, to: number, userId = 'u'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = from; i < to; i++) ids.push((await e.add(text(i), { userId })).results[0]!.id);
  return ids;
}

/**
 * Whether a vector search finds each of memories `from`..`to` first (or tied first: the hash
 * embedder gives a few of these texts the same vector).
 */
export async function allFound(e: Engram, from: number, to: number, userId = 'u'): Promise<boolean> {
  for (let i = from; i < to; i++) {
    const { results } = await e.search(text(i), { userId, mode: 'vector', limit: 3 });
    const top = results[0]?.score;
    if (!results.some((r) => r.memory === text(i) && r.score === top)) return false;
  }
  return true;
}

/** The store's vector rows, read without the engine (a plain store). */
export async function rawVectors(name: string): Promise<VectorRow[]> {
  const db = new EngramDb(name);
  await db.open();
  try {
    return await db.vectors.toArray();
  } finally {
    db.close();
  }
}

export async function open(name: string, extra: Partial<EngramOptions> = {}): Promise<Engram> {
  return Engram.open({ name, embedder: new HashEmbedder({ dimensions: OLD }), ...extra });
}

export function reembedTests(where: string): void {
  describe(`engram.reembed() on an open store (${where})`, () => {
    it('reembed() switches every memory to the new model; searches answer from the old one until the switch', async () => {
      const name = unique('switch');
      const e = await open(name);
      await fill(e, 0, 150);
      const model = new HookedEmbedder();
      const during: { embedderId: string; stored: string | undefined; found: boolean }[] = [];
      model.onBatch = async (batch) => {
        if (batch !== 2) return;
        during.push({
          embedderId: (await e.ready()).embedderId,
          stored: (await Engram.storedEmbedder(name))?.id,
          found: await allFound(e, 0, 10),
        });
      };
      const progress: IndexProgress[] = [];
      const result = await e.reembed(model, { onProgress: (p) => progress.push(p) });
      expect(result).toEqual({ total: 150, embedded: 150 });
      // Mid-run: the old model's index answered, and the store still recorded it.
      expect(during).toEqual([{ embedderId: OLD_ID, stored: OLD_ID, found: true }]);
      expect(progress.filter((p) => p.phase === 'reembed').map((p) => p.done)).toEqual([0, 64, 128, 150]);
      const ready = await e.ready();
      expect([ready.embedderId, ready.dimensions, ready.size]).toEqual([NEW_ID, NEW, 150]);
      expect(await Engram.storedEmbedder(name)).toEqual({ id: NEW_ID, dimensions: NEW });
      expect(await allFound(e, 0, 150)).toBe(true);
      await e.add('written after the switch about pelicans', { userId: 'u' });
      await e.close();
      const rows = await rawVectors(name);
      expect(rows).toHaveLength(151);
      expect(rows.every((v) => v.embedderId === NEW_ID && v.staged === undefined && v.vector.length === NEW)).toBe(
        true,
      );
      // The caller's embedder stays the caller's.
      expect(model.disposed).toBe(false);
      const again = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: NEW }) });
      expect((await again.ready()).index).toBe('snapshot');
      expect(await allFound(again, 0, 20)).toBe(true);
      await again.close();
    });

    it('reembed(): writes during the run get the new model’s vectors; a deleted memory stays gone', async () => {
      const name = unique('writes');
      const e = await open(name);
      const ids = await fill(e, 0, 130);
      const model = new HookedEmbedder();
      let added = '';
      model.onBatch = async (batch) => {
        if (batch !== 2) return;
        added = (await e.add('a new note about the lighthouse keeper', { userId: 'w' })).results[0]!.id;
        // Memory 1 was staged in batch 1: its new text must be embedded again.
        await e.update(ids[1]!, 'memory one now speaks of volcanoes');
        await e.delete(ids[2]!);
        // Written during the run, found by the old model's index at once.
        const found = await e.search('a new note about the lighthouse keeper', { userId: 'w', mode: 'vector' });
        expect(found.results[0]?.id).toBe(added);
      };
      const result = await e.reembed(model);
      expect(result.total).toBe(130);
      const vector = async (q: string, userId: string): Promise<string | undefined> =>
        (await e.search(q, { userId, mode: 'vector', limit: 1 })).results[0]?.id;
      expect(await vector('a new note about the lighthouse keeper', 'w')).toBe(added);
      expect(await vector('memory one now speaks of volcanoes', 'u')).toBe(ids[1]);
      expect(await e.get(ids[2]!)).toBeUndefined();
      expect(
        (await e.search(text(2), { userId: 'u', mode: 'vector', limit: 5 })).results.map((r) => r.id),
      ).not.toContain(ids[2]);
      await e.close();
      const rows = await rawVectors(name);
      expect(rows.map((r) => r.id).sort()).toEqual([...ids.filter((id) => id !== ids[2]), added].sort());
      expect(rows.every((v) => v.embedderId === NEW_ID && v.staged === undefined)).toBe(true);
      const fresh = new HashEmbedder({ dimensions: NEW });
      const [expected] = await fresh.embed(['memory one now speaks of volcanoes']);
      expect(Array.from(rows.find((r) => r.id === ids[1])!.vector)).toEqual(Array.from(expected!));
    });

    it('reembed() stopped by its signal leaves the store on the old model; the next run embeds only the rest', async () => {
      const name = unique('stopped');
      const e = await open(name);
      await fill(e, 0, 200);
      const controller = new AbortController();
      const model = new HookedEmbedder();
      model.onBatch = (batch) => {
        if (batch === 3) controller.abort();
      };
      await expect(e.reembed(model, { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
      expect((await e.ready()).embedderId).toBe(OLD_ID);
      expect(await Engram.storedEmbedder(name)).toEqual({ id: OLD_ID, dimensions: OLD });
      expect(await allFound(e, 0, 200)).toBe(true);
      // Every stored vector is still the old model's: no mixed index.
      expect((await rawVectors(name)).every((v) => v.embedderId === OLD_ID)).toBe(true);
      model.onBatch = undefined;
      const result = await e.reembed(model);
      expect(result).toEqual({ total: 200, embedded: 200 - 128 });
      expect(await allFound(e, 0, 200)).toBe(true);
      await e.close();
    });

    it('reembed() killed mid-run (the engram closed under it): reopened, the old model searches; the next run finishes', async () => {
      const name = unique('killed');
      const e = await open(name);
      await fill(e, 0, 200);
      const model = new HookedEmbedder();
      let closing: Promise<void> | undefined;
      model.onBatch = (batch) => {
        if (batch === 3) closing = e.close();
      };
      await expect(e.reembed(model)).rejects.toThrow(ClosedError);
      await closing;
      const b = await open(name);
      expect((await b.ready()).embedderId).toBe(OLD_ID);
      expect(await allFound(b, 0, 200)).toBe(true);
      const result = await b.reembed(new HookedEmbedder());
      expect(result.total).toBe(200);
      expect(result.embedded).toBeLessThan(200);
      expect(await allFound(b, 0, 200)).toBe(true);
      await b.close();
      expect((await rawVectors(name)).every((v) => v.embedderId === NEW_ID && v.staged === undefined)).toBe(true);
    });

    it('reembed() covers every scope, and forget() during the run brings nothing of the forgotten back', async () => {
      const name = unique('scopes');
      const e = await open(name);
      await fill(e, 0, 70, 'ana');
      await fill(e, 70, 140, 'bo');
      await e.add('the agent keeps a note about tide tables', { agentId: 'helper' });
      const anaIds = (await e.getAll({ userId: 'ana', limit: 100 })).results.map((m) => m.id);
      const model = new HookedEmbedder();
      model.onBatch = async (batch) => {
        if (batch === 2) await e.forget({ userId: 'ana' });
      };
      const result = await e.reembed(model);
      expect(result.total).toBe(71);
      expect(await allFound(e, 70, 140, 'bo')).toBe(true);
      const agent = await e.search('tide tables', { agentId: 'helper', mode: 'vector', limit: 1 });
      expect(agent.results[0]?.memory).toBe('the agent keeps a note about tide tables');
      expect((await e.search(text(3), { userId: 'ana', mode: 'vector' })).results).toEqual([]);
      expect((await e.search(text(3), { mode: 'hybrid', limit: 50 })).results.map((r) => r.userId)).not.toContain(
        'ana',
      );
      await e.close();
      const rows = await rawVectors(name);
      expect(rows.filter((r) => anaIds.includes(r.id))).toEqual([]);
      expect(rows).toHaveLength(71);
    });

    it('another instance on the store keeps answering during the run, and its writes after the switch are embedded by the new model', async () => {
      const name = unique('peer');
      const e = await open(name);
      await fill(e, 0, 100);
      const peer = await open(name);
      const model = new HookedEmbedder();
      model.onBatch = async (batch) => {
        if (batch === 2) expect(await allFound(peer, 0, 10)).toBe(true);
      };
      await e.reembed(model);
      // The peer still holds the old model's index and embedder: it learns of the switch from the log head,
      // refuses a ranking by its model (reembed-peers-cases.ts) and answers by keyword; it is not closed.
      await expect(peer.search(text(5), { userId: 'u', limit: 3 })).rejects.toThrow(EmbedderChangedError);
      expect((await peer.search(text(5), { userId: 'u', mode: 'keyword', limit: 3 })).results.length).toBeGreaterThan(
        0,
      );
      const late = (await peer.add('written by the peer after the switch about otters', { userId: 'u' })).results[0]!
        .id;
      // The instance on the new model finds it with another model's vector and embeds it again.
      await e.search('otters', { userId: 'u' });
      expect(
        await waitUntil(async () => (await rawVectors(name)).find((v) => v.id === late)?.embedderId === NEW_ID),
      ).toBe(true);
      // The repair writes the vector, then places it in the index: a search in between may not find it yet.
      const first = async (): Promise<string | undefined> =>
        (await e.search('written by the peer after the switch about otters', { userId: 'u', mode: 'vector' }))
          .results[0]?.id;
      expect(await waitUntil(async () => (await first()) === late)).toBe(true);
      await peer.close();
      await e.close();
    });

    it('reembed() with a factory: the engram owns the new embedder from the switch; the old one it made is disposed', async () => {
      const name = unique('factory');
      const made: HookedEmbedder[] = [];
      const e = await Engram.open({ name, embedder: async () => new HashEmbedder({ dimensions: OLD }) });
      await fill(e, 0, 10);
      await e.reembed(async () => {
        const m = new HookedEmbedder();
        made.push(m);
        return m;
      });
      expect(made).toHaveLength(1);
      expect(await allFound(e, 0, 10)).toBe(true);
      await e.close();
      expect(made[0]!.disposed).toBe(true);
    });

    it('reembed() checks its arguments, runs one at a time, and on an empty store just adopts the model', async () => {
      const e = await open(unique('args'));
      await expect(e.reembed(42 as unknown as Embedder)).rejects.toThrow(ValidationError);
      await expect(e.reembed(new HookedEmbedder(), { signal: 'no' } as never)).rejects.toThrow(ValidationError);
      expect(await e.reembed(new HookedEmbedder())).toEqual({ total: 0, embedded: 0 });
      expect((await e.ready()).embedderId).toBe(NEW_ID);
      await fill(e, 0, 70);
      const model = new HookedEmbedder();
      const first = e.reembed(new HashEmbedder({ dimensions: 64 }));
      await expect(e.reembed(model)).rejects.toThrow(ValidationError);
      await first;
      expect((await e.ready()).embedderId).toBe('hash-64');
      // The model already in use: nothing to do.
      expect(await e.reembed(new HashEmbedder({ dimensions: 64 }))).toEqual({ total: 70, embedded: 0 });
      await e.close();
      await expect(e.reembed(model)).rejects.toThrow(ClosedError);
    });

    it('reembed() on a store encrypted at rest: searches work after, and a raw read finds no text or vector', async () => {
      const name = unique('sealed');
      const e = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: OLD }), encryption: PASS });
      await e.add('Ana hides a quokka', { userId: 'ana' });
      await e.add('Bo rows a gondola', { userId: 'bo' });
      await fill(e, 0, 70);
      const model = new HookedEmbedder();
      model.onBatch = async (batch) => {
        if (batch === 1) await e.add('Ana plays the theremin', { userId: 'ana' });
      };
      expect((await e.reembed(model)).total).toBe(73);
      const found = await e.search('Ana plays the theremin', { userId: 'ana', mode: 'vector', limit: 1 });
      expect(found.results[0]?.memory).toBe('Ana plays the theremin');
      await e.close();
      const db = new EngramDb(name);
      await db.open();
      const rows = await db.vectors.toArray();
      db.close();
      const raw = JSON.stringify(rows, (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Uint8Array) : v));
      for (const word of ['quokka', 'gondola', 'theremin', NEW_ID, OLD_ID, 'embedderId', 'staged'])
        expect(raw.includes(word), word).toBe(false);
      const [vector] = await new HashEmbedder({ dimensions: NEW }).embed(['Ana plays the theremin']);
      const needle = Array.from(new Uint8Array(vector!.buffer, vector!.byteOffset, 16)).join(',');
      expect(raw.includes(needle)).toBe(false);
      const again = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: NEW }), encryption: PASS });
      expect((await again.search('quokka', { userId: 'ana', mode: 'vector' })).results[0]?.memory).toBe(
        'Ana hides a quokka',
      );
      expect((await again.stats()).damaged).toBe(0);
      await again.close();
    });
  });
}
