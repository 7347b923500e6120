/**
 * The keyword index in memory, as a cache of the store (like vector-state.ts
 * for vectors). IndexedDB's terms rows stay the source of truth; this keeps
 * the postings of both corpora (messages, memories) built from those rows and
 * the change-log position `seq` they reflect. On load it is restored from its
 * snapshot in `meta`, brought up to date by replaying the changes after the
 * snapshot's seq, and checked against the store (document counts, corpus
 * statistics, analyzer); anything missing, corrupt or different means a
 * rebuild from the terms rows. Before every search it catches up with the log,
 * so writes from another tab or instance are seen. Snapshots are written in
 * the background (every max(1000, 10%) changes) and on close.
 */
import { isEngramError } from '../../errors.js';
import { keywordRelevance } from '../../search/fusion.js';
import { KeywordPostings, type PostingsSearchOptions, type PostingsSnapshot } from '../../search/keyword-postings.js';
import type { KeywordHit } from '../../search/keyword-search.js';
import { rarestTerms } from '../../search/query-terms.js';
import {
  MEMORY_CORPUS,
  MESSAGE_CORPUS,
  readTermsRow,
  statsKey,
  termKey,
  type Corpus,
  type CorpusStats,
} from '../../store/keyword-terms.js';
import { readLastSeq, readLogHead, type LogHead } from '../../store/change-log.js';
import { getSnapshot, prepareSnapshot, writeSnapshot } from '../../store/snapshot-chunks.js';
import { readGeneration } from '../../store/generation.js';
import type { ChangeRow, TermsRow } from '../../store/rows.js';
import type { EngramDb } from '../../store/schema.js';
import { MAX_KEY, MIN_KEY, type LoggedWrite } from '../../store/write.js';
import { storeError } from '../../store/store-error.js';
import { SerialQueue } from '../../util/serial-queue.js';
import type { EngineStore } from '../engine-store.js';
import { SnapshotPacer } from '../snapshot-pacer.js';
import { ANALYZER_KEY, type AnalyzerRecord } from './keyword-reindex.js';

/** What `meta` keeps of the keyword index. */
interface KeywordSnapshotRecord {
  seq: number;
  /** The analyzer the terms rows were made with when the snapshot was taken. */
  analyzerId: string | null;
  messages: PostingsSnapshot;
  memories: PostingsSnapshot;
  at: number;
}

const SNAPSHOT_KEY = 'keywordSnapshot';
const PAGE = 5000;
const CORPORA: readonly Corpus[] = [MESSAGE_CORPUS, MEMORY_CORPUS];

/** A keyword search's best hits (BM25 score and relevance in [0, 1]), how many matched, the query's bound. */
export interface KeywordResult {
  hits: KeywordHit[];
  total: number;
  bound: number;
}

/** How the keyword index came to be on load. */
export type KeywordOrigin = 'snapshot' | 'rebuild';

/** The corpus a change-log entry's document belongs to, if it is keyword-indexed. */
function corpusOf(change: ChangeRow): Corpus | undefined {
  return change.table === 'messages' ? MESSAGE_CORPUS : change.table === 'memories' ? MEMORY_CORPUS : undefined;
}

/** The keyword-indexed documents `changes` touched, each once, in the order first touched. */
function changedDocuments(changes: readonly ChangeRow[]): [Corpus, string][] {
  const documents = new Map<string, [Corpus, string]>();
  for (const c of changes) {
    const corpus = corpusOf(c);
    if (corpus !== undefined) documents.set(`${corpus}:${c.recordId}`, [corpus, c.recordId]);
  }
  return [...documents.values()];
}

const sameStats = (a: CorpusStats, b: CorpusStats): boolean => a.docs === b.docs && a.length === b.length;

/** Both corpora's in-memory postings and the change-log position they reflect. */
export class KeywordState {
  seq: number;
  readonly origin: KeywordOrigin;
  readonly #core: EngineStore;
  readonly #postings: Record<Corpus, KeywordPostings>;
  #lastSnapshotSeq: number;
  /** The store generation the postings reflect (see lib/store/generation.ts); read at the first catch-up of a restored state. */
  #generation: number | undefined;
  /** Catch-ups, this instance's writes, snapshot copies and resets run one at a time. */
  readonly #queue = new SerialQueue();
  /** Snapshot writes, one at a time, outside #queue (searches need not wait for them). */
  readonly #saving = new SerialQueue();
  /** When the next snapshot is written (see maybeSnapshot). */
  readonly #pacer: SnapshotPacer;
  /** A deletion of this instance dropped the snapshot: one is due once the writer pauses. */
  #snapshotDropped = false;
  #unwatch: (() => void) | undefined;

