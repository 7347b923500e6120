/**
 * The vector index as a cache of the store. It reflects the change log up to
 * `seq`: on load it is restored from the snapshot in `meta` and brought up to
 * date by replaying the changes after the snapshot's seq; a missing or corrupt
 * snapshot means a rebuild from the stored vectors, never lost memories. Before
 * every search it catches up with the log, so writes from another tab or
 * instance on the same store are seen; when the store's generation moved (a
 * reset or a replacing import elsewhere), it reloads from the store instead.
 * A restored snapshot is checked against the store (log position, size, ids)
 * and rebuilt when it does not agree. A stored vector that cannot be indexed
 * (wrong length, NaN) is skipped and reported, never fatal.
 */
import { EmbedderChangedError, isEngramError, throwIfAborted } from '../../errors.js';
import { BufferedIndex } from '../../vector/buffered-index.js';
import { createIndex, EXACT_CROSSOVER, preloadHnsw, promote } from '../../vector/choose-index.js';
import type { VectorIndex } from '../../vector/vector-index.js';
import { isLive, type MemoryRow, type VectorRow } from '../../store/rows.js';
import { readLastSeq, readLogHead, type LogHead } from '../../store/change-log.js';
import { readGeneration } from '../../store/generation.js';
import { vectorOfModel } from '../../store/current-vector.js';
import type { LoggedWrite, RowChange } from '../../store/write.js';
import type { EngramDb } from '../../store/schema.js';
import { vectorDefect } from '../../vector/vector-checks.js';
import { SerialQueue } from '../../util/serial-queue.js';
import type { DamagedRow, EngineStore } from '../engine-store.js';
import { IDLE_MS, SnapshotPacer } from '../snapshot-pacer.js';
import { ScopeTable, statementOf } from './scope-table.js';
import { snapshotChecksumHolds } from '../../vector/snapshot-format.js';
import {
  agreesInCount,
  CORRUPT_SNAPSHOT,
  holdsAtOpen,
  readSnapshot,
  reportBadSnapshot,
  restoreSnapshot,
  verifySnapshot,
  writeSnapshot,
  type Restored,
  type SnapshotRecord,
} from './vector-snapshot.js';

/** Progress of long index work. */
export interface IndexProgress {
  /** `damaged`: a stored row was skipped (see `damaged`); `done` counts the damaged rows so far. */
  phase: 'restore' | 'replay' | 'rebuild' | 'reembed' | 'damaged';
  done: number;
  total: number;
  /** The row skipped, with phase `damaged`. */
  damaged?: DamagedRow;
}

/** Options of long work: cancellation and progress. */
export interface LongWorkOptions {
  signal?: AbortSignal;
  onProgress?: (progress: IndexProgress) => void;
}

const PAGE = 2000;
/**
 * New vectors the exact buffer holds before merges stop waiting for a pause in
 * the writing. A search scans the buffer, and an add() does not wait for HNSW
 * inserts (their costs: bench/results/REPORT.md, "Measurements cited by the code"): up to this many, they run when the
 * writer pauses; past it, in slices between the writes' steps; past twice it
 * (a writer faster than the merges), the excess at once.
 */
const BUFFER_LIMIT = 4096;
/** A merge task gives the thread back after this long. */
const MERGE_SLICE_MS = 12;
/** A restored index's ids are compared with the store's this long after the open, once searching pauses (see #verifyLater). */
const VERIFY_DELAY_MS = 250;
/**
 * Searching has paused when none is under way and none ended for this long. The check after open
 * reads every vector's key and every scope field's index: beside searches back to back it was the
 * whole p95 tail of vector search (bench/results/REPORT.md, "Measurements cited by the code").
 */
const SEARCH_PAUSE_MS = 30;
/** The check after open waits for a pause in searching at most this long. */
const VERIFY_LATEST_MS = 10_000;

/** A change of a memory row, as a write logged it. */
type MemoryChange = Extract<RowChange, { table: 'memories' }>;

/** How the index came to be on load; reported for tests and diagnostics. */
export type IndexOrigin = 'snapshot' | 'rebuild' | 'empty';

