/**
 * lib/engine ties the parts together: the store, the keyword index and (with
 * semantic memory) the vector index and the embedder. Faces in lib/memory call
 * the engine and never Dexie or WASM directly. The engine must not import faces.
 */
import { ClosedError } from '../errors.js';
import type { EngramDb } from '../store/schema.js';
import { ENGLISH_ANALYZER, type Analyzer } from '../search/analyze.js';
import { compactChangeLog } from '../store/change-log.js';
import type { MemoryRow } from '../store/rows.js';
import { SerialQueue } from '../util/serial-queue.js';
import { writeTransaction, type LoggedWrite, type WritePlan, type WritePolicy } from '../store/write.js';

/** Memories this instance wrote last, kept in memory for duplicate checks of add() calls in flight. */
const OWN_MEMORIES = 4096;

/** A memory as this instance last wrote it: the row (a tombstone is text-free), its new vector if any, and the change-log position. */
export interface OwnMemory {
  seq: number;
  row: MemoryRow;
  vector: Float32Array | undefined;
}

/** Settings every engine operation reads, fixed at open(). */
export interface StoreSettings {
  /** Largest accepted message content or memory text, in UTF-8 bytes. */
  maxContentBytes: number;
  /** The clock; injectable for tests of TTLs and ordering. */
  now: () => number;
  /** This device's id, recorded as the origin of the memories it writes. */
  deviceId: string;
  /** History entries kept per record (see `WritePolicy`); the store's default when absent. */
  historyLimit?: number;
}

/**
 * Logged changes between two compactions of the change log: the log stays
 * within this many entries of what its consumers still need.
 */
export const COMPACT_EVERY = 1000;

/**
 * Changes in one write from which it counts as a bulk write (see
 * EngineStore.onlyBulkWrites): an add() of a large batch, an import's batch, a
 * first sync's pull. A small write is short enough that a merge slice beside it
 * would slow it noticeably; a large one waits for IndexedDB, idle on the page's
 * thread, long enough for graph inserts to overlap its commit (bench/peers; the
 * numbers: bench/results/REPORT.md, "Measurements cited by the code").
 */
export const BULK_WRITE = 256;

/** Least lag, in log entries, an index snapshot may have and stay replayable (more when the store is larger). */
const MIN_SNAPSHOT_LAG = 10_000;

/** Least changes outside an index snapshot for which one is taken while this instance makes small writes. */
const BUSY_SNAPSHOT_MIN = 5000;

/** A stored row that could not be used and was skipped; the rest of the store works. */
export interface DamagedRow {
  table: string;
  key: string;
  reason: string;
}

/** The open store and its settings, shared by every engine operation. */
export class EngineStore {
  readonly #db: EngramDb;
  #dbClosed = false;
  readonly settings: StoreSettings;
  /** How texts become keyword terms and embedder input (the store's language). */
  readonly analyzer: Analyzer;
  #closed = false;
  readonly #policy: WritePolicy;
  /** Changes logged since the change log was last compacted. */
  #logged = 0;
  /** The log positions of this instance's caches (vector and keyword indexes). */
  readonly #logReaders = new Set<() => number>();
  readonly #logWatchers = new Set<(write: LoggedWrite) => void>();
  /** add() calls in flight check and write in call order (inOrder). */
  readonly #order = new SerialQueue();
  /**
   * The last OWN_MEMORIES memories this instance wrote, by id, oldest first:
   * only the row after the write (never the one before, so a deletion leaves
   * no text here either), dropped when the store's generation moves.
   */
  readonly #own = new Map<string, OwnMemory>();
  #ownGeneration = 0;
  #lastOwnSeq = 0;
  /** The first log position from which every entry up to #lastOwnSeq is this instance's, in this generation. */
  #ownRunFrom = 1;
  readonly #damaged = new Map<string, DamagedRow>();
  /** Write transactions under way, waited for by close(). */
  readonly #writes = new Set<Promise<unknown>>();
  /** Of those, how many are bulk writes (planned with BULK_WRITE changes or more) and how many are not (or not planned yet). */
  #bulkWrites = 0;
  #smallWrites = 0;
  /** Whether the last write of this instance to commit was a bulk write. */
  #lastWriteBulk = false;
  /** Told of every damaged row as it is found (the facade forwards it to onProgress). */
  onDamaged: ((row: DamagedRow) => void) | undefined;

  constructor(db: EngramDb, settings: StoreSettings, analyzer: Analyzer = ENGLISH_ANALYZER) {
    this.#db = db;
    this.settings = settings;
    this.analyzer = analyzer;
    this.#policy = settings.historyLimit === undefined ? {} : { historyLimit: settings.historyLimit };
  }

