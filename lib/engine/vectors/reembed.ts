/**
 * Re-embedding a store while it stays open. A run stages the new model's vector of
 * every live memory beside its current one (`VectorRow.staged`), so searches and
 * writes go on with the recorded model meanwhile. Then the switch, one small
 * transaction, checks that nothing was logged since the run last looked at the log
 * (so every live memory holds a staged vector of the text it holds now) and changes
 * only the recorded embedder (the caller's `record`, inside that transaction) and
 * drops the index snapshot. From that moment every reader takes a row's staged vector
 * of the recorded model as the memory's vector (lib/store/current-vector.ts), so the
 * store is all the new model's at once, while the rows are rewritten afterwards in
 * small transactions that readers never wait long for. A crash between the switch and
 * the end of the rewrite leaves a correct store: readers resolve the staged vectors,
 * and the next re-embed's staging or a write of the memory replaces such a row.
 *
 * A run stopped (its signal, a failing model, a closed tab) keeps what it staged; the
 * next run with the same model embeds only the rest. A memory written during the run
 * gets a new vector row without a staged vector (the write path rewrites the row), or
 * is deleted with its row: the change log names it, and it is staged again (or left
 * out) before the switch. Privacy follows from the same row: deleting or forgetting a
 * memory deletes its staged vector with its vector, and the rewrite writes a row back
 * only inside the transaction that read it.
 *
 * One run per store at a time, across instances: a run holds the store's lease
 * (reembed-lease.ts) from its start to the end of the rewrite, and a second run is
 * refused with ReembedBusyError meanwhile.
 */
import { EmbeddingError, isEngramError, throwIfAborted, type EngramError } from '../../errors.js';
import { validateEmbeddings, type Embedder } from '../../embed/embedder.js';
import { isLive, type MemoryRow, type StagedVector, type VectorRow } from '../../store/rows.js';
import { currentVector } from '../../store/current-vector.js';
import { readEmbedderId } from '../../store/embedder-record.js';
import { readLogHead, type LogHead } from '../../store/change-log.js';
import { deleteSnapshot } from '../../store/snapshot-chunks.js';
import { storeError } from '../../store/store-error.js';
import { retrievalProfile, textToEmbed } from '../../search/retrieval-profile.js';
import { contentHash } from '../../util/hash.js';
import { untilAborted } from '../../util/abort.js';
import type { EngineStore } from '../engine-store.js';
import type { LongWorkOptions } from './vector-state.js';
import { ReembedLease } from './reembed-lease.js';

/** Texts per call to the embedder (its own batch size in the worker). */
const REEMBED_BATCH = 64;
/** Rows read per request while walking the store. */
const PAGE = 2000;
/**
 * Vector rows rewritten per transaction after the switch: small, so a search (which reads
 * `vectors`) waits for one such transaction at most, never for the whole store.
 */
const REWRITE_PAGE = 256;
/** The `meta` key of the vector index's snapshot, dropped by the switch (it indexes the old vectors). */
const INDEX_SNAPSHOT_KEY = 'indexSnapshot';

/** What a finished re-embed did. */
export interface ReembedReport {
  /** Live memories the store holds with the new model's vectors. */
  total: number;
  /** Of them, embedded by this run (the rest an earlier, stopped run had staged, or written since with the new model). */
  embedded: number;
  /** The change-log position at the switch: a write logged after it may still carry the old model's vector. */
  switchSeq: number;
}

/** Options of {@link reembedStore}. */
export interface ReembedStoreOptions extends LongWorkOptions {
  /** Records the new embedder in `meta`; called inside the switch's transaction. */
  record: () => Promise<void>;
  /**
   * Called once the switch has committed, before the rows are rewritten (the new model's
   * index can be put in place meanwhile: readers already take the staged vectors).
   */
  afterSwitch?: (report: ReembedReport) => Promise<void>;
}

/** A live memory whose new vector is still to be made. */
interface Unstaged {
  id: string;
  text: string;
}

/** Where a run stands: what it has checked of the log, what it has read and staged. */
interface ReembedRun {
  core: EngineStore;
  embedder: Embedder;
  lease: ReembedLease;
  options: ReembedStoreOptions;
  /** The log head the run last looked at: every write logged up to it has been read. */
  checked: LogHead;
  /** The live memories as the run last read them (their count is the report's total). */
  live: Set<string>;
  /** Live memories without a vector row: their new vectors wait here for the switch. */
  loose: Map<string, StagedVector>;
  /** The progress reported: `done` of `total` live memories hold the new model's vector. */
  done: number;
  total: number;
  /** Memories this run embedded (the report's `embedded`). */
  embedded: number;
}

