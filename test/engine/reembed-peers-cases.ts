/**
 * Two Engram instances on one store while one re-embeds it (lib/engine/vectors/reembed-lease.ts and the
 * switch's effect on the other instance), shared by the Node (fake-indexeddb) and Chromium tests: a second
 * re-embed is refused while the first runs, runs after the first finished, was closed, or its lease (left by a
 * tab that died) expired, and a stalled run that lost its lease stops; an instance still on the old model once
 * the other switched learns of it, refuses vector and hybrid search with EmbedderChangedError (keyword works),
 * writes memories without a vector for the new model's instance to embed, and never snapshots its old index.
 */
import { describe, expect, it } from 'vitest';
import type { Embedder, EmbedOptions } from '../../lib/embed/embedder.js';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { LEASE_MS, REEMBED_LEASE_KEY } from '../../lib/engine/vectors/reembed-lease.js';
import { ClosedError, EmbedderChangedError, Engram, ReembedBusyError } from '../../lib/index.js';
import { waitUntil } from '../helpers.js';
import { EngramDb } from '../../lib/store/schema.js';
import type { VectorRow } from '../../lib/store/rows.js';

const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;
const text = (i: number): string => `memory number ${i} about topic${i}`;

/** A hash model of `dimensions`, with a hook run before each batch it embeds (the test acts mid-run there). */
class HookedEmbedder implements Embedder {
  readonly #inner: HashEmbedder;
  readonly id: string;
  readonly dimensions: number;
  batches = 0;
  onBatch: ((batch: number) => Promise<void> | void) | undefined;

  constructor(dimensions: number) {
    this.#inner = new HashEmbedder({ dimensions });
    this.id = this.#inner.id;
    this.dimensions = dimensions;
  }

  async embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]> {
    this.batches += 1;
    await this.onBatch?.(this.batches);
    return this.#inner.embed(texts, options);
  }

  dispose(): Promise<void> {
    return Promise.resolve();
  }
}

/** A clock both instances share, moved by the test (the lease's expiry is on the store's clock). */
function sharedClock(): { now: () => number; advance: (ms: number) => void } {
  let t = Date.now();
  return { now: () => t, advance: (ms) => (t += ms) };
}

async function fill(e: Engram, from: number, to: number): Promise<void> {
  const texts = Array.from({ length: to - from }, (_, i) => text(from + i));
  await e.add(
    texts.map((content) => ({ role: 'user' as const, content })),
    { userId: 'u', dedupe: 'off' },
  );
}

async function rawVectors(name: string): Promise<VectorRow[]> {
  const db = new EngramDb(name);
  await db.open();
  try {
    return await db.vectors.toArray();
  } finally {
    db.close();
  }
}

/** The lease row as stored (a plain store), or undefined. */
async function readLease(name: string): Promise<unknown> {
  const db = new EngramDb(name);
  await db.open();
  try {
    return (await db.meta.get(REEMBED_LEASE_KEY))?.value;
  } finally {
    db.close();
  }
}

async function writeLease(name: string, value: { owner: string; target: string; expiresAt: number }): Promise<void> {
  const db = new EngramDb(name);
  await db.open();
  try {
    await db.meta.put({ key: REEMBED_LEASE_KEY, value });
  } finally {
    db.close();
  }
}

