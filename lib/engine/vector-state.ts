/**
 * The vector index as a cache of the store. It reflects the change log up to
 * `seq`: on load it is restored from the snapshot in `meta` and brought up to
 * date by replaying the changes after the snapshot's seq; a missing or corrupt
 * snapshot means a rebuild from the stored vectors, never lost memories. Before
 * every search it catches up with the log, so writes from another tab or
 * instance on the same store are seen.
 */
import { isEngramError, throwIfAborted } from '../errors.js';
import { createIndex, promote, restoreIndex } from '../vector/choose-index.js';
import type { VectorIndex } from '../vector/vector-index.js';
import type { MemoryRow } from '../store/rows.js';
import { storeError } from '../store/write.js';
import type { EngineStore } from './engine-store.js';
import { ScopeTable, type ScopeTuple } from './scope-table.js';

/** Progress of long index work. */
export interface IndexProgress {
  phase: 'restore' | 'replay' | 'rebuild' | 'reembed';
  done: number;
  total: number;
}

/** Options of long work: cancellation and progress. */
export interface LongWorkOptions {
  signal?: AbortSignal;
  onProgress?: (progress: IndexProgress) => void;
}

/** What `meta` keeps of the index. */
interface SnapshotRecord {
  bytes: Uint8Array;
  /** The scope fields of the indexed memories (absent in older snapshots). */
  scopes?: ScopeTuple[];
  seq: number;
  embedderId: string;
  dimensions: number;
  at: number;
}

const SNAPSHOT_KEY = 'indexSnapshot';
const PAGE = 2000;

/** How the index came to be on load; reported for tests and diagnostics. */
export type IndexOrigin = 'snapshot' | 'rebuild' | 'empty';

/** The live vector index and the change-log position it reflects. */
export class VectorState {
  index: VectorIndex;
  /** Scope fields of the indexed memories, for filtering inside the search. */
  readonly scopes: ScopeTable;
  seq: number;
  readonly origin: IndexOrigin;
  readonly #core: EngineStore;
  readonly #embedderId: string;
  #lastSnapshotSeq: number;
  #chain: Promise<unknown> = Promise.resolve();

  private constructor(core: EngineStore, embedderId: string, index: VectorIndex, scopes: ScopeTable, seq: number, origin: IndexOrigin) {
    this.#core = core;
    this.#embedderId = embedderId;
    this.index = index;
    this.scopes = scopes;
    this.seq = seq;
    this.origin = origin;
    this.#lastSnapshotSeq = origin === 'snapshot' ? seq : -1;
  }

  /** Restores from the snapshot (then replays the log) or rebuilds from the stored vectors. */
  static async load(core: EngineStore, embedderId: string, dimensions: number, options: LongWorkOptions = {}): Promise<VectorState> {
    const record = (await core.db.meta.get(SNAPSHOT_KEY))?.value as SnapshotRecord | undefined;
    if (record !== undefined && record.embedderId === embedderId && record.dimensions === dimensions) {
      const restored = await VectorState.#restore(core, embedderId, dimensions, record, options);
      if (restored !== undefined) return restored;
    }
    return VectorState.rebuild(core, embedderId, dimensions, options);
  }