/**
 * Re-embeds every live memory of the open store with `embedder` and switches the store
 * to it (see the file's comment). Rejects with AbortError on the signal, or with the
 * embedder's failure (an EmbeddingError), leaving the store on its recorded model.
 */
export async function reembedStore(
  core: EngineStore,
  embedder: Embedder,
  options: ReembedStoreOptions,
): Promise<ReembedReport> {
  const lease = await ReembedLease.acquire(core, embedder.id);
  let unregister: () => void = () => undefined;
  try {
    const run = await newRun(core, embedder, lease, options);
    // This instance's compaction keeps the log entries the run has not checked yet.
    unregister = core.addLogReader(() => run.checked.last);
    const report = await stageUntilSwitched(run);
    await options.afterSwitch?.(report);
    await rewrite(core, embedder.id, lease);
    return report;
  } finally {
    unregister();
    await lease.release();
  }
}

/** A run that has read nothing yet, its first look at the log being the head as it stands now. */
async function newRun(
  core: EngineStore,
  embedder: Embedder,
  lease: ReembedLease,
  options: ReembedStoreOptions,
): Promise<ReembedRun> {
  const checked = await readLogHead(core.db);
  return { core, embedder, lease, options, checked, live: new Set(), loose: new Map(), done: 0, total: 0, embedded: 0 };
}

/**
 * Stages every live memory, then what was written meanwhile, until a look at the log finds nothing
 * new and the switch commits (a write landing in between sends the run round again); the run's report.
 */
async function stageUntilSwitched(run: ReembedRun): Promise<ReembedReport> {
  const { core, embedder, lease, options } = run;
  let todo = await startRun(run);
  for (;;) {
    await stageAll(run, todo);
    todo = await writtenMeanwhile(run);
    if (todo.length > 0) continue;
    if (!(await switchOver(core, embedder.id, run.checked, run.loose, lease, options.record))) continue; // a write landed in between
    return { total: run.live.size, embedded: run.embedded, switchSeq: run.checked.last };
  }
}

/** The first read of the run: every memory; those already staged (a stopped run's) count as done. */
async function startRun(run: ReembedRun): Promise<Unstaged[]> {
  const ids = await run.core.db.memories.toCollection().primaryKeys();
  const todo = await unstaged(run.core, run.embedder.id, ids, run.loose, run.live);
  run.total = todo.live;
  run.done = run.total - todo.ids.length;
  run.options.onProgress?.({ phase: 'reembed', done: run.done, total: run.total });
  return todo.ids;
}

/** Embeds and stages `memories`, REEMBED_BATCH at a time, reporting progress after each batch. */
async function stageAll(run: ReembedRun, memories: readonly Unstaged[]): Promise<void> {
  const { core, options } = run;
  for (let i = 0; i < memories.length; i += REEMBED_BATCH) {
    throwIfAborted(options.signal);
    // Its engram closing stops the run (the store closes once close() has snapshotted).
    core.assertOpen();
    const batch = memories.slice(i, i + REEMBED_BATCH);
    await stage(run, batch);
    run.embedded += batch.length;
    run.done = Math.min(run.total, run.done + batch.length);
    options.onProgress?.({ phase: 'reembed', done: run.done, total: run.total });
  }
  throwIfAborted(options.signal);
}

/**
 * What was written since the run last looked at the log and still needs the new model's
 * vector: the memories the log names since then, or every memory again when the store was
 * replaced or its log compacted past that look (the live set and the total start over).
 * Moves `checked` to the head it read.
 */
async function writtenMeanwhile(run: ReembedRun): Promise<Unstaged[]> {
  const { core } = run;
  const head = await readLogHead(core.db);
  const whole = head.generation !== run.checked.generation || head.floor > run.checked.last;
  const ids = whole ? await core.db.memories.toCollection().primaryKeys() : await changedSince(core, run.checked.last);
  run.checked = head;
  if (whole) run.live.clear();
  const todo = await unstaged(core, run.embedder.id, ids, run.loose, run.live);
  if (whole) run.total = todo.live;
  else run.total += todo.ids.length;
  return todo.ids;
}