export function reembedPeerTests(where: string): void {
  describe(`two instances on a store being re-embedded (${where})`, () => {
    it('a second reembed() is refused (ReembedBusyError naming the model) while another instance runs one, and runs once it finished', async () => {
      const name = unique('lease');
      const clock = sharedClock();
      const a = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 256 }), now: clock.now });
      await fill(a, 0, 150);
      const b = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 256 }), now: clock.now });
      const first = new HookedEmbedder(128);
      let refused: unknown;
      first.onBatch = async (batch) => {
        if (batch === 2) refused = await b.reembed(new HookedEmbedder(64)).catch((e: unknown) => e);
      };
      expect(await a.reembed(first)).toEqual({ total: 150, embedded: 150 });
      expect(refused).toBeInstanceOf(ReembedBusyError);
      expect((refused as ReembedBusyError).code).toBe('REEMBED_BUSY');
      expect((refused as ReembedBusyError).target).toBe('hash-128');
      // The refused run wrote nothing: every row holds a's model, nothing staged.
      expect((await rawVectors(name)).every((v) => v.embedderId === 'hash-128' && v.staged === undefined)).toBe(true);
      // The first run released its lease: the second runs now, without waiting for an expiry.
      expect(await b.reembed(new HookedEmbedder(64))).toEqual({ total: 150, embedded: 150 });
      expect(await Engram.storedEmbedder(name)).toEqual({ id: 'hash-64', dimensions: 64 });
      await a.close();
      await b.close();
      expect((await rawVectors(name)).every((v) => v.embedderId === 'hash-64' && v.staged === undefined)).toBe(true);
    });

    it('a run that died with its tab leaves its lease to expire; a run stopped by close() releases it at once', async () => {
      const name = unique('expiry');
      const clock = sharedClock();
      const a = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 256 }), now: clock.now });
      await fill(a, 0, 200);
      const b = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 256 }), now: clock.now });
      const killed = new HookedEmbedder(128);
      let closing: Promise<void> | undefined;
      killed.onBatch = (batch) => {
        if (batch === 3) closing = a.close();
      };
      await expect(a.reembed(killed)).rejects.toThrow(ClosedError);
      await closing;
      expect(await readLease(name)).toBeUndefined();
      // A dead tab's lease: the row as a run leaves it, never renewed again.
      await writeLease(name, { owner: 'a-tab-that-died', target: 'hash-128', expiresAt: clock.now() + LEASE_MS });
      await expect(b.reembed(new HookedEmbedder(128))).rejects.toThrow(ReembedBusyError);
      clock.advance(LEASE_MS - 1000);
      await expect(b.reembed(new HookedEmbedder(128))).rejects.toThrow(ReembedBusyError);
      clock.advance(2000);
      const result = await b.reembed(new HookedEmbedder(128));
      // What the closed run staged for the same model is kept.
      expect(result.total).toBe(200);
      expect(result.embedded).toBeLessThan(200);
      const found = await b.search(text(7), { userId: 'u', mode: 'vector', limit: 1 });
      expect(found.results[0]?.memory).toBe(text(7));
      await b.close();
      expect(await readLease(name)).toBeUndefined();
    });

    it('a run that stalled past its lease and lost it to another run stops before writing; the other run’s switch stands', async () => {
      const name = unique('takeover');
      const clock = sharedClock();
      const a = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 256 }), now: clock.now });
      await fill(a, 0, 150);
      const b = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 256 }), now: clock.now });
      const stalled = new HookedEmbedder(128);
      let taken: unknown;
      stalled.onBatch = async (batch) => {
        if (batch !== 2) return;
        // a stalls (a frozen background tab) past its lease; b takes over and finishes meanwhile.
        clock.advance(LEASE_MS + 1);
        taken = await b.reembed(new HookedEmbedder(64));
      };
      await expect(a.reembed(stalled)).rejects.toThrow(ReembedBusyError);
      expect(taken).toEqual({ total: 150, embedded: 150 });
      expect(await Engram.storedEmbedder(name)).toEqual({ id: 'hash-64', dimensions: 64 });
      expect((await rawVectors(name)).every((v) => v.embedderId === 'hash-64' && v.staged === undefined)).toBe(true);
      await a.close();
      await b.close();
    });

    it('an instance on the old model learns of the switch: vector and hybrid search refused, keyword works, its writes carry no vector and are embedded by the new model', async () => {
      const name = unique('superseded');
      const a = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 256 }) });
      await fill(a, 0, 100);
      const b = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 256 }) });
      const c = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 256 }) });
      expect((await b.search(text(5), { userId: 'u', mode: 'vector', limit: 1 })).results[0]?.memory).toBe(text(5));
      expect((await c.ready()).embedderId).toBe('hash-256');
      await a.reembed(new HookedEmbedder(128));

      // b learns it from the log head its next search reads.
      const refused = await b.search(text(5), { userId: 'u', mode: 'vector' }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(EmbedderChangedError);
      expect(refused).toMatchObject({ code: 'EMBEDDER_CHANGED', recorded: 'hash-128', current: 'hash-256' });
      await expect(b.search(text(5), { userId: 'u' })).rejects.toThrow(EmbedderChangedError);
      expect((await b.search(text(5), { userId: 'u', mode: 'keyword', limit: 1 })).results[0]?.memory).toBe(text(5));
      // Its writes: a new memory without a vector row, a changed text without its old vector.
      const late = (await b.add('written by b after the switch about otters', { userId: 'u' })).results[0]!.id;
      const target = (await b.search(text(9), { userId: 'u', mode: 'keyword', limit: 1 })).results[0]!.id;
      await b.update(target, { text: 'changed by b: the lighthouse keeper collects barometers' });
      const rows = new Map((await rawVectors(name)).map((v) => [v.id, v]));
      // (None of b's: a vector row here can only be a's repair with the new model.)
      expect(rows.get(late)?.embedderId).not.toBe('hash-256');
      expect(rows.get(target)?.embedderId).not.toBe('hash-256');

      // c only writes: its first write after the switch still embeds with the old model, and its commit tells c.
      const first = (await c.add('c writes about walruses first', { userId: 'u' })).results[0]!.id;
      const second = (await c.add('c writes about narwhals second', { userId: 'u' })).results[0]!.id;
      // (a may already have met them through the change log and repaired them with the new model:
      // what c wrote is an old-model vector for the first, none for the second, never old for it.)
      const byId = new Map((await rawVectors(name)).map((v) => [v.id, v]));
      expect(['hash-256', 'hash-128']).toContain(byId.get(first)?.embedderId);
      expect(byId.get(second)?.embedderId).not.toBe('hash-256');

      // The instance on the store's model embeds all of them when it meets them, with the texts they hold now.
      const firstHit = async (query: string): Promise<string | undefined> =>
        (await a.search(query, { userId: 'u', mode: 'vector', limit: 1 })).results[0]?.id;
      expect(await waitUntil(async () => (await firstHit('written by b after the switch about otters')) === late)).toBe(
        true,
      );
      expect(
        await waitUntil(
          async () => (await firstHit('changed by b: the lighthouse keeper collects barometers')) === target,
        ),
      ).toBe(true);
      expect(await waitUntil(async () => (await firstHit('c writes about walruses first')) === first)).toBe(true);
      expect(await waitUntil(async () => (await firstHit('c writes about narwhals second')) === second)).toBe(true);
      expect((await rawVectors(name)).every((v) => v.embedderId === 'hash-128')).toBe(true);

      // Closing the old-model instances last writes no old-model snapshot over the new model's.
      await a.close();
      await b.close();
      await c.close();
      const again = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 128 }) });
      expect((await again.ready()).index).toBe('snapshot');
      expect((await again.search(text(42), { userId: 'u', mode: 'vector', limit: 1 })).results[0]?.memory).toBe(
        text(42),
      );
      await again.close();
    });
  });
}
