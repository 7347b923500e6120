/**
 * add() whose write overlaps the embedding (vectors written last in the same
 * transaction), shared by the Node (fake-indexeddb) and Chromium (real
 * IndexedDB: the transaction kept alive while a later task brings the vectors) tests.
 */
import { expect } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import type { Embedder } from '../../lib/embed/embedder.js';
import { openTemp } from '../helpers.js';

/** An embedder that answers after `delay()` ms, and not before `gate` opens when one is set. */
function timedEmbedder(delay: () => number): Embedder & { gate: Promise<void> | undefined } {
  const inner = new HashEmbedder({ dimensions: 64 });
  return {
    id: 'timed',
    dimensions: 64,
    gate: undefined,
    async embed(texts) {
      await new Promise((r) => setTimeout(r, delay()));
      await this.gate;
      return inner.embed(texts);
    },
    async dispose() {},
  };
}

const opened = (): { promise: Promise<void>; open: () => void } => {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
};

/** A quick embedder whose answer comes while add() writes its rows: all of it lands, searchable, duplicates still found. */
export async function quickEmbedderOverlaps(): Promise<void> {
  let delay = 0;
  const embedder = timedEmbedder(() => delay);
  const e = await openTemp({ embedder });
  await e.add('I drink green tea every morning', { userId: 'ana' }); // the embedder's speed is learnt: quick
  delay = 5;
  // New statements only: the vectors are written last. Then sayings of standing statements: the check waits for them.
  const batches = [
    { texts: ['I walk my dog at noon', 'I read before bed', 'I read before bed'], events: ['ADD', 'ADD', 'NONE'] },
    { texts: ['Oh, I drink green tea every morning!', 'I walk my dog at noon.'], events: ['NONE', 'NONE'] },
  ];
  const ids: string[][] = [];
  for (const { texts, events } of batches) {
    const gate = opened();
    embedder.gate = gate.promise;
    const adding = e.add(
      texts.map((content) => ({ role: 'user', content })),
      { userId: 'ana' },
    );
    await new Promise((r) => setTimeout(r, 30));
    gate.open();
    const { results } = await adding;
    expect(results.map((r) => r.event)).toEqual(events);
    ids.push(results.map((r) => r.id));
  }
  embedder.gate = undefined;
  expect(ids[0]![2]).toBe(ids[0]![1]);
  expect(ids[1]![1]).toBe(ids[0]![0]);
  const found = await e.search('I walk my dog at noon', { userId: 'ana', mode: 'vector', limit: 1 });
  expect(found.results[0]).toMatchObject({ id: ids[0]![0] });
  expect((await e.getAll({ userId: 'ana' })).total).toBe(3);
  await e.close();
}

/** A slow embedder (cache hits between its calls): add() embeds before its write transaction, so the store stays readable meanwhile. */
export async function slowEmbedderWaits(): Promise<void> {
  const embedder = timedEmbedder(() => 60);
  const e = await openTemp({ embedder });
  await e.add('first memory', { userId: 'u' }); // the embedder's speed is learnt: slow
  // Texts answered from the cache say nothing of the model's speed.
  for (let i = 0; i < 5; i++) expect((await e.add('first memory', { userId: 'u' })).results[0]!.event).toBe('NONE');
  const gate = opened();
  embedder.gate = gate.promise;
  const adding = e.add('second memory', { userId: 'u' });
  await new Promise((r) => setTimeout(r, 100));
  const heldUp = new Promise((r) => {
    setTimeout(() => {
      r('held up');
    }, 1000);
  });
  const read = await Promise.race([e.getAll({ userId: 'u' }).then((r) => r.total), heldUp]);
  expect(read).toBe(1);
  gate.open();
  await adding;
  expect((await e.getAll({ userId: 'u' })).total).toBe(2);
  await e.close();
}