/** The memory ids the change log names after `seq`. */
async function changedSince(core: EngineStore, seq: number): Promise<string[]> {
  const changes = await core.db.changes.where(':id').above(seq).toArray();
  return [...new Set(changes.filter((c) => c.table === 'memories').map((c) => c.recordId))];
}

/** Whether memory `row` (live) holds the new model's vector of its current text, in its row or staged. */
function hasNewVector(row: MemoryRow, vector: VectorRow | undefined, target: string, loose: Map<string, StagedVector>) {
  if (vector?.embedderId === target) return true; // written since by this model (the write path or a repair)
  const staged = vector?.staged ?? loose.get(row.id);
  return staged?.embedderId === target && staged.textHash === contentHash(row.text);
}

/**
 * Of the memories `ids`, the live ones still without the new model's vector, and how many
 * are live; `live` is kept as the set of the live ones among all the run has read.
 */
async function unstaged(
  core: EngineStore,
  target: string,
  ids: readonly string[],
  loose: Map<string, StagedVector>,
  live: Set<string>,
): Promise<{ ids: Unstaged[]; live: number }> {
  const out: Unstaged[] = [];
  let count = 0;
  for (let i = 0; i < ids.length; i += PAGE) {
    const page = ids.slice(i, i + PAGE);
    const [rows, vectors] = await Promise.all([core.db.memories.bulkGet(page), core.db.vectors.bulkGet(page)]);
    const now = core.now();
    rows.forEach((row, j) => {
      if (!isLive(row, now)) {
        loose.delete(page[j]!);
        live.delete(page[j]!);
        return;
      }
      count++;
      live.add(row.id);
      if (!hasNewVector(row, vectors[j], target, loose)) out.push({ id: row.id, text: row.text });
    });
  }
  return { ids: out, live: count };
}

/**
 * Embeds `batch` and stages each vector beside the memory's current one, in one
 * transaction that first checks the memory still holds the text embedded (a write
 * in between leaves it to the next look at the log).
 */
async function stage(run: ReembedRun, batch: readonly Unstaged[]): Promise<void> {
  const vectors = await embedBatch(run, batch);
  const { core, lease } = run;
  const { db } = core;
  try {
    await db.transaction('rw', [db.memories, db.vectors, db.meta], async () => {
      core.assertOpen();
      await lease.check();
      const ids = batch.map((t) => t.id);
      const [rows, current, recorded] = await Promise.all([
        db.memories.bulkGet(ids),
        db.vectors.bulkGet(ids),
        readEmbedderId(db),
      ]);
      await db.vectors.bulkPut(stagedRows(run, batch, vectors, { rows, current, recorded }));
    });
  } catch (e) {
    throw storeError(e, 're-embedding');
  }
}

/** What a stage's transaction read of its batch: the memories, their vector rows, the recorded embedder. */
interface StageRead {
  rows: readonly (MemoryRow | undefined)[];
  current: readonly (VectorRow | undefined)[];
  recorded: string | undefined;
}

/**
 * Stages the new vector of each memory of `batch` that (as `read` found it) still holds the text
 * embedded and no vector of the new model: the vector rows to put with it staged, or into `run.loose`
 * for a memory without a vector row.
 */
function stagedRows(
  run: ReembedRun,
  batch: readonly Unstaged[],
  vectors: readonly Float32Array[],
  read: StageRead,
): VectorRow[] {
  const { core, embedder, loose } = run;
  const { rows, current, recorded } = read;
  const now = core.now();
  const puts: VectorRow[] = [];
  batch.forEach((t, j) => {
    const row = rows[j];
    const vector = current[j];
    if (!isLive(row, now) || row.text !== t.text || vector?.embedderId === embedder.id) return;
    const staged: StagedVector = { vector: vectors[j]!, embedderId: embedder.id, textHash: contentHash(t.text) };
    // The row's current vector stays (a row an earlier switch left unrewritten keeps its staged one as it).
    const kept = currentVector(vector, recorded);
    if (kept === undefined) loose.set(t.id, staged);
    else puts.push({ id: t.id, vector: kept.vector, embedderId: kept.embedderId, staged });
  });
  return puts;
}

