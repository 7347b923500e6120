/**
 * Re-embedding a store while it stays open. A run stages the new model's vector of
 * every live memory beside its current one (`VectorRow.staged`), so searches and
 * writes go on with the recorded model meanwhile; then one transaction checks that
 * every live memory holds a staged vector of the text it holds now and switches:
 * the staged vectors become the vectors and the recorded embedder changes (the
 * caller's `record`, inside that transaction), the index snapshot goes. At no moment
 * is the store half-done: before the switch it is all the old model's (plus staged
 * vectors nothing reads), after it all the new model's.
 *
 * A run stopped (its signal, a failing model, a closed tab) keeps what it staged; the
 * next run with the same model embeds only the rest. A memory written during the run
 * gets a new vector row without a staged vector (the write path rewrites the row), or
 * is deleted with its row: the change log names it, and it is staged again (or left
 * out) before the switch. Privacy follows from the same row: deleting or forgetting a
 * memory deletes its staged vector with its vector.
 *
 * One run per store at a time, across instances: a run holds the store's lease
 * (reembed-lease.ts) from its start to its end, and a second run is refused with
 * ReembedBusyError meanwhile.
 */
import { EmbeddingError, isEngramError, throwIfAborted } from '../../errors.js';
import { validateEmbeddings, type Embedder } from '../../embed/embedder.js';
import { isLive, type MemoryRow, type StagedVector, type VectorRow } from '../../store/rows.js';
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
}

/** A live memory whose new vector is still to be made. */
interface Unstaged {
  id: string;
  text: string;
}

/** The switch found a live memory without a staged vector of its current text: its transaction rolls back. */
class NotStaged extends Error {}

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
  const { db } = core;
  const target = embedder.id;
  /** Live memories without a vector row: their new vectors wait here for the switch. */
  const loose = new Map<string, StagedVector>();
  const lease = await ReembedLease.acquire(core, target);
  let checked: LogHead;
  let unregister: () => void = () => undefined;
  try {
    checked = await readLogHead(db);
    // This instance's compaction keeps the log entries the run has not checked yet.
    unregister = core.addLogReader(() => checked.last);
    let todo = await unstaged(core, target, await db.memories.toCollection().primaryKeys(), loose);
    let total = todo.live;
    let done = total - todo.ids.length;
    let embedded = 0;
    let wholeNext = false;
    options.onProgress?.({ phase: 'reembed', done, total });
    for (;;) {
      for (let i = 0; i < todo.ids.length; i += REEMBED_BATCH) {
        throwIfAborted(options.signal);
        // Its engram closing stops the run (the store closes once close() has snapshotted).
        core.assertOpen();
        const batch = todo.ids.slice(i, i + REEMBED_BATCH);
        await stage(core, embedder, batch, loose, lease, options.signal);
        embedded += batch.length;
        done = Math.min(total, done + batch.length);
        options.onProgress?.({ phase: 'reembed', done, total });
      }
      throwIfAborted(options.signal);
      // What was written meanwhile: the memories the log names since the last check, or every
      // memory again when the store was replaced or its log compacted past that check.
      const head = await readLogHead(db);
      const whole = wholeNext || head.generation !== checked.generation || head.floor > checked.last;
      wholeNext = false;
      const ids = whole ? await db.memories.toCollection().primaryKeys() : await changedSince(core, checked.last);
      checked = head;
      todo = await unstaged(core, target, ids, loose);
      if (whole) total = todo.live;
      if (todo.ids.length > 0) {
        total += whole ? 0 : todo.ids.length;
        continue;
      }
      const switched = await switchOver(core, target, checked, loose, lease, options.record);
      if (typeof switched === 'number') return { total: switched, embedded, switchSeq: checked.last };
      // A write landed in between (the log moved), or a row lost its staged vector without one
      // (another re-embed in another tab): look again, the whole store in the second case.
      wholeNext = switched === 'unstaged';
    }
  } finally {
    unregister();
    await lease.release();
  }
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

/** Of the memories `ids`, the live ones still without the new model's vector, and how many are live. */
async function unstaged(
  core: EngineStore,
  target: string,
  ids: readonly string[],
  loose: Map<string, StagedVector>,
): Promise<{ ids: Unstaged[]; live: number }> {
  const out: Unstaged[] = [];
  let live = 0;
  for (let i = 0; i < ids.length; i += PAGE) {
    const page = ids.slice(i, i + PAGE);
    const [rows, vectors] = await Promise.all([core.db.memories.bulkGet(page), core.db.vectors.bulkGet(page)]);
    const now = core.now();
    rows.forEach((row, j) => {
      if (!isLive(row, now)) {
        loose.delete(page[j]!);
        return;
      }
      live++;
      if (!hasNewVector(row, vectors[j], target, loose)) out.push({ id: row.id, text: row.text });
    });
  }
  return { ids: out, live };
}