  private constructor(
    core: EngineStore,
    postings: Record<Corpus, KeywordPostings>,
    seq: number,
    origin: KeywordOrigin,
  ) {
    this.#core = core;
    this.#pacer = new SnapshotPacer(core, this);
    this.#postings = postings;
    this.seq = seq;
    this.origin = origin;
    this.#lastSnapshotSeq = origin === 'snapshot' ? seq : -1;
  }

  /** Restores from the snapshot (replaying the log, checking against the store) or rebuilds from the terms rows. */
  static async load(core: EngineStore): Promise<KeywordState> {
    const { db } = core;
    // Sealed whole with WebCrypto in an encrypted store (snapshot-chunks.ts), opened here.
    const record = (await getSnapshot(db, SNAPSHOT_KEY))?.value as KeywordSnapshotRecord | undefined;
    if (record !== undefined) {
      const restored = await KeywordState.#restore(core, record);
      if (restored !== undefined) return restored;
    }
    return KeywordState.rebuild(core);
  }

  static async #restore(core: EngineStore, record: KeywordSnapshotRecord): Promise<KeywordState | undefined> {
    try {
      if ((await analyzerId(core)) !== record.analyzerId) return undefined;
      const last = await readLastSeq(core.db);
      if (record.seq > last) return undefined; // the log was reset after the snapshot
      const state = new KeywordState(
        core,
        {
          [MESSAGE_CORPUS]: KeywordPostings.restore(record.messages),
          [MEMORY_CORPUS]: KeywordPostings.restore(record.memories),
        },
        record.seq,
        'snapshot',
      );
      await state.catchUp();
      return (await state.agreesWithStore()) ? state : undefined;
    } catch (e) {
      if (isEngramError(e) && e.code !== 'INDEX') throw e;
      // A malformed snapshot: the caller rebuilds from the source of truth.
      return undefined;
    }
  }

  /** Builds both corpora's postings from every terms row, in one read transaction (a consistent store). */
  static async rebuild(core: EngineStore): Promise<KeywordState> {
    const { db } = core;
    try {
      return await db.transaction('r', [db.changes, db.terms, db.meta], async () => {
        const seq = await readLastSeq(db);
        const postings = { [MESSAGE_CORPUS]: new KeywordPostings(), [MEMORY_CORPUS]: new KeywordPostings() };
        for (const corpus of CORPORA) postings[corpus].stats = await storedStats(core, corpus);
        await upsertEveryTermsRow(db, postings);
        const state = new KeywordState(core, postings, seq, 'rebuild');
        state.#generation = await readGeneration(db);
        return state;
      });
    } catch (e) {
      throw storeError(e, 'loading the keyword index');
    }
  }

  /** The postings of one corpus (call {@link catchUp} first). */
  postings(corpus: Corpus): KeywordPostings {
    return this.#postings[corpus];
  }

  /**
   * BM25 over one corpus, after catching up with the change log. The query is
   * analyzed by the store's analyzer (as keywordSearch does), so scores,
   * relevance, order and total equal keywordSearch's over the same rows.
   * @example
   * const { hits } = await state.search(MEMORY_CORPUS, 'paris trip', { depth: 40 })
   */
  async search(corpus: Corpus, query: string, options: PostingsSearchOptions = {}): Promise<KeywordResult> {
    await this.catchUp();
    return this.searchCaughtUp(corpus, query, options);
  }

  /**
   * search() without its catch-up, for a caller that has just awaited
   * catchUp() itself (memory search catches both indexes up at once).
   */
  searchCaughtUp(corpus: Corpus, query: string, options: PostingsSearchOptions = {}): KeywordResult {
    const postings = this.#postings[corpus];
    // Bounded: at most MAX_QUERY_TERMS distinct terms, the rarest (a huge query stays fast).
    const keys = rarestTerms(
      this.#core.analyzer.query(query).map((t) => termKey(corpus, t)),
      (k) => postings.documentFrequency(k),
    );
    const { hits, total, bound } = postings.search(keys, options);
    return {
      hits: hits.map((h) => ({ id: h.id, score: h.score, relevance: keywordRelevance(h.score, bound) })),
      total,
      bound,
    };
  }

  /**
   * Applies every message and memory change logged after `seq`. Serialised; cheap when nothing changed:
   * one read of where the log stands (`head`, when the caller read it already for both indexes).
   */
  catchUp(head?: Promise<LogHead>): Promise<void> {
    return this.#queue.run(() => this.#catchUp(head));
  }

  async #catchUp(head?: Promise<LogHead>): Promise<void> {
    try {
      if (!(await this.#hasChangesToApply(head))) return; // the common case: nothing new
      let done = false;
      while (!done) done = await this.#applyLogPage();
    } catch (e) {
      throw storeError(e, 'updating the keyword index');
    }
    if (this.#snapshotDue()) {
      // Off the caller's path: a failed background snapshot only means a longer next open.
      void this.snapshot().catch(() => undefined);
    }
  }

  /**
   * Whether to read the log for changes after `seq`: when it holds some, and after a rebuild. The
   * postings are rebuilt from the terms rows when the log no longer holds every change this index
   * lacks (compacted away while another instance wrote), or another instance reset or replaced the
   * store (its generation moved: the postings hold ghosts).
   */
  async #hasChangesToApply(head: Promise<LogHead> | undefined): Promise<boolean> {
    const { floor, generation, last } = await (head ?? readLogHead(this.#core.db));
    this.#generation ??= generation;
    if (this.seq < floor || generation !== this.#generation) {
      const fresh = await KeywordState.rebuild(this.#core);
      for (const corpus of CORPORA) this.#postings[corpus] = fresh.postings(corpus);
      this.seq = fresh.seq;
      this.#generation = fresh.#generation;
      this.#lastSnapshotSeq = -1;
      return true;
    }
    return last > this.seq;
  }

  /**
   * Applies the next page of logged changes after `seq`, with the terms rows and statistics they
   * left, in one read transaction (a consistent store). Whether the log is exhausted.
   */
  #applyLogPage(): Promise<boolean> {
    const { db } = this.#core;
    return db.transaction('r', [db.changes, db.terms, db.meta], async () => {
      const changes = await db.changes.where(':id').above(this.seq).limit(PAGE).toArray();
      if (changes.length === 0) return true;
      await this.#reloadDocuments(changedDocuments(changes));
      this.seq = changes[changes.length - 1]!.seq!;
      return changes.length < PAGE;
    });
  }

  /** Reads the terms rows of `documents` and their corpora's statistics, and puts them in the postings. */
  async #reloadDocuments(documents: readonly [Corpus, string][]): Promise<void> {
    const rows = await this.#core.db.terms.bulkGet([...documents]);
    const touched = new Set(documents.map(([corpus]) => corpus));
    const stats = await Promise.all(
      [...touched].map(async (corpus) => [corpus, await storedStats(this.#core, corpus)] as const),
    );
    documents.forEach(([corpus, id], i) => {
      const row = rows[i];
      if (row === undefined) this.#postings[corpus].remove(id);
      else this.#postings[corpus].upsert(readTermsRow(row));
    });
    for (const [corpus, s] of stats) this.#postings[corpus].stats = s;
  }

  /** Whether enough changes went unsnapshotted for a background snapshot: a tenth of the documents, at least 1000. */
  #snapshotDue(): boolean {
    const documents = this.#postings[MESSAGE_CORPUS].size + this.#postings[MEMORY_CORPUS].size;
    return this.unsnapshotted >= Math.max(1000, documents / 10);
  }

  /** Whether the postings hold as many documents as the store has terms rows, and the same statistics. */
  async agreesWithStore(): Promise<boolean> {
    const { db } = this.#core;
    return db.transaction('r', [db.changes, db.terms, db.meta], async () => {
      const last = await readLastSeq(db);
      if (last !== this.seq) return true; // written meanwhile: the next catch-up applies it; nothing to compare against
      for (const corpus of CORPORA) {
        const postings = this.#postings[corpus];
        const rows = await db.terms.where(':id').between([corpus, MIN_KEY], [corpus, MAX_KEY]).count();
        if (rows !== postings.size || !sameStats(await storedStats(this.#core, corpus), postings.stats)) return false;
      }
      return true;
    });
  }

  /** Writes a snapshot of both corpora's postings and the seq they reflect into `meta`. */
  async snapshot(): Promise<void> {
    // Taken in the chain (a consistent copy), written outside it: searches need not wait for the write.
    const taken = this.#queue.run(() => this.#copyForSnapshot());
    const copy = await taken;
    if (copy === undefined) return;
    const { record, generation, started } = copy;
    const write = this.#saving.run(async () => {
      const { db } = this.#core;
      try {
        // Sealed before the transaction in an encrypted store (WebCrypto, which would end it).
        const prepared = await prepareSnapshot(db, SNAPSHOT_KEY, { ...record });
        await db.transaction('rw', [db.meta, db.changes], async () => {
          if (await this.#copyOutdated(record, generation)) {
            this.#lastSnapshotSeq = -1;
            return;
          }
          await writeSnapshot(db, prepared);
        });
      } catch (e) {
        this.#lastSnapshotSeq = -1;
        throw storeError(e, 'saving the keyword index snapshot');
      } finally {
        this.#pacer.ended(started);
      }
    });
    await write;
  }

  /** A copy of both corpora's postings for a snapshot (run in the chain), or undefined when the last one is current. */
  async #copyForSnapshot(): Promise<
    { record: KeywordSnapshotRecord; generation: number | undefined; started: number } | undefined
  > {
    if (this.seq === this.#lastSnapshotSeq && !this.#snapshotDropped) return undefined;
    const started = performance.now();
    const generation = this.#generation;
    const record: KeywordSnapshotRecord = {
      seq: this.seq,
      analyzerId: await analyzerId(this.#core),
      messages: this.#postings[MESSAGE_CORPUS].snapshot(),
      memories: this.#postings[MEMORY_CORPUS].snapshot(),
      at: this.#core.now(),
    };
    this.#lastSnapshotSeq = record.seq;
    this.#snapshotDropped = false;
    return { record, generation, started };
  }

  /** Whether a copy must not be written (read in the write's transaction): its generation is gone, or a deletion followed it. */
  async #copyOutdated(record: KeywordSnapshotRecord, generation: number | undefined): Promise<boolean> {
    const { db } = this.#core;
    // A deletion committed after the copy was taken dropped the snapshot on purpose
    // (it holds the deleted text's words): writing this older copy would bring them back.
    // So would a copy of a generation that is gone (forget, a reset or a replacing import).
    const later = await db.changes.where(':id').above(record.seq).toArray();
    return (
      (generation !== undefined && (await readGeneration(db)) !== generation) ||
      later.some((c) => c.op === 'delete' && (c.table === 'messages' || c.table === 'memories'))
    );
  }

  /**
   * Applies every later write of this instance from what it logged (its terms
   * rows and statistics), without reading them back, when it directly follows
   * `seq` in the same generation; any other write (another tab's, or one after
   * a gap) is left to the catch-up before the next search, which reads the log.
   * So the postings stay current while an app only writes, and flush() and
   * close() snapshot them without reading the store: the first keyword or
   * hybrid search after the next open restores that snapshot instead of
   * rebuilding from every terms row. Snapshots are taken in the background when
   * due (see {@link maybeSnapshot}). Returns the function that stops it.
   */
  follow(): () => void {
    this.#unwatch ??= this.#core.watchWrites((write) => {
      this.#applyOwn(write);
    });
    return () => {
      this.#unwatch?.();
      this.#unwatch = undefined;
      this.#pacer.stop();
    };
  }

  #applyOwn(write: LoggedWrite): void {
    const run = this.#queue.run(() => {
      if (write.generation !== this.#generation || write.seqs[0] !== this.seq + 1) return;
      const { puts, deletes, stats } = write.terms;
      for (const [corpus, id] of deletes) this.#postings[corpus].remove(id);
      for (const row of puts) this.#postings[row.c].upsert(readTermsRow(row));
      for (const [corpus, s] of stats) this.#postings[corpus].stats = { docs: s.docs, length: s.length };
      this.seq = write.seqs[write.seqs.length - 1]!;
      // The store dropped the snapshot in the same transaction (it held the deleted text's words).
      if (write.changes.some((c) => c.op === 'delete' && (c.table === 'messages' || c.table === 'memories')))
        this.#snapshotDropped = true;
      this.#pacer.ownApplied();
    });
    void run.then(() => this.maybeSnapshot()).catch(() => undefined);
  }

  /**
   * Snapshots when one is due (SnapshotPacer: enough changes not in the last
   * snapshot, or it was dropped by a deletion), now or once the pacer's wait is over.
   */
  async maybeSnapshot(): Promise<void> {
    if (this.#core.closed) return;
    const size = this.#postings[MESSAGE_CORPUS].size + this.#postings[MEMORY_CORPUS].size;
    await this.#pacer.pace({ size, unsnapshotted: this.unsnapshotted, dropped: this.#snapshotDropped });
  }

  /**
   * The store generation the postings reflect (with `seq`, where they stand; a search checks both
   * against the log's head); undefined until the first catch-up of a restored state.
   */
  get generation(): number | undefined {
    return this.#generation;
  }

  /** Changes applied since the last snapshot; Infinity when there is none yet. */
  get unsnapshotted(): number {
    return this.#lastSnapshotSeq < 0 ? Infinity : this.seq - this.#lastSnapshotSeq;
  }

  /** Empties both corpora (after the store was reset); the log position is kept. */
  async reset(): Promise<void> {
    await this.#queue.run(() => {
      for (const corpus of CORPORA) this.#postings[corpus].clear();
      this.#lastSnapshotSeq = -1;
    });
  }

  /** Waits for snapshot writes under way (before the store closes). */
  async settle(): Promise<void> {
    await this.#queue.idle();
    await this.#saving.idle();
  }
}

