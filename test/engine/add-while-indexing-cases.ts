/**
 * add() does not wait for the vector index's queue (a snapshot, the previous
 * add's update): it takes its candidates from the index as it stands and
 * checks what was logged after it, so duplicates of writes the index has not
 * applied yet are still found. Past MAX_UNAPPLIED such log entries it waits.
 * Shared by the Node (fake-indexeddb) and Chromium (real IndexedDB) tests, which
 * hold snapshots at a gate by mocking putSnapshot (see held-snapshots.ts).
 */
import { expect } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { EngineStore } from '../../lib/engine/engine-store.js';
import { addMemories, deleteMemories, type MemoryInput } from '../../lib/engine/memories/memories.js';
import { MAX_UNAPPLIED } from '../../lib/engine/memories/near-duplicates.js';
import { openStore } from '../../lib/engine/open-store.js';
import { SemanticIndex } from '../../lib/engine/vectors/semantic-index.js';
import type { VectorState } from '../../lib/engine/vectors/vector-state.js';
import { held } from './held-snapshots.js';

const embedder = new HashEmbedder({ dimensions: 64 });
const input = (text: string, userId = 'u'): MemoryInput => ({
  text,
  tier: 'long_term',
  scope: { userId },
  metadata: {},
});

async function openCore(): Promise<{ core: EngineStore; semantic: SemanticIndex; state: VectorState }> {
  const { db, deviceId } = await openStore(`add-while-indexing-${Math.random().toString(36).slice(2)}`);
  const core = new EngineStore(db, { maxContentBytes: 1_000_000, now: Date.now, deviceId });
  const semantic = new SemanticIndex(core, embedder, undefined);
  const { state } = await semantic.ready();
  // The first snapshot now: later ones wait for 1000 changes, so only holdQueue's comes while a case runs.
  await state.snapshot();
  return { core, semantic, state };
}

/** Holds the index's queue with a snapshot until the returned function is called. */
function holdQueue(state: VectorState): () => Promise<void> {
  let open!: () => void;
  held.gate = new Promise<void>((resolve) => (open = resolve));
  const snapshotting = state.snapshot();
  return async () => {
    open();
    held.gate = undefined;
    await snapshotting;
  };
}

/** 'pending' when `promise` has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  const timeout = new Promise<'pending'>((resolve) => {
    setTimeout(() => {
      resolve('pending');
    }, ms);
  });
  return Promise.race([promise, timeout]);
}

/** A snapshot holds the queue: add() goes on, and finds exact and near duplicates of the writes the index has not applied, in their scope only. */
export async function addDoesNotWaitForTheQueue(): Promise<void> {
  const { core, semantic, state } = await openCore();
  let release: (() => Promise<void>) | undefined;
  try {
    await addMemories(core, semantic, [input('I keep bees in the garden')]);
    await state.idle();
    const applied = state.seq;
    release = holdQueue(state);
    const first = await within(
      addMemories(core, semantic, [input('I play the cello on Sundays'), input('I keep bees in the garden')]),
      2_000,
    );
    expect(first).not.toBe('pending');
    if (first === 'pending') return;
    expect(first.map((r) => r.added)).toEqual([true, false]);
    // The queue is held: the index has not applied that write.
    expect(state.seq).toBe(applied);
    const cello = first[0]!.item.id;
    const again = await within(
      addMemories(core, semantic, [
        input('I play the cello on Sundays'),
        input('Oh, I play the cello on Sundays!'),
        input('I sing in a choir'),
      ]),
      2_000,
    );
    expect(again).not.toBe('pending');
    if (again === 'pending') return;
    expect(again.map((r) => [r.item.id === cello, r.added])).toEqual([
      [true, false],
      [true, false],
      [false, true],
    ]);
    // Another user's same words are that user's own memory; a deleted memory is no duplicate.
    const other = await addMemories(core, semantic, [input('I play the cello on Sundays', 'bo')]);
    expect(other.map((r) => [r.item.id === cello, r.added])).toEqual([[false, true]]);
    const choir = again[2]!.item.id;
    expect(await deleteMemories(core, semantic, [choir])).toBe(1);
    const back = await addMemories(core, semantic, [input('I sing in a choir')]);
    expect(back.map((r) => [r.item.id === choir, r.added])).toEqual([[false, true]]);
    expect(state.seq).toBe(applied);
    await release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    await state.idle();
    expect(state.seq).toBe(core.lastOwnSeq);
    // bees, cello, cello of bo, the choir again: the deleted one is gone from the index.
    expect(state.index.size).toBe(4);
    expect(state.scopes.size).toBe(4);
    expect(state.index.has(choir)).toBe(false);
  } finally {
    await release?.();
    await semantic.close();
    core.closeDb();
  }
}

/** Past MAX_UNAPPLIED log entries the index has not applied, add() waits for it. */
export async function addWaitsPastMaxUnapplied(): Promise<void> {
  const { core, semantic, state } = await openCore();
  let release: (() => Promise<void>) | undefined;
  try {
    await addMemories(core, semantic, [input('first of all')]);
    await state.idle();
    release = holdQueue(state);
    const many = Array.from({ length: MAX_UNAPPLIED + 1 }, (_, i) => input(`fact number ${i} of the import`));
    expect(await within(addMemories(core, semantic, many), 20_000)).not.toBe('pending');
    const late = addMemories(core, semantic, [input('fact number 7 of the import'), input('a new fact')]);
    expect(await within(late, 300)).toBe('pending');
    await release();
    const outcome = await late;
    expect(outcome.map((r) => r.added)).toEqual([false, true]);
  } finally {
    await release?.();
    await semantic.close();
    core.closeDb();
  }
}
