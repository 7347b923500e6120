import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { BULK_WRITE, EngineStore } from '../../lib/engine/engine-store.js';
import { addMemories, deleteMemories, updateMemory, type MemoryInput } from '../../lib/engine/memories/memories.js';
import { openStore } from '../../lib/engine/open-store.js';
import type { RowChange } from '../../lib/store/write.js';
import type { MessageRow } from '../../lib/store/rows.js';
import { EngramDb } from '../../lib/store/schema.js';
import { SemanticIndex } from '../../lib/engine/vectors/semantic-index.js';
import { VectorState } from '../../lib/engine/vectors/vector-state.js';
import { HnswIndex } from '../../lib/vector/hnsw-index.js';
import { EMBEDDER_KEY } from '../../lib/store/embedder-record.js';
import { waitUntil } from '../helpers.js';
import { writeGate, type WriteGate } from './held-writes.js';

const embedder = new HashEmbedder({ dimensions: 64 });
const input = (i: number, userId = 'u'): MemoryInput => ({
  text: `memory number ${i} about topic${i}`,
  tier: 'long_term',
  scope: { userId },
  metadata: {},
});
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);
/** Waits for what a write left to the vector state (afterWrite runs once the caller has its result). */
async function settled(state: VectorState): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 0));
  await state.idle();
}

async function openCore(name: string): Promise<{ core: EngineStore; semantic: SemanticIndex }> {
  const { db, deviceId } = await openStore(name);
  const core = new EngineStore(db, { maxContentBytes: 1_000_000, now: Date.now, deviceId });
  return { core, semantic: new SemanticIndex(core, embedder, undefined) };
}

/**
 * Adds 1100 memories (past the crossover: they wait in the exact buffer) while the instance is held as
 * writing a small write, so that neither a pause nor the add itself (a bulk write) merges the buffer, then
 * takes the first snapshot, so that none waits for a later write and holds the queue. The hold stays on
 * until the returned `release()`.
 */
async function fillBufferHeld(core: EngineStore, semantic: SemanticIndex, state: VectorState): Promise<() => void> {
  Object.defineProperty(core, 'writing', { configurable: true, get: () => true });
  Object.defineProperty(core, 'onlyBulkWrites', { configurable: true, get: () => false });
  await addMemories(
    core,
    semantic,
    range(0, 1100).map((i) => input(i)),
    undefined,
    'off',
  );
  await settled(state);
  await state.snapshot();
  return () => {
    Reflect.deleteProperty(core, 'writing');
    Reflect.deleteProperty(core, 'onlyBulkWrites');
  };
}

/** Adds memories `from` to `to` in writes of `size` (under BULK_WRITE: small writes). */
async function addInSmallWrites(
  core: EngineStore,
  semantic: SemanticIndex,
  from: number,
  to: number,
  size: number,
): Promise<void> {
  expect(size).toBeLessThan(BULK_WRITE);
  for (let at = from; at < to; at += size)
    await addMemories(
      core,
      semantic,
      range(at, Math.min(at + size, to)).map((i) => input(i)),
      undefined,
      'off',
    );
}