/**
 * Embeds `batch` and stages each vector beside the memory's current one, in one
 * transaction that first checks the memory still holds the text embedded (a write
 * in between leaves it to the next look at the log).
 */
async function stage(
  core: EngineStore,
  embedder: Embedder,
  batch: readonly Unstaged[],
  loose: Map<string, StagedVector>,
  lease: ReembedLease,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { db } = core;
  const profile = retrievalProfile(embedder.id);
  const texts = batch.map((t) => textToEmbed(profile, 'passage', core.analyzer.normalize(t.text)));
  let vectors: unknown;
  try {
    // An embedder that ignores the signal still cannot hold the run past an abort.
    vectors = await untilAborted(embedder.embed(texts, signal === undefined ? {} : { signal }), signal);
  } catch (e) {
    if (isEngramError(e)) throw e;
    throw new EmbeddingError(`embedder "${embedder.id}" failed: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
  validateEmbeddings(texts, vectors, embedder.dimensions);
  const made = vectors;
  try {
    await db.transaction('rw', [db.memories, db.vectors, db.meta], async () => {
      core.assertOpen();
      await lease.check();
      const ids = batch.map((t) => t.id);
      const [rows, current] = await Promise.all([db.memories.bulkGet(ids), db.vectors.bulkGet(ids)]);
      const now = core.now();
      const puts: VectorRow[] = [];
      batch.forEach((t, j) => {
        const row = rows[j];
        const vector = current[j];
        if (!isLive(row, now) || row.text !== t.text || vector?.embedderId === embedder.id) return;
        const staged: StagedVector = { vector: made[j]!, embedderId: embedder.id, textHash: contentHash(t.text) };
        if (vector === undefined) loose.set(t.id, staged);
        else puts.push({ id: vector.id, vector: vector.vector, embedderId: vector.embedderId, staged });
      });
      await db.vectors.bulkPut(puts);
    });
  } catch (e) {
    throw storeError(e, 're-embedding');
  }
}

/**
 * The switch, in one transaction: when nothing was logged since `checked` and every live
 * memory holds a staged vector of its current text (or already the new model's), each
 * becomes the memory's vector, `record` records the new embedder and the index snapshot
 * is dropped. Otherwise nothing changes: 'moved' when the log moved, 'unstaged' when a
 * row lacks its staged vector.
 */
async function switchOver(
  core: EngineStore,
  target: string,
  checked: LogHead,
  loose: Map<string, StagedVector>,
  lease: ReembedLease,
  record: () => Promise<void>,
): Promise<number | 'moved' | 'unstaged'> {
  const { db } = core;
  let total = 0;
  try {
    const outcome = await db.transaction('rw', [db.memories, db.vectors, db.meta, db.changes], async () => {
      core.assertOpen();
      await lease.check();
      const head = await readLogHead(db);
      if (head.last !== checked.last || head.generation !== checked.generation) return 'moved' as const;
      const now = core.now();
      let after: string | undefined;
      for (;;) {
        const rows = await (after === undefined ? db.memories.orderBy(':id') : db.memories.where(':id').above(after))
          .limit(PAGE)
          .toArray();
        if (rows.length === 0) break;
        after = rows[rows.length - 1]!.id;
        const live = rows.filter((r) => isLive(r, now));
        const vectors = await db.vectors.bulkGet(live.map((r) => r.id));
        const puts: VectorRow[] = [];
        live.forEach((row, i) => {
          const vector = vectors[i];
          if (!hasNewVector(row, vector, target, loose)) throw new NotStaged();
          if (vector?.embedderId === target) {
            if (vector.staged !== undefined) puts.push({ id: row.id, vector: vector.vector, embedderId: target });
            return;
          }
          const staged = (vector?.staged ?? loose.get(row.id))!;
          puts.push({ id: row.id, vector: staged.vector, embedderId: target });
        });
        await db.vectors.bulkPut(puts);
        total += live.length;
      }
      await record();
      await deleteSnapshot(db, INDEX_SNAPSHOT_KEY);
      return 'done' as const;
    });
    return outcome === 'done' ? total : outcome;
  } catch (e) {
    if (e instanceof NotStaged) return 'unstaged';
    throw storeError(e, 'switching the store to the re-embedded vectors');
  }
}