/** The new model's vectors of `batch`'s texts, checked; a failing embedder is an EmbeddingError. */
async function embedBatch(run: ReembedRun, batch: readonly Unstaged[]): Promise<Float32Array[]> {
  const { core, embedder, options } = run;
  const { signal } = options;
  const profile = retrievalProfile(embedder.id);
  const texts = batch.map((t) => textToEmbed(profile, 'passage', core.analyzer.normalize(t.text)));
  let vectors: unknown;
  try {
    // An embedder that ignores the signal still cannot hold the run past an abort.
    vectors = await untilAborted(embedder.embed(texts, signal === undefined ? {} : { signal }), signal);
  } catch (e) {
    throw asEmbeddingError(e, embedder.id);
  }
  validateEmbeddings(texts, vectors, embedder.dimensions);
  return vectors;
}

/** A failed call of embedder `embedderId` as it is thrown: an engram error as it is, anything else as an EmbeddingError. */
export function asEmbeddingError(e: unknown, embedderId: string): EngramError {
  if (isEngramError(e)) return e;
  return new EmbeddingError(`embedder "${embedderId}" failed: ${e instanceof Error ? e.message : String(e)}`, {
    cause: e,
  });
}

/**
 * The switch, in one small transaction: when nothing was logged since `checked` (the run's
 * last look at the log found every live memory staged), the memories without a vector
 * row get theirs (`loose`, few), `record` records the new embedder and the index
 * snapshot is dropped; readers take the staged vectors from then on (current-vector.ts).
 * False, changing nothing, when the log moved.
 *
 * A memory that lost its staged vector without a log entry (a run whose lease was taken
 * over cannot write, so nothing known does this) would show up in the new model's index
 * as a memory without a vector of its model, which the index's repair embeds again.
 */
async function switchOver(
  core: EngineStore,
  target: string,
  checked: LogHead,
  loose: Map<string, StagedVector>,
  lease: ReembedLease,
  record: () => Promise<void>,
): Promise<boolean> {
  const { db } = core;
  try {
    return await db.transaction('rw', [db.memories, db.vectors, db.meta, db.changes], async () => {
      core.assertOpen();
      await lease.check();
      const head = await readLogHead(db);
      if (head.last !== checked.last || head.generation !== checked.generation) return false;
      await db.vectors.bulkPut([...loose].map(([id, staged]) => ({ id, vector: staged.vector, embedderId: target })));
      await record();
      await deleteSnapshot(db, INDEX_SNAPSHOT_KEY);
      return true;
    });
  } catch (e) {
    throw storeError(e, 'switching the store to the re-embedded vectors');
  }
}

/**
 * After the switch: rewrites every vector row that still holds a staged vector of the
 * new model as that vector alone (what readers take it as, current-vector.ts), and drops
 * what else is staged beside a vector of the new model, REWRITE_PAGE rows per transaction.
 * Each transaction reads the rows it writes (a memory deleted or forgotten meanwhile is
 * not written back), and spans only `vectors`, which a search reads only for a memory its
 * index lacks: searches do not wait for it. Stops quietly when the store is closed or the lease was lost (another run
 * stages now): the store is correct without the rewrite, only larger.
 */
async function rewrite(core: EngineStore, target: string, lease: ReembedLease): Promise<void> {
  const { db } = core;
  let after: string | undefined;
  try {
    for (;;) {
      if (core.closed || lease.lost) return;
      const more = await db.transaction('rw', db.vectors, async () => {
        core.assertOpen();
        const rows = await (after === undefined ? db.vectors.orderBy(':id') : db.vectors.where(':id').above(after))
          .limit(REWRITE_PAGE)
          .toArray();
        if (rows.length === 0) return false;
        after = rows[rows.length - 1]!.id;
        await db.vectors.bulkPut(rewrittenRows(rows, target));
        return rows.length === REWRITE_PAGE;
      });
      if (!more) return;
    }
  } catch {
    // Closed or a failing store: the switched store stays correct as it is.
  }
}

/**
 * The rows of `rows` the rewrite puts back: one holding a staged vector of `target` as that vector
 * alone, one holding a vector of `target` without what is staged beside it; the others are left alone.
 */
function rewrittenRows(rows: readonly VectorRow[], target: string): VectorRow[] {
  const puts: VectorRow[] = [];
  for (const { id, embedderId, vector, staged } of rows) {
    if (staged?.embedderId === target) puts.push({ id, vector: staged.vector, embedderId: target });
    else if (staged !== undefined && embedderId === target) puts.push({ id, vector, embedderId });
  }
  return puts;
}