describe('vector state: own writes, the exact buffer and its merge', () => {
  it('past the crossover, new vectors wait in the buffer, searchable at once; the buffer is snapshotted apart and merged when writing pauses', async () => {
    const name = `buffer-${Math.random().toString(36).slice(2)}`;
    const { core, semantic } = await openCore(name);
    const { state } = await semantic.ready();
    // The instance reports a small write under way until the assertions below: a loaded machine may otherwise pause
    // 50 ms and merge, and a bulk write (this add of 1200) would let the merge run beside it.
    Object.defineProperty(core, 'writing', { configurable: true, get: () => true });
    Object.defineProperty(core, 'onlyBulkWrites', { configurable: true, get: () => false });
    await addMemories(
      core,
      semantic,
      range(0, 1200).map((i) => input(i)),
      undefined,
      'off',
    );
    await state.idle();
    // 1200 ≥ the crossover: an empty HNSW index behind the buffer, which holds all 1200, searchable.
    expect(state.index.kind).toBe('hnsw');
    expect(state.index.main.size).toBe(0);
    expect(state.index.pending).toBe(1200);
    // Room for the 1200 (the next power of two), not for twice as many.
    const main = state.index.main;
    expect(main).toBeInstanceOf(HnswIndex);
    expect(main instanceof HnswIndex && main.capacity).toBe(2048);
    const early = (await embedder.embed([core.analyzer.normalize(input(700).text)]))[0]!;
    const id700 = (await core.db.memories.toArray()).find((r) => r.text === input(700).text)!.id;
    expect(state.index.search(early, 1)[0]!.id).toBe(id700);
    // Writing paused: they move into HNSW in slices.
    Reflect.deleteProperty(core, 'writing');
    Reflect.deleteProperty(core, 'onlyBulkWrites');
    await waitUntil(() => state.index.pending === 0);
    expect(state.index.pending).toBe(0);
    expect(state.index.main.size).toBe(1200);
    expect(state.index.search(early, 1)[0]!.id).toBe(id700);
    Object.defineProperty(core, 'writing', { configurable: true, get: () => true });
    Object.defineProperty(core, 'onlyBulkWrites', { configurable: true, get: () => false });
    const [added] = await addMemories(
      core,
      semantic,
      range(1200, 1250).map((i) => input(i)),
      undefined,
      'off',
    );
    await state.idle();
    expect(state.index.pending).toBe(50);
    expect(state.index.size).toBe(1250);
    expect(state.seq).toBe((await core.db.changes.orderBy(':id').last())!.seq);
    const probe = (await embedder.embed([core.analyzer.normalize(input(1210).text)]))[0]!;
    expect(state.index.search(probe, 1)[0]!.id).toBe(
      (await core.db.memories.toArray()).find((r) => r.text === input(1210).text)!.id,
    );
    // Deletions and text changes of buffered and merged memories, applied from this instance's own writes.
    await deleteMemories(core, semantic, [added!.item.id]);
    const oldOne = (await core.db.memories.toArray()).find((r) => r.text === input(3).text)!;
    await updateMemory(core, semantic, oldOne.id, { text: 'a brand new sentence about harbours' });
    await state.idle();
    expect(state.index.has(added!.item.id)).toBe(false);
    expect(state.index.size).toBe(1249);
    const moved = (await embedder.embed([core.analyzer.normalize('a brand new sentence about harbours')]))[0]!;
    expect(state.index.search(moved, 1)[0]).toMatchObject({ id: oldOne.id });
    expect(state.scopes.size).toBe(1249);

    // Written right before the snapshot, so that the buffer still holds them: it merges once writing has paused for 50 ms.
    await addMemories(
      core,
      semantic,
      range(1300, 1310).map((i) => input(i)),
      undefined,
      'off',
    );
    await state.snapshot();
    const pendingAtSnapshot = state.index.pending;
    expect(pendingAtSnapshot).toBeGreaterThan(0);
    const restored = await VectorState.load(core, embedder.id, 64);
    expect(restored.origin).toBe('snapshot');
    expect(restored.index.pending).toBe(pendingAtSnapshot);
    expect(restored.index.search(moved, 1)[0]).toMatchObject({ id: oldOne.id });
    expect(restored.index.size).toBe(1259);
    restored.dispose();
    Reflect.deleteProperty(core, 'writing');
    Reflect.deleteProperty(core, 'onlyBulkWrites');

    // Writing paused: the buffer is merged into HNSW in the background.
    await waitUntil(() => state.index.pending === 0);
    expect(state.index.pending).toBe(0);
    expect(state.index.main.size).toBe(1259);
    expect(state.index.search(moved, 1)[0]).toMatchObject({ id: oldOne.id });
    // flush()'s merge: everything at once, whatever the writer does.
    await addMemories(
      core,
      semantic,
      range(2000, 2040).map((i) => input(i)),
      undefined,
      'off',
    );
    await state.idle();
    expect(state.index.pending).toBe(40);
    await state.mergeAll();
    expect(state.index.pending).toBe(0);
    expect(state.index.size).toBe(1299);
    await semantic.close();
    core.closeDb();
  });

  it('a snapshot restored with unmerged vectors merges them once writing pauses, with no write after the open', async () => {
    const name = `buffer-${Math.random().toString(36).slice(2)}`;
    const { core, semantic } = await openCore(name);
    const { state } = await semantic.ready();
    const release = await fillBufferHeld(core, semantic, state);
    const pending = state.index.pending;
    expect(pending).toBeGreaterThan(0);
    expect(state.index.kind).toBe('hnsw');
    state.dispose();
    release();
    // As the next session finds it: nothing written since the snapshot, so its catch-up replays nothing.
    const restored = await VectorState.load(core, embedder.id, 64);
    expect(restored.origin).toBe('snapshot');
    expect(restored.seq).toBe(state.seq);
    await waitUntil(() => restored.index.pending === 0);
    expect(restored.index.main.size).toBe(1100);
    const probe = (await embedder.embed([core.analyzer.normalize(input(900).text)]))[0]!;
    const id900 = (await core.db.memories.toArray()).find((r) => r.text === input(900).text)!.id;
    expect(restored.index.search(probe, 1)[0]!.id).toBe(id900);
    restored.dispose();
    await semantic.close();
    core.closeDb();
  });

  it("a write's commit that shows another model recorded (another instance's re-embed) supersedes the index at once", async () => {
    const { core, semantic } = await openCore(`superseded-${Math.random().toString(36).slice(2)}`);
    const { state } = await semantic.ready();
    await addMemories(core, semantic, [input(1)], undefined, 'off');
    await settled(state);
    expect(state.superseded).toBeUndefined();
    // Another instance switched the store to its model (reembed.ts records it in meta).
    await core.db.meta.put({ key: EMBEDDER_KEY, value: { id: 'other-model-64', dimensions: 64 } });
    // Asked in the commit itself, right after the index's own watcher: before any queued work of the index runs.
    const seen: (string | undefined)[] = [];
    const unwatch = core.watchWrites(() => {
      seen.push(state.superseded);
    });
    await addMemories(core, semantic, [input(2)], undefined, 'off');
    unwatch();
    expect(seen).toEqual(['other-model-64']);
    // So the next write embeds nothing with the old model: its memory is written without a vector.
    expect(await semantic.embedForWrite(['a third memory'])).toBeUndefined();
    await semantic.close();
    core.closeDb();
  });

  it('the memories an instance keeps of its own writes hold no text once deleted, and nothing of other tables', async () => {
    const { core, semantic } = await openCore(`own-${Math.random().toString(36).slice(2)}`);
    const [added] = await addMemories(core, semantic, [input(1)]);
    const seqOf = async (): Promise<number> => (await core.db.changes.orderBy(':id').last())!.seq!;
    expect(core.ownMemory(added!.item.id, await seqOf())?.row.text).toBe(input(1).text);
    await deleteMemories(core, semantic, [added!.item.id]);
    const own = core.ownMemory(added!.item.id, await seqOf())!;
    expect(own.row.deletedAt).toBeDefined();
    expect(JSON.stringify(own)).not.toContain('memory number 1');
    await semantic.close();
    core.closeDb();
  });

  it('own writes in a row are applied without reading the store; one after another instance wrote catches up first', async () => {
    // Read-only transactions over the change log or meta only: the reads of a catch-up. Dexie binds
    // IDBDatabase.transaction when it opens, so the counter goes in first.
    let catchUpReads = 0;
    let counting = false;
    const real = Object.getOwnPropertyDescriptor(IDBDatabase.prototype, 'transaction')!.value as (
      this: IDBDatabase,
      ...args: Parameters<IDBDatabase['transaction']>
    ) => IDBTransaction;
    IDBDatabase.prototype.transaction = function (
      this: IDBDatabase,
      ...args: Parameters<IDBDatabase['transaction']>
    ): IDBTransaction {
      const [stores, mode] = args;
      const names = typeof stores === 'string' ? [stores] : [...stores];
      if (counting && (mode ?? 'readonly') === 'readonly' && names.every((n) => n === 'changes' || n === 'meta'))
        catchUpReads += 1;
      return real.apply(this, args);
    };
    const name = `own-reads-${Math.random().toString(36).slice(2)}`;
    const a = await openCore(name);
    const b = await openCore(name);
    try {
      const stateA = (await a.semantic.ready()).state;
      await (await b.semantic.ready()).state.idle();
      await addMemories(a.core, a.semantic, [input(0)]);
      await settled(stateA);
      counting = true;
      for (let i = 1; i <= 5; i++) {
        await addMemories(a.core, a.semantic, [input(i)]);
        await settled(stateA);
      }
      expect(catchUpReads).toBe(0);
      expect(stateA.index.size).toBe(6);
      // Another instance writes: this instance's next write does not directly follow its position, so it catches up.
      await addMemories(
        b.core,
        b.semantic,
        range(10, 13).map((i) => input(i, 'bo')),
      );
      await addMemories(a.core, a.semantic, [input(6)]);
      await settled(stateA);
      expect(catchUpReads).toBeGreaterThan(0);
      expect(stateA.index.size).toBe(10);
      expect(stateA.scopes.size).toBe(10);
    } finally {
      IDBDatabase.prototype.transaction = real;
      for (const x of [a, b]) {
        await x.semantic.close();
        x.core.closeDb();
      }
    }
  });

  it('a write of another instance is caught up from the log, not applied as its own', async () => {
    const name = `buffer-two-${Math.random().toString(36).slice(2)}`;
    const a = await openCore(name);
    const b = await openCore(name);
    const stateA = (await a.semantic.ready()).state;
    await (await b.semantic.ready()).state.idle();
    await addMemories(
      b.core,
      b.semantic,
      range(0, 5).map((i) => input(i, 'bo')),
    );
    await stateA.idle();
    expect(stateA.index.size).toBe(0);
    await stateA.catchUp();
    expect(stateA.index.size).toBe(5);
    expect(stateA.scopes.size).toBe(5);
    for (const x of [a, b]) {
      await x.semantic.close();
      x.core.closeDb();
    }
  });
  it('the buffer is not merged while a write of this instance is under way, and is once it commits', async () => {
    const name = `buffer-writing-${Math.random().toString(36).slice(2)}`;
    const { core, semantic } = await openCore(name);
    const { state } = await semantic.ready();
    // Held as writing until the gated write below takes over.
    const release = await fillBufferHeld(core, semantic, state);
    expect(state.index.pending).toBe(1100);
    const gate = writeGate();
    const writing = core.write(async () => {
      await gate.hold();
      return { changes: [], result: null };
    });
    release();
    expect(core.writing).toBe(true);
    // Well past the pause that starts a merge (50 ms): nothing moved while the write is open.
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(state.index.pending).toBe(1100);
    gate.open();
    await writing;
    expect(core.writing).toBe(false);
    await waitUntil(() => state.index.pending === 0);
    expect(state.index.pending).toBe(0);
    expect(state.index.main.size).toBe(1100);
    await semantic.close();
    core.closeDb();
  });
  it('a bulk write under way (BULK_WRITE changes or more) does not hold the merge back; a small one beside it does', async () => {
    const name = `buffer-bulk-${Math.random().toString(36).slice(2)}`;
    // A write is held at IndexedDB, after its plan has been counted small or bulk, while its gate is shut:
    // message rows whose first id is in `gates` wait there (held-writes.ts).
    const gates = new Map<string, WriteGate>();
    (await openStore(name)).db.close();
    const db = new EngramDb(name);
    db.use({
      stack: 'dbcore',
      name: 'hold-writes',
      create: (down) => ({
        ...down,
        table: (tableName) => {
          const table = down.table(tableName);
          return {
            ...table,
            mutate: async (req) => {
              const first =
                req.type === 'add' || req.type === 'put' ? (req.values[0] as { id?: unknown }).id : undefined;
              const gate = tableName === 'messages' && typeof first === 'string' ? gates.get(first) : undefined;
              if (gate !== undefined) await gate.hold();
              return table.mutate(req);
            },
          };
        },
      }),
    });
    await db.open();
    const deviceId = (await db.meta.get('deviceId'))!.value as string;
    const core = new EngineStore(db, { maxContentBytes: 1_000_000, now: Date.now, deviceId });
    const semantic = new SemanticIndex(core, embedder, undefined);
    const { state } = await semantic.ready();
    // Held as writing until the two gated writes below are under way.
    const release = await fillBufferHeld(core, semantic, state);
    expect(state.index.pending).toBe(1100);
    const messages = (from: number, count: number): RowChange[] =>
      range(from, from + count).map((i) => {
        const after: MessageRow = {
          id: `m${i}`,
          threadId: 't',
          role: 'user',
          content: `message ${i}`,
          createdAt: i,
          position: i,
          hash: `h${i}`,
          inContext: 1,
        };
        return { table: 'messages', op: 'add', id: after.id, after };
      });
    const held = (changes: RowChange[]): { open: () => void; done: Promise<null> } => {
      const gate = writeGate();
      gates.set(changes[0]!.id, gate);
      const done = core.write(async () => ({ changes, result: null }));
      return { open: gate.open, done };
    };
    // A small write and a bulk one under way: the merge waits.
    const small = held(messages(0, 10));
    const bulk = held(messages(10, BULK_WRITE));
    release();
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(core.onlyBulkWrites).toBe(false);
    expect(state.index.pending).toBe(1100);
    // Only the bulk write left: the buffer is merged while it waits.
    small.open();
    await small.done;
    expect(core.writing).toBe(true);
    expect(core.onlyBulkWrites).toBe(true);
    await waitUntil(() => state.index.pending === 0);
    expect(core.writing).toBe(true);
    expect(state.index.main.size).toBe(1100);
    bulk.open();
    await bulk.done;
    expect(core.onlyBulkWrites).toBe(false);
    await semantic.close();
    core.closeDb();
  });
  it('past 4096 waiting, the buffer is merged while writes go on, down to the limit; the rest once writing pauses', async () => {
    const name = `buffer-over-${Math.random().toString(36).slice(2)}`;
    const { core, semantic } = await openCore(name);
    const { state } = await semantic.ready();
    // Writes back to back: the instance reports one under way all along (a held IndexedDB write would hold the snapshot too).
    Object.defineProperty(core, 'writing', { configurable: true, get: () => true });
    await addMemories(
      core,
      semantic,
      range(0, 4500).map((i) => input(i)),
      undefined,
      'off',
    );
    await waitUntil(() => state.index.pending <= 4096);
    // The slice that crossed the limit ran its time out (12 ms); after it, nothing more moves while writing goes on.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const left = state.index.pending;
    expect(left).toBeLessThanOrEqual(4096);
    expect(left).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(state.index.pending).toBe(left);
    expect(state.index.size).toBe(4500);
    Reflect.deleteProperty(core, 'writing');
    expect(core.writing).toBe(false);
    await waitUntil(() => state.index.pending === 0);
    expect(state.index.pending).toBe(0);
    expect(state.index.main.size).toBe(4500);
    await semantic.close();
    core.closeDb();
  });
});

