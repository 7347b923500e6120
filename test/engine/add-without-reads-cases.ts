/**
 * add()'s duplicate check without reads: when nothing standing shares an
 * input's statement and everything logged after the index's position is this
 * instance's own, the write transaction reads nothing before writing; if
 * another instance logged meanwhile, the write rolls back and is checked again
 * against the log. Shared by the Node (fake-indexeddb) and Chromium (real
 * IndexedDB: its key generator decides) tests.
 */
import { expect } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { EngineStore } from '../../lib/engine/engine-store.js';
import { addMemories, deleteMemories, type MemoryInput } from '../../lib/engine/memories/memories.js';
import { openStore } from '../../lib/engine/open-store.js';
import { SemanticIndex } from '../../lib/engine/vectors/semantic-index.js';

const embedder = new HashEmbedder({ dimensions: 64 });
const input = (text: string, userId = 'u'): MemoryInput => ({
  text,
  tier: 'long_term',
  scope: { userId },
  metadata: {},
});

async function openCore(name: string): Promise<{ core: EngineStore; semantic: SemanticIndex }> {
  const { db, deviceId } = await openStore(name);
  const core = new EngineStore(db, { maxContentBytes: 1_000_000, now: Date.now, deviceId });
  const semantic = new SemanticIndex(core, embedder, undefined);
  await semantic.ready();
  return { core, semantic };
}

async function close(...cores: { core: EngineStore; semantic: SemanticIndex }[]): Promise<void> {
  for (const { core, semantic } of cores) {
    await semantic.close();
    core.closeDb();
  }
}

/** Counts reads of the change log (gets, ranges, cursors, counts on the `changes` store) while `work` runs. */
async function changeLogReads(work: () => Promise<void>): Promise<number> {
  let reads = 0;
  const proto = IDBObjectStore.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const names = ['get', 'getAll', 'getAllKeys', 'getKey', 'openCursor', 'openKeyCursor', 'count'] as const;
  const real = names.map((n) => proto[n]!);
  names.forEach((n, i) => {
    proto[n] = function (this: IDBObjectStore, ...args: unknown[]): unknown {
      if (this.name === 'changes') reads += 1;
      return real[i]!.apply(this, args);
    };
  });
  try {
    await work();
  } finally {
    names.forEach((n, i) => (proto[n] = real[i]!));
  }
  return reads;
}

/** New statements in a row: the check reads no change log; duplicates of the instance's own writes, deleted ones and other scopes are still told apart. */
export async function ownWritesNeedNoReads(): Promise<void> {
  const a = await openCore(`without-reads-${Math.random().toString(36).slice(2)}`);
  try {
    const first = await addMemories(a.core, a.semantic, [input('I keep bees in the garden')]);
    const reads = await changeLogReads(async () => {
      await addMemories(a.core, a.semantic, [input('I play the cello on Sundays'), input('I sing in a choir')]);
      await addMemories(a.core, a.semantic, [input('I read before bed')]);
      await addMemories(a.core, a.semantic, [input('I walk my dog at noon'), input('I drink green tea every morning')]);
    });
    expect(reads).toBe(0);
    // Sayings of standing statements (the check reads their rows), in their scope only.
    const again = await addMemories(a.core, a.semantic, [
      input('I keep bees in the garden'),
      input('Oh, I keep bees in the garden!'),
      input('I keep bees in the garden', 'bo'),
    ]);
    expect(again.map((r) => [r.item.id === first[0]!.item.id, r.added])).toEqual([
      [true, false],
      [true, false],
      [false, true],
    ]);
    // Deleted, then said again: stored anew, not matched with the tombstone.
    expect(await deleteMemories(a.core, a.semantic, [first[0]!.item.id])).toBe(1);
    const back = await addMemories(a.core, a.semantic, [input('I keep bees in the garden')]);
    expect(back[0]!.added).toBe(true);
    expect(back[0]!.item.id).not.toBe(first[0]!.item.id);
  } finally {
    await close(a);
  }
}

/** Another instance logs between: the write rolls back and is checked again against the log, so its memory is found. */
export async function anotherInstanceMovesTheLog(): Promise<void> {
  const name = `without-reads-two-${Math.random().toString(36).slice(2)}`;
  const a = await openCore(name);
  const b = await openCore(name);
  try {
    await addMemories(a.core, a.semantic, [input('I keep bees in the garden')]);
    const theirs = await addMemories(b.core, b.semantic, [input('I play the cello on Sundays')]);
    // a's index has not seen b's write, and a's own memory holds nothing of it.
    const mine = await addMemories(a.core, a.semantic, [
      input('I play the cello on Sundays'),
      input('I sing in a choir'),
    ]);
    expect(mine.map((r) => r.added)).toEqual([false, true]);
    expect(mine[0]!.item.id).toBe(theirs[0]!.item.id);
    // Nothing new to write, only a duplicate of what b logged meanwhile: found the same way.
    await addMemories(b.core, b.semantic, [input('I read before bed')]);
    const dup = await addMemories(a.core, a.semantic, [input('Oh, I read before bed!')]);
    expect(dup[0]!.added).toBe(false);
    const rows = (await a.core.db.memories.toArray()).filter((r) => r.deletedAt === undefined);
    expect(rows.map((r) => r.text).sort()).toEqual([
      'I keep bees in the garden',
      'I play the cello on Sundays',
      'I read before bed',
      'I sing in a choir',
    ]);
  } finally {
    await close(a, b);
  }
}