  /**
   * The Dexie database. Once close() has closed it, reaching for it throws
   * ClosedError, so a call that was still under way fails typed rather than
   * with Dexie's DatabaseClosedError.
   */
  get db(): EngramDb {
    if (this.#dbClosed) throw new ClosedError();
    return this.#db;
  }

  /** Closes the Dexie database (after markClosed() and the last flush). */
  closeDb(): void {
    this.#dbClosed = true;
    this.#db.close();
  }

  /** Whether a write transaction of this instance is under way (background index work waits for a pause). */
  get writing(): boolean {
    return this.#writes.size > 0;
  }

  /**
   * Whether the writes under way are all bulk writes (at least {@link BULK_WRITE}
   * changes each), and there is one. Such a write spends most of its time waiting
   * for IndexedDB, which works outside the page's thread: index work that waits
   * for a pause in the writing (HNSW merges) may run beside it, costing the write
   * at most one slice's delay of its completion, while beside small writes back
   * to back a slice would hold up the next one.
   */
  get onlyBulkWrites(): boolean {
    return this.#bulkWrites > 0 && this.#smallWrites === 0;
  }

  /**
   * Least changes outside an index snapshot (vector-state.ts, keyword-state.ts) for which one is
   * taken while this instance writes; a smaller one waits for the pause. Beside small writes
   * BUSY_SNAPSHOT_MIN, whose replay on the next open is quick. Beside bulk writes (an import, a
   * first sync, add() of large batches) the store's size `size`, at least MIN_SNAPSHOT_LAG: each
   * snapshot serialises the whole index and the writes wait behind its transaction (three of them
   * during a 10k fill, bench/peers), so a fill's snapshots double in size (all of them together
   * less than twice the last), a crash leaves at most half of the store to replay, and the
   * snapshot stays within the lag compaction keeps replayable (compactLog).
   */
  busySnapshotMin(size: number): number {
    return this.#lastWriteBulk ? Math.max(MIN_SNAPSHOT_LAG, size) : BUSY_SNAPSHOT_MIN;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Throws ClosedError after close(). Every public operation calls it first. */
  assertOpen(): void {
    if (this.#closed) throw new ClosedError();
  }

  /** Damaged rows found so far (each once), skipped by the engine. */
  get damaged(): readonly DamagedRow[] {
    return [...this.#damaged.values()];
  }

  /** Records a row the engine skipped because it is malformed. */
  reportDamaged(row: DamagedRow): void {
    const key = `${row.table}\u0000${row.key}`;
    if (this.#damaged.has(key)) return;
    this.#damaged.set(key, row);
    this.onDamaged?.(row);
  }

  now(): number {
    return this.settings.now();
  }

  /**
   * The single write path; see {@link writeTransaction}. A write started before
   * close() is waited for by it: it commits and resolves, or rejects with a typed
   * error; a write asked for after close() began rejects with ClosedError.
   */
  async write<R>(plan: () => Promise<WritePlan<R>>): Promise<R> {
    this.assertOpen();
    // Counted as small until its plan shows it bulk (see onlyBulkWrites).
    const counts = { bulk: false };
    this.#smallWrites++;
    const run = writeTransaction(
      this.db,
      this.settings.now,
      (text) => this.analyzer.document(text),
      this.#counted(plan, counts),
      this.#policy,
      (write) => {
        this.#remember(write);
        for (const watch of this.#logWatchers) watch(write);
      },
    );
    this.#writes.add(run);
    try {
      const result = await run;
      this.#lastWriteBulk = counts.bulk;
      // Compacted here, awaited, after bulk writes too: left for the pause in the writing (b2d9b7f) it
      // saved no measurable time on a quiet machine and doubled the per-query time of the searches
      // after the next open (bench/peers; bench/results/REPORT.md, section peers).
      if (this.#logged >= COMPACT_EVERY) await this.compactLog();
      return result;
    } finally {
      this.#writes.delete(run);
      if (counts.bulk) this.#bulkWrites--;
      else this.#smallWrites--;
    }
  }

  /** `plan` that, once it has run, counts its changes toward compaction and moves its write to the bulk count when it is bulk. */
  #counted<R>(plan: () => Promise<WritePlan<R>>, counts: { bulk: boolean }): () => Promise<WritePlan<R>> {
    return async () => {
      const planned = await plan();
      this.#logged += planned.changes.length;
      if (!counts.bulk && planned.changes.length >= BULK_WRITE) {
        counts.bulk = true;
        this.#smallWrites--;
        this.#bulkWrites++;
      }
      return planned;
    };
  }

  /** Memory `id` as this instance wrote it at log position `seq`, while it is among the last few thousand written; undefined otherwise. */
  ownMemory(id: string, seq: number): OwnMemory | undefined {
    const own = this.#own.get(id);
    return own?.seq === seq ? own : undefined;
  }

  /** The change-log position of this instance's last committed write (0 before the first). */
  get lastOwnSeq(): number {
    return this.#lastOwnSeq;
  }

  /**
   * The memories this instance changed after log position `seq`, as it wrote
   * them (the row, text-free once deleted, and its new vector), and the log
   * position they reach (`last`), when every entry logged after `seq` that
   * this instance knows of is its own and each live one came with its vector;
   * undefined otherwise (the caller reads the log). Another instance may have
   * logged after `last` meanwhile: a write planned on this states it as
   * WritePlan.logAfter, and rolls back if so.
   */
  ownMemoriesSince(seq: number): { last: number; memories: OwnMemory[] } | undefined {
    if (seq >= this.#lastOwnSeq) return { last: seq, memories: [] };
    // Entries of another instance in between, or more than the memories kept here could cover.
    if (this.#ownRunFrom > seq + 1 || this.#lastOwnSeq - seq > OWN_MEMORIES) return undefined;
    const memories = [...this.#own.values()].filter((m) => m.seq > seq);
    if (memories.some((m) => m.row.deletedAt === undefined && m.vector === undefined)) return undefined;
    return { last: this.#lastOwnSeq, memories };
  }

  #remember(write: LoggedWrite): void {
    const first = write.seqs[0]!;
    if (write.generation !== this.#ownGeneration || first !== this.#lastOwnSeq + 1) this.#ownRunFrom = first;
    this.#lastOwnSeq = write.seqs[write.seqs.length - 1]!;
    if (write.generation !== this.#ownGeneration) this.#own.clear();
    this.#ownGeneration = write.generation;
    write.changes.forEach((change, i) => {
      if (change.table !== 'memories') return;
      this.#own.delete(change.id);
      if (change.after !== undefined)
        this.#own.set(change.id, { seq: write.seqs[i]!, row: change.after, vector: change.vector?.vector });
    });
    for (const id of this.#own.keys()) {
      if (this.#own.size <= OWN_MEMORIES) break;
      this.#own.delete(id);
    }
  }

  /**
   * Runs `work` once the work queued before it by this method has settled
   * (a failure does not hold the queue up): add() calls in flight check and
   * write in call order. `work` must not queue more work here.
   */
  inOrder<R>(work: () => Promise<R>): Promise<R> {
    return this.#order.run(work);
  }

  /**
   * Calls `watch` after every committed write of this instance, with what it
   * logged (a cache applies it without reading it back). Writes of other
   * instances are not seen here: caches still catch up with the log. Returns
   * the unregister function.
   */
  watchWrites(watch: (write: LoggedWrite) => void): () => void {
    this.#logWatchers.add(watch);
    return () => this.#logWatchers.delete(watch);
  }

  /**
   * Registers a cache of this instance that replays the change log from the
   * position `seq()` returns; compaction keeps every entry after it. Returns the unregister function.
   */
  addLogReader(seq: () => number): () => void {
    this.#logReaders.add(seq);
    return () => this.#logReaders.delete(seq);
  }

  /**
   * Deletes the change-log entries every consumer has passed (see
   * store/change-log.ts). Runs by itself every {@link COMPACT_EVERY} logged
   * changes; a failure only leaves the log longer until the next run.
   */
  async compactLog(): Promise<void> {
    this.#logged = 0;
    if (this.#closed) return;
    const run = (async () => {
      const [memories, messages] = await Promise.all([this.db.memories.count(), this.db.messages.count()]);
      const live = memories + messages;
      const positions = [...this.#logReaders].map((seq) => seq());
      await compactChangeLog(
        this.db,
        Math.max(MIN_SNAPSHOT_LAG, live),
        Math.min(Number.MAX_SAFE_INTEGER, ...positions),
      );
    })().catch(() => undefined);
    this.#writes.add(run);
    try {
      await run;
    } finally {
      this.#writes.delete(run);
    }
  }

  /**
   * Marks the core closed (every later call rejects with ClosedError) and waits
   * for the writes under way to commit or fail; the caller then closes Dexie.
   */
  async markClosed(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#writes]);
  }
}