/** The live vector index and the change-log position it reflects. */
export class VectorState {
  readonly index: BufferedIndex;
  /** Scope fields of the indexed memories, for filtering inside the search. */
  readonly scopes: ScopeTable;
  seq: number;
  readonly origin: IndexOrigin;
  readonly #core: EngineStore;
  readonly #embedderId: string;
  #lastSnapshotSeq: number;
  /** A write of this instance was not applied from what it logged: the next afterOwnWrite() catches up. */
  #behind = false;
  /** Memory changes applied since the last snapshot (the log also holds messages, blocks and traces). */
  #changed = 0;
  /** Vectors moved from the buffer into the main index since the last snapshot, at no new log position. */
  #mergedSinceSnapshot = false;
  /** The store generation this index reflects. */
  #generation: number;
  #disposed = false;
  /** Replaced by a re-embed's index: still answers searches, follows the store no more. */
  #retired = false;
  /** Told of each live memory met without a usable-model vector (see {@link onStale}). */
  #staleSink: ((id: string) => void) | undefined;
  /** Such memories met before anyone listened (while loading). */
  #staleEarly: string[] = [];
  /**
   * The model another instance switched the store to (a re-embed elsewhere), learned from the log
   * head or from a write's commit: this index no longer answers vector queries (see assertCurrent),
   * writes no snapshot (it would replace the new model's) and asks for no repairs.
   */
  #superseded: string | undefined;
  /** The model this instance's own re-embed is switching the store to: its record is not another's switch. */
  #expected: string | undefined;
  /** Catch-ups, this instance's writes, merges, snapshots and the check after open run one at a time. */
  readonly #queue = new SerialQueue();
  /** Cancels the merge's next slice (a timer, or a task posted by inNextTask). */
  #cancelMerge: (() => void) | undefined;
  /** When the next snapshot is written (see maybeSnapshot). */
  readonly #pacer: SnapshotPacer;
  #verifyTimer: ReturnType<typeof setTimeout> | undefined;
  /** Searches of this index under way, and when (performance.now()) the last one ended (see beginSearch). */
  #searches = 0;
  #lastSearch = -Infinity;

  readonly #unregister: () => void;
  readonly #unwatch: () => void;