/** A corpus's statistics as the store keeps them. */
async function storedStats(core: EngineStore, corpus: Corpus): Promise<CorpusStats> {
  const value = (await core.db.meta.get(statsKey(corpus)))?.value as CorpusStats | undefined;
  return { docs: value?.docs ?? 0, length: value?.length ?? 0 };
}

/** Upserts every terms row into its corpus's postings, a page at a time (in the caller's read transaction). */
async function upsertEveryTermsRow(db: EngramDb, postings: Record<Corpus, KeywordPostings>): Promise<void> {
  let after: [string, string] | undefined;
  for (;;) {
    const page: TermsRow[] = await (after === undefined ? db.terms.orderBy(':id') : db.terms.where(':id').above(after))
      .limit(PAGE)
      .toArray();
    if (page.length === 0) break;
    const lastRow = page[page.length - 1]!;
    after = [lastRow.c, lastRow.d];
    for (const row of page) postings[row.c].upsert(readTermsRow(row));
    if (page.length < PAGE) break;
  }
}

/** The analyzer the store's terms rows were made with, or null when none is recorded. */
async function analyzerId(core: EngineStore): Promise<string | null> {
  return ((await core.db.meta.get(ANALYZER_KEY))?.value as AnalyzerRecord | undefined)?.id ?? null;
}