  /** The state from a snapshot, or undefined when the snapshot is unusable (corrupt, unreadable, other dimension). */
  static async #restore(core: EngineStore, embedderId: string, dimensions: number, record: SnapshotRecord, options: LongWorkOptions): Promise<VectorState | undefined> {
    try {
      options.onProgress?.({ phase: 'restore', done: 0, total: 1 });
      const index = await restoreIndex(record.bytes);
      if (index.dimensions !== dimensions) {
        index.dispose();
        return undefined;
      }
      const scopes = Array.isArray(record.scopes) ? ScopeTable.fromTuples(record.scopes) : await scopesFromStore(core);
      options.onProgress?.({ phase: 'restore', done: 1, total: 1 });
      const state = new VectorState(core, embedderId, index, scopes, record.seq, 'snapshot');
      await state.catchUp(options);
      return state;
    } catch (e) {
      if (isEngramError(e) && e.code === 'ABORTED' && options.signal?.aborted === true) throw e;
      // A corrupt or unreadable snapshot: the caller rebuilds from the source of truth.
      return undefined;
    }
  }

  /** Builds a fresh index from every live memory's stored vector. */
  static async rebuild(core: EngineStore, embedderId: string, dimensions: number, options: LongWorkOptions = {}): Promise<VectorState> {
    const { db } = core;
    // The seq first: changes made while we read are replayed afterwards (replay is idempotent).
    const seq = (await db.changes.orderBy(':id').last())?.seq ?? 0;
    const total = await db.vectors.count();
    const index = await createIndex({ dimensions, expectedSize: total });
    const state = new VectorState(core, embedderId, index, new ScopeTable(), seq, total === 0 ? 'empty' : 'rebuild');
    let done = 0;
    let after: string | undefined;
    options.onProgress?.({ phase: 'rebuild', done, total });
    for (;;) {
      throwIfAborted(options.signal);
      const page = await (after === undefined ? db.vectors.orderBy(':id') : db.vectors.where(':id').above(after)).limit(PAGE).toArray();
      if (page.length === 0) break;
      after = page[page.length - 1]!.id;
      const rows = await db.memories.bulkGet(page.map((v) => v.id));
      const items = page.filter((v, i) => v.embedderId === embedderId && isLive(rows[i], core.now()));
      state.index.addMany(items.map((v) => ({ id: v.id, vector: v.vector })));
      rows.forEach((r, i) => {
        if (r !== undefined && page[i]!.embedderId === embedderId && isLive(r, core.now())) state.scopes.set(r);
      });
      done += page.length;
      options.onProgress?.({ phase: 'rebuild', done, total });
    }
    state.index = await promote(state.index);
    await state.catchUp(options);
    return state;
  }

  /** Applies every memory change logged after `seq`. Serialised; safe to call often. */
  catchUp(options: LongWorkOptions = {}): Promise<void> {
    const run = this.#chain.then(() => this.#catchUp(options));
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #catchUp(options: LongWorkOptions): Promise<void> {
    const { db } = this.#core;
    for (;;) {
      const changes = await db.changes.where(':id').above(this.seq).limit(PAGE).toArray();
      if (changes.length === 0) return;
      const ids = [...new Set(changes.filter((c) => c.table === 'memories').map((c) => c.recordId))];
      if (ids.length > 0) {
        const [rows, vectors] = await Promise.all([db.memories.bulkGet(ids), db.vectors.bulkGet(ids)]);
        const now = this.#core.now();
        const adds: { id: string; vector: Float32Array }[] = [];
        ids.forEach((id, i) => {
          const v = vectors[i];
          const row = rows[i];
          if (v !== undefined && v.embedderId === this.#embedderId && isLive(row, now)) {
            adds.push({ id, vector: v.vector });
            this.scopes.set(row);
          } else {
            this.index.remove(id);
            this.scopes.delete(id);
          }
        });
        this.index.addMany(adds);
      }
      this.seq = changes[changes.length - 1]!.seq!;
      options.onProgress?.({ phase: 'replay', done: changes.length, total: changes.length });
      if (changes.length < PAGE) break;
    }
    this.index = await promote(this.index);
  }

  /** Writes a snapshot of the index and the seq it reflects into `meta`. */
  async snapshot(): Promise<void> {
    const run = this.#chain.then(async () => {
      if (this.seq === this.#lastSnapshotSeq) return;
      const record: SnapshotRecord = { bytes: this.index.snapshot(), scopes: this.scopes.toTuples(), seq: this.seq, embedderId: this.#embedderId, dimensions: this.index.dimensions, at: this.#core.now() };
      try {
        await this.#core.db.meta.put({ key: SNAPSHOT_KEY, value: record });
      } catch (e) {
        throw storeError(e, 'saving the index snapshot');
      }
      this.#lastSnapshotSeq = record.seq;
    });
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** Changes applied since the last snapshot; Infinity when there is none yet. */
  get unsnapshotted(): number {
    return this.#lastSnapshotSeq < 0 ? Infinity : this.seq - this.#lastSnapshotSeq;
  }

  /** Empties the index (after the store was reset); the log position is kept. */
  async reset(): Promise<void> {
    const run = this.#chain.then(async () => {
      const dimensions = this.index.dimensions;
      this.index.dispose();
      this.index = await createIndex({ dimensions, expectedSize: 0 });
      this.scopes.clear();
      this.#lastSnapshotSeq = -1;
    });
    this.#chain = run.catch(() => undefined);
    return run;
  }

  dispose(): void {
    this.index.dispose();
  }
}

/** The scope table of every live memory, read from the store (for snapshots that lack one). */
async function scopesFromStore(core: EngineStore): Promise<ScopeTable> {
  const table = new ScopeTable();
  const now = core.now();
  await core.db.memories.each((row) => {
    if (isLive(row, now)) table.set(row);
  });
  return table;
}

/** A memory that belongs in the index: present, not deleted, not expired. */
export function isLive(row: MemoryRow | undefined, now: number): row is MemoryRow {
  return row !== undefined && row.deletedAt === undefined && (row.expiresAt === undefined || row.expiresAt > now);
}