  private constructor(
    core: EngineStore,
    embedderId: string,
    index: BufferedIndex,
    scopes: ScopeTable,
    seq: number,
    origin: IndexOrigin,
    generation: number,
  ) {
    this.#core = core;
    this.#pacer = new SnapshotPacer(core, this);
    this.#embedderId = embedderId;
    this.index = index;
    this.scopes = scopes;
    this.seq = seq;
    this.origin = origin;
    this.#generation = generation;
    this.#lastSnapshotSeq = origin === 'snapshot' ? seq : -1;
    // Compaction of the change log keeps what this index has not applied yet.
    this.#unregister = core.addLogReader(() => this.seq);
    this.#unwatch = core.watchWrites((write) => {
      // Known at the commit, not when the queue reaches the write: the next write's embedding
      // (SemanticIndex.embedForWrite) asks at once, and may not wait behind a merge or a snapshot.
      this.#noteRecorded(write.embedderId);
      this.#applyOwn(write);
    });
  }

  /** Restores from the snapshot (then replays the log) or rebuilds from the stored vectors. */
  static async load(
    core: EngineStore,
    embedderId: string,
    dimensions: number,
    options: LongWorkOptions = {},
  ): Promise<VectorState> {
    const storedCount = countStoredVectors(core);
    const generation = await readGeneration(core.db);
    const { record, early } = await readSnapshot(core, embedderId);
    if (record !== undefined && snapshotFits(record, embedderId, dimensions, generation)) {
      const restored = await VectorState.#restore(
        core,
        embedderId,
        dimensions,
        record,
        generation,
        storedCount,
        early,
        options,
      );
      if (restored !== undefined) return restored;
    }
    return VectorState.rebuild(core, embedderId, dimensions, options);
  }

  /** The state from a snapshot, or undefined when the snapshot is unusable (corrupt, unreadable, other dimension). */
  static async #restore(
    core: EngineStore,
    embedderId: string,
    dimensions: number,
    record: SnapshotRecord,
    generation: number,
    storedCount: Promise<number>,
    early: ScopeTable | undefined,
    options: LongWorkOptions,
  ): Promise<VectorState | undefined> {
    try {
      // A position beyond the log would hide every later write from the replay.
      if (record.seq > (await readLastSeq(core.db))) return undefined;
      options.onProgress?.({ phase: 'restore', done: 0, total: 1 });
      const restored = await restoreSnapshot(core, record, dimensions, early);
      if (restored === undefined) return undefined;
      options.onProgress?.({ phase: 'restore', done: 1, total: 1 });
      const state = new VectorState(
        core,
        embedderId,
        restored.index,
        restored.scopes,
        record.seq,
        'snapshot',
        generation,
      );
      return (await state.#checkRestored(record.bytes, storedCount, options)) ? state : undefined;
    } catch (e) {
      if (isEngramError(e) && e.code === 'ABORTED' && options.signal?.aborted === true) throw e;
      // A corrupt or unreadable snapshot: the caller rebuilds from the source of truth.
      return undefined;
    }
  }

  /**
   * Brings a state restored from snapshot `bytes` up to date and checks it against the store: true when
   * it holds (its ids are compared later, see #verifyLater), false when it does not (it is disposed).
   */
  async #checkRestored(bytes: Uint8Array, storedCount: Promise<number>, options: LongWorkOptions): Promise<boolean> {
    try {
      await this.catchUp(options);
      // Vectors the snapshot kept unmerged (a close without flush()) move into HNSW once writing pauses, as
      // they would have in the session that wrote them; a catch-up with nothing to replay does not schedule
      // that, and until then every search scans them (bench/peers engram-resumed: 1000 of them, 0.4-0.7 ms).
      await this.#queue.run(() => this.#settle());
      if (agreesInCount(this, await storedCount)) {
        // The ids themselves are compared once the first searches are answered (see verifySnapshot).
        this.#verifyLater(bytes);
        return true;
      }
      if (await holdsAtOpen(this.#restored(), bytes)) return true;
    } catch (e) {
      // Not returned: nobody else would let it go, and its log position would hold the log's compaction back.
      this.dispose();
      throw e;
    }
    this.dispose();
    return false;
  }

  /** Builds a fresh index from every live memory's stored vector. */
  static async rebuild(
    core: EngineStore,
    embedderId: string,
    dimensions: number,
    options: LongWorkOptions = {},
  ): Promise<VectorState> {
    // The generation first: a reset while we read is seen by the catch-up below, which reloads.
    const generation = await readGeneration(core.db);
    const scopes = new ScopeTable();
    const { index, seq, total, stale } = await fillFromStore(core, embedderId, dimensions, scopes, options);
    const state = new VectorState(
      core,
      embedderId,
      new BufferedIndex(index),
      scopes,
      seq,
      total === 0 ? 'empty' : 'rebuild',
      generation,
    );
    // Taken whole, not pushed as arguments: a store whose vectors are all of another model holds more than a call takes.
    state.#staleEarly = stale;
    try {
      await state.catchUp(options);
    } catch (e) {
      state.dispose(); // not returned (see #checkRestored)
      throw e;
    }
    return state;
  }

  /**
   * Told of every live memory this index meets with another model's vector, or with
   * none (a write of a tab still on the old model after a re-embed's switch): the
   * caller gives it a vector of this model (SemanticIndex's repair), then
   * {@link recheck}s it. Memories met while loading are told when it is set.
   */
  set onStale(sink: (id: string) => void) {
    this.#staleSink = sink;
    const early = this.#staleEarly;
    this.#staleEarly = [];
    for (const id of early) sink(id);
  }

  /** Reads memories `ids` and their vectors and places each in the index as it stands in the store (#place). */
  async #indexAsStored(ids: string[]): Promise<void> {
    const { db } = this.#core;
    const [rows, vectors] = await Promise.all([db.memories.bulkGet(ids), db.vectors.bulkGet(ids)]);
    const now = this.#core.now();
    const adds: { id: string; vector: Float32Array }[] = [];
    ids.forEach((id, i) => {
      const add = this.#place(id, rows[i], vectors[i], now);
      if (add !== undefined) adds.push(add);
    });
    this.index.addMany(adds);
    this.#changed += ids.length;
  }

  /** Reads memories `ids` and their vectors again and indexes them as they stand (after a repair). */
  recheck(ids: readonly string[]): Promise<void> {
    return this.#queue.run(async () => {
      if (this.#disposed || this.#retired || ids.length === 0) return;
      await this.#indexAsStored([...ids]);
      await this.#settle();
    });
  }

  /** {@link recheck}s every memory the change log names after `seq`. */
  async recheckSince(seq: number): Promise<void> {
    const changes = await this.#core.db.changes.where(':id').above(seq).toArray();
    await this.recheck([...new Set(changes.filter((c) => c.table === 'memories').map((c) => c.recordId))]);
  }

  /**
   * Stops following the store (a re-embed replaced this index): no more catch-ups,
   * snapshots or timers, while searches that already hold it still get answers
   * until dispose().
   */
  retire(): void {
    this.#retired = true;
    this.#stopFollowing();
  }

  /** Cancels the merge and the timers, and leaves the store's log readers and write watchers. */
  #stopFollowing(): void {
    this.#cancelMerge?.();
    this.#pacer.stop();
    if (this.#verifyTimer !== undefined) clearTimeout(this.#verifyTimer);
    this.#unregister();
    this.#unwatch();
  }

  /** This index as the snapshot checks see it. */
  #restored(): Restored {
    return {
      core: this.#core,
      embedderId: this.#embedderId,
      index: this.index,
      scopes: this.scopes,
      usable: (id, vector) => this.#usable(id, vector),
    };
  }

  /**
   * Checks a restored index soon after the open (see verifySnapshot): the
   * snapshot's checksum VERIFY_DELAY_MS after the open (the bytes are let go
   * then), its ids and scope values against the store after a pause in
   * searching, at the latest VERIFY_LATEST_MS after the open; each queued behind
   * the work under way. An index that fails is reported and rebuilt. Until then
   * searches answer from the restored index (the open checked the counts).
   */
  #verifyLater(bytes: Uint8Array): void {
    // Held by the closures below only until the checksum has run (not `bytes`, which they would keep).
    let snapshot: Uint8Array | undefined = bytes;
    const latest = performance.now() + VERIFY_LATEST_MS;
    const againstStore = (): void => {
      this.#verifyTimer = undefined;
      const now = performance.now();
      const quietIn = this.#searches > 0 ? SEARCH_PAUSE_MS : this.#lastSearch + SEARCH_PAUSE_MS - now;
      if (quietIn > 0 && now < latest) {
        this.#verifyTimer = setTimeout(againstStore, Math.min(quietIn, latest - now));
        return;
      }
      this.#verifyAgainstStore();
    };
    this.#verifyTimer = setTimeout(() => {
      this.#verifyTimer = undefined;
      this.#queue
        .run(async () => {
          const taken = snapshot;
          snapshot = undefined;
          if (taken === undefined || this.#isClosed()) return;
          if (!snapshotChecksumHolds(taken)) await this.#rebuildFor(CORRUPT_SNAPSHOT);
          else againstStore();
        })
        .catch(() => undefined);
    }, VERIFY_DELAY_MS);
  }

  /** Queues the check of the restored ids and scope values against the store (see verifySnapshot). */
  #verifyAgainstStore(): void {
    this.#queue
      .run(async () => {
        if (!this.#isClosed()) await this.#rebuildFor(await verifySnapshot(this.#restored(), () => this.#isClosed()));
      })
      .catch(() => undefined);
  }

  /** A check after open failed for `reason` (undefined: it held): reports the snapshot and reloads from the store. */
  async #rebuildFor(reason: string | undefined): Promise<void> {
    if (reason === undefined || this.#isClosed()) return;
    reportBadSnapshot(this.#core, reason);
    await this.#reload(await readGeneration(this.#core.db), {});
  }

  /**
   * A search of this index starts; it calls the function returned when it ends. Background checks
   * wait for a pause in searching (none under way, none ended for SEARCH_PAUSE_MS; see #verifyLater).
   */
  beginSearch(): () => void {
    this.#searches++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#searches--;
      this.#lastSearch = performance.now();
    };
  }

  /**
   * Where memory `id` stands with `row` and its stored `vector`: live with a
   * usable vector of this embedder, it is recorded in the scope table and the
   * entry to index is returned; otherwise it leaves the index and the table.
   */
  #place(
    id: string,
    row: MemoryRow | undefined,
    vector: VectorRow | undefined,
    now: number,
  ): { id: string; vector: Float32Array } | undefined {
    // Its own vector of this model, or its staged one after a re-embed's switch (current-vector.ts).
    const own = vectorOfModel(vector, this.#embedderId);
    if (own !== undefined && isLive(row, now) && this.#usable(id, own)) {
      this.scopes.set(row, statementOf(this.#core.analyzer, row));
      return { id, vector: own };
    }
    if (isLive(row, now) && own === undefined) this.#stale(id);
    this.index.remove(id);
    this.scopes.delete(id);
    return undefined;
  }

  #stale(id: string): void {
    if (this.#superseded !== undefined) return; // only an instance on the store's model repairs
    if (this.#staleSink === undefined) this.#staleEarly.push(id);
    else this.#staleSink(id);
  }

  /** True when a live memory's vector can be indexed; otherwise reports the row as damaged. */
  #usable(id: string, vector: unknown): boolean {
    const defect = vectorDefect(vector, this.index.dimensions);
    if (defect === undefined) return true;
    this.#core.reportDamaged({ table: 'vectors', key: id, reason: defect });
    return false;
  }

  /** Merges the whole exact buffer into the main index now (queued behind the work under way). */
  mergeAll(): Promise<void> {
    return this.#queue.run(() => {
      if (this.#disposed) return;
      if (this.index.merge() > 0) this.#mergedSinceSnapshot = true;
    });
  }

  /** Settles once the work queued so far (catch-ups, this instance's writes, snapshots) is done. */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  /**
   * Applies every memory change logged after `seq`. Serialised; safe to call often.
   * `head`, when given, is where the log stood once the caller began (read once for
   * both indexes by a search); otherwise it is read here. When nothing was logged
   * after `seq`, that read is the whole catch-up.
   */
  catchUp(options: LongWorkOptions = {}, head?: Promise<LogHead>): Promise<void> {
    return this.#queue.run(() => this.#catchUp(options, head));
  }

  /**
   * After a write of this instance: catches up only when a write was left to
   * the catch-up (see #applyOwn: another instance wrote in between, the store
   * was replaced, or a change needs its stored vector); otherwise it waits for
   * the write to be applied from what it logged, without a read. Each catch-up
   * reads the store in three transactions, and the next add() would wait for
   * it (its cost: bench/results/REPORT.md, "Measurements cited by the code"). Writes of other instances
   * still reach the index before every search (searches catch up first), and
   * add()'s duplicate check reads the log past the index's position itself.
   * @example
   * await state.afterOwnWrite();
   */
  afterOwnWrite(): Promise<void> {
    return this.#queue.run(() => (this.#behind ? this.#catchUp({}) : undefined));
  }

  async #catchUp(options: LongWorkOptions, head?: Promise<LogHead>): Promise<void> {
    if (this.#disposed || this.#retired) return;
    this.#behind = false;
    const { db } = this.#core;
    const { generation, floor, last, embedderId } = await (head ?? readLogHead(db));
    this.#noteRecorded(embedderId);
    // Another instance replaced the store, or compacted log entries this index has not applied yet: reload from the store.
    if (generation !== this.#generation || this.seq < floor) await this.#reload(generation, options);
    else if (last <= this.seq) return; // nothing logged that this index lacks
    for (;;) {
      const changes = await db.changes.where(':id').above(this.seq).limit(PAGE).toArray();
      if (changes.length === 0) return;
      const ids = [...new Set(changes.filter((c) => c.table === 'memories').map((c) => c.recordId))];
      // Into the exact buffer: HNSW inserts wait for a pause in the writing (see #settle).
      if (ids.length > 0) await this.#indexAsStored(ids);
      this.seq = changes[changes.length - 1]!.seq!;
      options.onProgress?.({ phase: 'replay', done: changes.length, total: changes.length });
      if (changes.length < PAGE) break;
    }
    await this.#settle();
  }

  /**
   * A write of this instance, applied from what it logged without reading it
   * back, when it directly follows the log position of the index in the same
   * generation; otherwise (or when a change needs the store, e.g. an update
   * without its vector of a memory the index lacks) the next catch-up reads it.
   */
  #applyOwn(write: LoggedWrite): void {
    void this.#queue.run(async () => {
      if (this.#disposed || this.#retired) return;
      // The recorded embedder was noted at the commit (the watcher in the constructor).
      if (write.generation !== this.#generation || write.seqs[0] !== this.seq + 1) {
        this.#behind = true;
        return;
      }
      const now = this.#core.now();
      for (const change of write.changes) {
        if (change.table !== 'memories') continue;
        if (!this.#applyOwnChange(change, now)) {
          this.#behind = true;
          return;
        }
      }
      this.seq = write.seqs[write.seqs.length - 1]!;
      this.#pacer.ownApplied();
      await this.#settle();
    });
  }

  /**
   * One memory change of this instance's write, applied from what it logged; false when the
   * stored vector decides (the change is left to the catch-up).
   */
  #applyOwnChange(change: MemoryChange, now: number): boolean {
    const row = change.after;
    if (isLive(row, now) && change.vector === undefined) {
      // The stored vector decides: left to the catch-up (which re-applies the ones above).
      if (!this.index.has(change.id) || (change.before !== undefined && change.before.text !== row.text)) return false;
      this.scopes.set(row, statementOf(this.#core.analyzer, row));
      this.#changed += 1;
      return true;
    }
    // null: the write deleted the vector (an instance on a model the store left changed the text).
    const add = this.#place(change.id, row, change.vector ?? undefined, now);
    if (add !== undefined) this.index.addMany([add]);
    this.#changed += 1;
    return true;
  }

  /**
   * After a catch-up: below the crossover the buffer is merged at once (exact
   * inserts are copies); once the exact index reaches the crossover an empty
   * HNSW index goes behind the buffer, which takes the exact index's vectors
   * (see BufferedIndex.rebuildBehind). With HNSW, the buffer is merged down to
   * its limit now and the rest when the writer pauses.
   */
  async #settle(): Promise<void> {
    const index = this.index;
    if (index.main.kind === 'exact') {
      index.merge();
      if (index.main.size < EXACT_CROSSOVER) return;
      // Room for what it holds (createIndex rounds up to a power of two) and no more: it grows by doubling, and a
      // bulk write that crosses at 10k asked for twice that, 32,768 slots of WASM memory for 10,000 vectors, kept by
      // every snapshot and restore (bench/peers engram-bulk: 81 MiB held against 49).
      const next = await createIndex({ dimensions: index.dimensions, expectedSize: index.main.size });
      if (this.#disposed) {
        next.dispose();
        return;
      }
      index.rebuildBehind(next);
    }
    if (index.pending > 2 * BUFFER_LIMIT) index.merge(index.pending - 2 * BUFFER_LIMIT);
    if (index.pending > 0) this.#mergeSoon();
  }

  /**
   * (Re)starts the merge timer; when it fires, merges the buffer in slices, one
   * task each, yielding between. Up to BUFFER_LIMIT waiting, it fires once the
   * writer has paused (no write of this instance under way, none applied for
   * IDLE_MS); past it, at once, between the writes' steps.
   */
  #mergeSoon(): void {
    this.#cancelMerge?.();
    const later = (ms: number): void => {
      const timer = setTimeout(slice, ms);
      this.#cancelMerge = () => {
        clearTimeout(timer);
      };
    };
    const slice = (): void => {
      this.#cancelMerge = undefined;
      // add() calls back to back leave a few milliseconds between their writes: a slice then would hold up the next one.
      // A bulk write waits for IndexedDB far longer than a slice: the merge runs beside it (EngineStore.onlyBulkWrites).
      if (this.index.pending <= BUFFER_LIMIT && this.#core.writing && !this.#core.onlyBulkWrites) {
        later(IDLE_MS);
        return;
      }
      void this.#queue.run(() => {
        if (this.#disposed) return;
        const until = performance.now() + MERGE_SLICE_MS;
        while (this.index.pending > 0 && performance.now() < until)
          if (this.index.merge(16) > 0) this.#mergedSinceSnapshot = true;
        // Another #mergeSoon() meanwhile started its own chain.
        if (this.index.pending > 0 && this.#cancelMerge === undefined) this.#cancelMerge = inNextTask(slice);
      });
    };
    later(this.index.pending > BUFFER_LIMIT ? 0 : IDLE_MS);
  }

  /**
   * Replaces the index with one read from the store (its generation moved:
   * another instance reset or replaced it). Runs inside the catch-up chain.
   */
  async #reload(generation: number, options: LongWorkOptions): Promise<void> {
    const scopes = new ScopeTable();
    const { index, seq, stale } = await fillFromStore(
      this.#core,
      this.#embedderId,
      this.index.dimensions,
      scopes,
      options,
    );
    this.index.reset(index);
    this.scopes.replaceWith(scopes);
    this.seq = seq;
    this.#generation = generation;
    this.#lastSnapshotSeq = -1;
    for (const id of stale) this.#stale(id);
  }

  /**
   * Snapshots when one is due (SnapshotPacer: max(1000, 10%) memory changes not
   * in the last snapshot), now or once the pacer's wait is over. Beside bulk
   * writes the wait lets a fill's snapshots double in size (EngineStore.busySnapshotMin;
   * the costs: bench/results/REPORT.md, "Measurements cited by the code").
   */
  async maybeSnapshot(): Promise<void> {
    if (this.#disposed || this.#retired || this.#superseded !== undefined) return;
    await this.#pacer.pace({ size: this.index.size, unsnapshotted: this.unsnapshotted });
  }

  /** Writes a snapshot of the index and the seq it reflects into `meta`. */
  snapshot(): Promise<void> {
    return this.#queue.run(async () => {
      // Nothing new since the last one: no write applied, no vector merged.
      if (this.#disposed || this.#retired || this.#superseded !== undefined) return;
      if (this.seq === this.#lastSnapshotSeq && !this.#mergedSinceSnapshot) return;
      const started = performance.now();
      // Never save an index of a store generation that is gone (a reset elsewhere).
      if ((await readGeneration(this.#core.db)) !== this.#generation) return;
      const record = this.#snapshotRecord();
      await writeSnapshot(this.#core, record);
      this.#noteSnapshotWritten(record.seq, started);
    });
  }

  /** The snapshot record of the index as it stands: its bytes, the scope table and the seq it reflects. */
  #snapshotRecord(): SnapshotRecord {
    const parts = this.index.snapshotParts();
    return {
      bytes: parts.main,
      pending: parts.buffer,
      scopeColumns: this.scopes.toColumns(),
      statements: this.#core.analyzer.id,
      seq: this.seq,
      embedderId: this.#embedderId,
      dimensions: this.index.dimensions,
      at: this.#core.now(),
      generation: this.#generation,
    };
  }

  /** A snapshot of position `seq`, begun at `started` (performance.now()), was written: the next one is counted from it. */
  #noteSnapshotWritten(seq: number, started: number): void {
    this.#lastSnapshotSeq = seq;
    this.#changed = 0;
    this.#mergedSinceSnapshot = false;
    this.#pacer.ended(started);
  }

  /** Memory changes applied since the last snapshot; Infinity when there is none yet. */
  get unsnapshotted(): number {
    return this.#lastSnapshotSeq < 0 ? Infinity : this.#changed;
  }

  /** The store generation this index reflects (with `seq`, where it stands; a search checks both against the log's head). */
  get generation(): number {
    return this.#generation;
  }

  /** The embedder id this index holds vectors of. */
  get embedderId(): string {
    return this.#embedderId;
  }

  /** The model another instance switched the store to, once this instance learned of it; else undefined. */
  get superseded(): string | undefined {
    return this.#superseded;
  }

  /** This instance's own re-embed records `target` now (or its switch failed: undefined): not another's switch. */
  expectRecorded(target: string | undefined): void {
    this.#expected = target;
  }

  /** Throws EmbedderChangedError once the store is known to have moved to another model (a vector query would be wrong). */
  assertCurrent(): void {
    if (this.#superseded !== undefined) throw new EmbedderChangedError(this.#superseded, this.#embedderId);
  }

  /** The recorded embedder as a log head or a write saw it: another model than this index's is another instance's switch. */
  #noteRecorded(embedderId: string | undefined): void {
    if (embedderId === undefined || embedderId === this.#embedderId || embedderId === this.#expected) return;
    this.#superseded = embedderId;
    this.#staleEarly = [];
  }

  /** Whether dispose() was called (a call, so that a check after an await is not narrowed away). */
  #isClosed(): boolean {
    return this.#disposed;
  }

  /** Frees the index; later catch-ups and snapshots do nothing. */
  dispose(): void {
    this.#disposed = true;
    this.#stopFollowing();
    this.index.dispose();
  }
}

/** The Prioritized Task Scheduling API where the platform has it (Chromium; not Node). */
interface TaskScheduler {
  postTask(task: () => void, options: { signal: AbortSignal }): Promise<void>;
}

/**
 * Runs `task` in a task of its own soon, giving the thread back first; returns the cancel function. Through
 * `scheduler.postTask` where there is one: a merge slice's setTimeout(0) from the one before was clamped to 4 ms
 * past the fifth in a row (the HTML timer nesting rule): idle time beside a bulk write the merge did not use.
 */
function inNextTask(task: () => void): () => void {
  const scheduler = (globalThis as { scheduler?: Partial<TaskScheduler> }).scheduler;
  if (typeof scheduler?.postTask !== 'function') {
    const timer = setTimeout(task, 0);
    return () => {
      clearTimeout(timer);
    };
  }
  const controller = new AbortController();
  scheduler.postTask(task, { signal: controller.signal }).catch(() => undefined); // rejects when cancelled
  return () => {
    controller.abort();
  };
}

/**
 * A fresh index of every live memory's usable stored vector (the scope fields
 * go into `scopes`), and the log position it reflects. Damaged vectors are
 * skipped and reported.
 */
async function fillFromStore(
  core: EngineStore,
  embedderId: string,
  dimensions: number,
  scopes: ScopeTable,
  options: LongWorkOptions,
): Promise<{ index: VectorIndex; seq: number; total: number; stale: string[] }> {
  const { db } = core;
  // The seq first: changes made while we read are replayed afterwards (replay is idempotent).
  const seq = await readLastSeq(core.db);
  const total = await db.vectors.count();
  let index = await createIndex({ dimensions, expectedSize: total });
  const fill: Fill = { core, embedderId, dimensions, scopes, stale: [] };
  let done = 0;
  let after: string | undefined;
  options.onProgress?.({ phase: 'rebuild', done, total });
  for (;;) {
    throwIfAborted(options.signal);
    const page = await vectorPageAfter(db, after);
    if (page.length === 0) break;
    after = page[page.length - 1]!.id;
    const rows = await db.memories.bulkGet(page.map((v) => v.id));
    index.addMany(indexableOf(fill, page, rows));
    done += page.length;
    options.onProgress?.({ phase: 'rebuild', done, total });
  }
  index = await promote(index);
  return { index, seq, total, stale: fill.stale };
}

/** What fillFromStore fills: the scope table, and the live memories found without a vector of `embedderId`. */
interface Fill {
  core: EngineStore;
  embedderId: string;
  dimensions: number;
  scopes: ScopeTable;
  stale: string[];
}

/** The next PAGE vector rows in id order, after id `after` (from the first when undefined). */
function vectorPageAfter(db: EngramDb, after: string | undefined): Promise<VectorRow[]> {
  return (after === undefined ? db.vectors.orderBy(':id') : db.vectors.where(':id').above(after)).limit(PAGE).toArray();
}

/**
 * The entries to index of a page of vector rows (`rows`: their memories): each live memory's usable vector
 * of this model, its scope recorded in `fill.scopes`; one without such a vector goes to `fill.stale`, a
 * damaged one is reported.
 */
function indexableOf(
  fill: Fill,
  page: readonly VectorRow[],
  rows: readonly (MemoryRow | undefined)[],
): { id: string; vector: Float32Array }[] {
  const { core, embedderId, dimensions, scopes, stale } = fill;
  const now = core.now();
  const items: { id: string; vector: Float32Array }[] = [];
  page.forEach((v, i) => {
    const row = rows[i];
    if (!isLive(row, now)) return;
    const vector = vectorOfModel(v, embedderId);
    if (vector === undefined) {
      stale.push(v.id);
      return;
    }
    const defect = vectorDefect(vector, dimensions);
    if (defect !== undefined) {
      core.reportDamaged({ table: 'vectors', key: v.id, reason: defect });
      return;
    }
    items.push({ id: v.id, vector });
    scopes.set(row, statementOf(core.analyzer, row));
  });
  return items;
}

/**
 * How many vectors the store holds, counted beside the load: a store large enough for HNSW loads its WASM
 * while the snapshot is read (a page's first open), and a restore checks the count against the index.
 */
function countStoredVectors(core: EngineStore): Promise<number> {
  const storedCount = core.db.vectors.count();
  storedCount
    .then((n) => {
      if (n >= EXACT_CROSSOVER) preloadHnsw();
    })
    .catch(() => undefined); // a failure surfaces where the count is awaited
  return storedCount;
}

/** Whether snapshot `record` is of this embedder, dimension and store generation (else the index is rebuilt). */
function snapshotFits(record: SnapshotRecord, embedderId: string, dimensions: number, generation: number): boolean {
  return (
    record.embedderId === embedderId && record.dimensions === dimensions && (record.generation ?? 0) === generation
  );
}