describe('vector state: snapshots while this instance writes', () => {
  it('a snapshot of fewer than 5000 memory changes waits for a pause in the writing; past 5000 it is taken while writing goes on', async () => {
    const name = `buffer-snapshot-${Math.random().toString(36).slice(2)}`;
    const { core, semantic } = await openCore(name);
    const { state } = await semantic.ready();
    await addMemories(
      core,
      semantic,
      range(0, 100).map((i) => input(i)),
      undefined,
      'off',
    );
    await settled(state);
    await state.snapshot();
    expect(state.unsnapshotted).toBe(0);
    // Small writes back to back (each under BULK_WRITE): the instance reports one under way all along.
    Object.defineProperty(core, 'writing', { configurable: true, get: () => true });
    await addInSmallWrites(core, semantic, 100, 1300, 240);
    await settled(state);
    // 1200 changes are due a snapshot (1000), but not while writing goes on, however long (well past the 50 ms pause).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(state.unsnapshotted).toBe(1200);
    // In writes of 130: the last (5070 to 5200) is the one that takes it past 5000.
    await addInSmallWrites(core, semantic, 1300, 5200, 130);
    // 5100 unsnapshotted: the replay a crash would cost is no longer small, so it is taken, writing or not.
    await waitUntil(() => state.unsnapshotted === 0);
    expect(state.unsnapshotted).toBe(0);
    await addInSmallWrites(core, semantic, 5200, 6400, 240);
    await settled(state);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(state.unsnapshotted).toBe(1200);
    // The writer pauses: the snapshot follows.
    Reflect.deleteProperty(core, 'writing');
    await waitUntil(() => state.unsnapshotted === 0);
    expect(state.unsnapshotted).toBe(0);
    await semantic.close();
    core.closeDb();
  });

  it("beside bulk writes a snapshot waits for the pause until the store's size (at least 10k) in changes is outside it", async () => {
    const name = `buffer-bulk-snapshot-${Math.random().toString(36).slice(2)}`;
    const { core, semantic } = await openCore(name);
    const { state } = await semantic.ready();
    await addMemories(
      core,
      semantic,
      range(0, 100).map((i) => input(i)),
      undefined,
      'off',
    );
    await settled(state);
    await state.snapshot();
    expect(state.unsnapshotted).toBe(0);
    Object.defineProperty(core, 'writing', { configurable: true, get: () => true });
    // Bulk writes (BULK_WRITE changes or more each), as an import or a large add() makes them.
    for (let from = 100; from < 5200; from += 1300)
      await addMemories(
        core,
        semantic,
        range(from, Math.min(from + 1300, 5200)).map((i) => input(i)),
        undefined,
        'off',
      );
    await settled(state);
    // 5100 unsnapshotted would be taken beside small writes; beside bulk writes the fill goes on unbroken.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(state.unsnapshotted).toBe(5100);
    // The writer pauses: the snapshot follows.
    Reflect.deleteProperty(core, 'writing');
    await waitUntil(() => state.unsnapshotted === 0);
    expect(state.unsnapshotted).toBe(0);
    await semantic.close();
    core.closeDb();
  });
});