const states = new WeakMap<EngineStore, Promise<KeywordState>>();
const unfollow = new WeakMap<EngineStore, () => void>();

/**
 * The keyword state of an open store, shared by every face of that store:
 * loaded on first use (Engram.open() starts it in the background), then kept
 * current with this instance's writes as they commit (see
 * {@link KeywordState.follow}). A failed load is retried next time.
 */
export function keywordState(core: EngineStore): Promise<KeywordState> {
  let state = states.get(core);
  if (state === undefined) {
    state = KeywordState.load(core).then((loaded) => {
      // Compaction of the change log keeps what these postings have not applied yet.
      core.addLogReader(() => loaded.seq);
      if (!core.closed) unfollow.set(core, loaded.follow());
      return loaded;
    });
    states.set(core, state);
    state.catch(() => states.delete(core));
  }
  return state;
}

/** Snapshots the keyword state of a store if it was loaded (on close and flush), and waits for the write. */
export async function flushKeywordState(core: EngineStore): Promise<void> {
  const state = await states.get(core)?.catch(() => undefined);
  if (state === undefined) return;
  await state.catchUp();
  await state.snapshot();
  await state.settle();
}

/** On close: stops following the writes, snapshots the keyword state if it was loaded, and waits for the write. */
export async function closeKeywordState(core: EngineStore): Promise<void> {
  unfollow.get(core)?.();
  unfollow.delete(core);
  await flushKeywordState(core);
}

/** Empties the keyword state of a store after the store was reset (if it was loaded). */
export async function resetKeywordState(core: EngineStore): Promise<void> {
  await (await states.get(core)?.catch(() => undefined))?.reset();
}
