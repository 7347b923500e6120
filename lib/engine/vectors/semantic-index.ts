/**
 * Semantic memory's moving parts: the embedder (loaded lazily, recorded in the
 * store with its dimension) and the vector state. A store written with one
 * embedder refuses another with DimensionMismatchError unless re-embedding is
 * asked for: `reembed()` on the open store (searches and writes go on meanwhile,
 * see reembed.ts), or open()'s `reembed`, which runs the same re-embed before the
 * index loads.
 */
import { ClosedError, DimensionMismatchError, ValidationError } from '../../errors.js';
import { CachedEmbedder } from '../../embed/cached-embedder.js';
import { validateEmbeddings, type Embedder } from '../../embed/embedder.js';
import { isLive, type MemoryRow, type VectorRow } from '../../store/rows.js';
import type { EngramDb } from '../../store/schema.js';
import { storeError } from '../../store/store-error.js';
import { vectorOfModel } from '../../store/current-vector.js';
import { retrievalProfile, textToEmbed, type EmbeddingRole } from '../../search/retrieval-profile.js';
import { untilAborted } from '../../util/abort.js';
import { EMBEDDER_KEY, embedderRecordOf, type EmbedderRecord } from '../../store/embedder-record.js';
import type { EngineStore } from '../engine-store.js';
import { asEmbeddingError, reembedStore, type ReembedReport } from './reembed.js';
import { VectorState, type LongWorkOptions } from './vector-state.js';

export type { EmbedderRecord };

/** Memories a repair embeds per call. */
const REPAIR_BATCH = 64;
/**
 * How long the index and embedder a re-embed replaced stay usable: a search that took them just
 * before the swap finishes on them instead of meeting a disposed index (ClosedError).
 */
const RETIRE_MS = 10_000;

/**
 * The embedder recorded in an open database, read without loading anything else;
 * undefined when none is recorded or the record is damaged (open() reports that one).
 */
export async function storedEmbedderRecord(db: EngramDb): Promise<EmbedderRecord | undefined> {
  try {
    return embedderRecordOf((await db.meta.get(EMBEDDER_KEY))?.value);
  } catch (e) {
    throw storeError(e, 'reading the embedder record');
  }
}

/** Where the embedder comes from: an instance, or a factory called on first use. */
export type EmbedderSource = Embedder | (() => Promise<Embedder>);

/** Embedder plus vector index, made ready on first use. */
export class SemanticIndex {
  readonly #core: EngineStore;
  #source: EmbedderSource;
  readonly #reembed: LongWorkOptions | undefined;
  #ready: Promise<{ embedder: Embedder; state: VectorState }> | undefined;
  /** A reembed() under way. */
  #reembedding = false;
  /** While a re-embed switches the store and loads the new index: passage embeddings wait for it. */
  #switching: Promise<void> | undefined;
  /** Indexes and embedders replaced by a re-embed, freed after RETIRE_MS or by close(). */
  readonly #retired = new Set<{ timer: ReturnType<typeof setTimeout>; free: () => Promise<void> }>();
  /** Live memories found with another model's vector (or none), waiting for {@link #repair}. */
  readonly #stale = new Set<string>();
  #repairing: Promise<void> | undefined;

  constructor(core: EngineStore, source: EmbedderSource, reembed: LongWorkOptions | undefined) {
    this.#core = core;
    this.#source = source;
    this.#reembed = reembed;
  }

  /**
   * The recorded embedder of the store, if any memory was ever embedded. A
   * damaged record is reported and read as none (the next load records this
   * engram's embedder; vectors of another embedder are then left out of the index).
   */
  static async recorded(core: EngineStore): Promise<EmbedderRecord | undefined> {
    const row = await core.db.meta.get(EMBEDDER_KEY);
    if (row === undefined) return undefined;
    const record = embedderRecordOf(row.value);
    if (record === undefined)
      core.reportDamaged({ table: 'meta', key: EMBEDDER_KEY, reason: 'not an embedder record' });
    return record;
  }

  /** Loads the embedder and the index (once); checks the embedder against the store. */
  ready(options: LongWorkOptions = {}): Promise<{ embedder: Embedder; state: VectorState }> {
    this.#ready ??= this.#load(options).catch((e: unknown) => {
      this.#ready = undefined;
      throw e;
    });
    return this.#ready;
  }

  /** True once ready() has succeeded or is under way. */
  get started(): boolean {
    return this.#ready !== undefined;
  }

  async #load(options: LongWorkOptions): Promise<{ embedder: Embedder; state: VectorState }> {
    const inner = typeof this.#source === 'function' ? await this.#source() : this.#source;
    // Queries and re-added texts repeat: the same text is never embedded twice.
    const embedder = new CachedEmbedder(inner);
    this.#core.assertOpen();
    const recorded = await SemanticIndex.recorded(this.#core);
    if (recorded !== undefined && (recorded.id !== embedder.id || recorded.dimensions !== embedder.dimensions)) {
      if (this.#reembed === undefined) throw modelMismatch(recorded, embedder);
      await this.#reembedOnOpen(embedder, this.#reembed, options);
    } else if (recorded === undefined) {
      await recordEmbedder(this.#core.db, embedder);
    }
    const state = await VectorState.load(this.#core, embedder.id, embedder.dimensions, options);
    this.#watchStale(state);
    return { embedder, state };
  }

  /** open()'s `reembed` (its options `reembed`): the store is re-embedded with `embedder` before the index loads. */
  async #reembedOnOpen(embedder: Embedder, reembed: LongWorkOptions, options: LongWorkOptions): Promise<void> {
    // Both listeners hear the re-embed (open()'s onProgress and reembed's own); the re-embed's signal first.
    const signal = reembed.signal ?? options.signal;
    await reembedStore(this.#core, embedder, {
      ...(signal === undefined ? {} : { signal }),
      onProgress: (p) => {
        reembed.onProgress?.(p);
        if (options.onProgress !== reembed.onProgress) options.onProgress?.(p);
      },
      record: () => recordEmbedder(this.#core.db, embedder),
    });
  }

  /** Memories `state` meets without a vector of its model are embedded again (see #repair). */
  #watchStale(state: VectorState): void {
    state.onStale = (id) => {
      this.#noteStale(id);
    };
  }

  /**
   * Re-embeds every live memory with the embedder of `source` while the store stays
   * open (see reembed.ts), then switches to it: the store's recorded embedder, its
   * vectors, this index and the embedder of later searches and writes. Until the
   * switch, searches answer from the current model's index and writes carry on (each
   * written memory is embedded by the new model too before the switch). An embedder
   * handed in stays the caller's; one made by a factory is this engram's from the switch
   * on (disposed by close()), and is disposed when the run stops.
   */
  async reembed(source: EmbedderSource, options: LongWorkOptions = {}): Promise<ReembedReport> {
    if (this.#reembedding) throw new ValidationError('reembed', 'a re-embed of this store is already under way');
    this.#reembedding = true;
    try {
      return await this.#reembedWith(source, options);
    } finally {
      this.#reembedding = false;
    }
  }

  async #reembedWith(source: EmbedderSource, options: LongWorkOptions): Promise<ReembedReport> {
    const core = this.#core;
    const { signal } = options;
    if (!this.started && (await SemanticIndex.recorded(core)) === undefined) return this.#adoptUnused(source, options);
    const current = await untilAborted(this.ready(), signal);
    const embedder = new CachedEmbedder(await embedderOf(source, signal));
    const ours = typeof source === 'function';
    if (embedder.id === current.embedder.id && embedder.dimensions === current.embedder.dimensions)
      return this.#unchanged(embedder, ours);
    let opened: () => void = () => undefined;
    /** Set once the switch committed: from then on a failure leaves the new model in place. */
    const run = { switched: false };
    try {
      return await reembedStore(core, embedder, {
        ...options,
        record: async () => {
          // Passage embeddings wait from the switch until the new index is in place (see embed()).
          this.#switching ??= new Promise<void>((resolve) => (opened = resolve));
          // The old index sees this record before the new one replaces it: this instance's own switch.
          current.state.expectRecorded(embedder.id);
          await recordEmbedder(core.db, embedder);
        },
        // The new index goes in place while the run rewrites the rows (readers resolve them meanwhile).
        afterSwitch: async (report) => {
          run.switched = true;
          try {
            await this.#adoptSwitched(source, embedder, current, report, options);
          } finally {
            this.#endSwitching(opened);
          }
        },
      });
    } catch (e) {
      if (run.switched) throw e;
      current.state.expectRecorded(undefined);
      this.#endSwitching(opened);
      if (ours) await embedder.dispose();
      throw e;
    }
  }

  /** A re-embed with the model in use: nothing to do but free a model made for it; the report counts the live memories. */
  async #unchanged(embedder: CachedEmbedder, ours: boolean): Promise<ReembedReport> {
    const core = this.#core;
    if (ours) await embedder.dispose();
    const total = await core.db.memories.filter((m) => isLive(m, core.now())).count();
    return { total, embedded: 0, switchSeq: 0 };
  }

  /** The switch is over (the new index in place, or the run failed): passage embeddings waiting for it (`opened`) go on. */
  #endSwitching(opened: () => void): void {
    opened();
    this.#switching = undefined;
  }

  /** Nothing was ever embedded: the new model simply becomes this engram's (loaded on first use). */
  async #adoptUnused(source: EmbedderSource, options: LongWorkOptions): Promise<ReembedReport> {
    const previous = this.#source;
    this.#source = source;
    try {
      await untilAborted(this.ready(options), options.signal);
    } catch (e) {
      this.#source = previous;
      throw e;
    }
    return { total: 0, embedded: 0, switchSeq: 0 };
  }

  /**
   * The store is switched to `embedder`: loads its index whatever the signal says now (the run is
   * done), makes it this engram's and retires `current`; on a failure the next use loads the store's
   * new model from `source`.
   */
  async #adoptSwitched(
    source: EmbedderSource,
    embedder: CachedEmbedder,
    current: { embedder: Embedder; state: VectorState },
    report: ReembedReport,
    options: LongWorkOptions,
  ): Promise<void> {
    const core = this.#core;
    const ours = typeof source === 'function';
    try {
      const { onProgress } = options;
      const state = await VectorState.load(core, embedder.id, embedder.dimensions, onProgress ? { onProgress } : {});
      if (core.closed) {
        // close() came during the load: it freed what it found; this is freed here.
        state.dispose();
        if (ours) await embedder.dispose();
        throw new ClosedError();
      }
      this.#adopt({ embedder, state }, source, current);
      // Writes embedded by the old model before the switch and committed after it are logged past it.
      await state.recheckSince(report.switchSeq);
    } catch (e) {
      this.#ready = undefined;
      this.#source = source;
      this.#retire(current, true);
      throw e;
    }
  }

  /** Makes the switched store's index and embedder (`next`, from `source`) this engram's, and retires `current`. */
  #adopt(
    next: { embedder: Embedder; state: VectorState },
    source: EmbedderSource,
    current: { embedder: Embedder; state: VectorState },
  ): void {
    this.#watchStale(next.state);
    this.#ready = Promise.resolve(next);
    const previous = this.#source;
    this.#source = source;
    this.#retire(current, typeof previous === 'function');
  }

  /** Frees an index (and the embedder, when `dispose`) a re-embed replaced, after RETIRE_MS. */
  #retire(old: { embedder: Embedder; state: VectorState }, dispose: boolean): void {
    old.state.retire();
    const entry = {
      timer: setTimeout(() => {
        this.#retired.delete(entry);
        entry.free().catch(() => undefined);
      }, RETIRE_MS),
      free: async () => {
        old.state.dispose();
        if (dispose) await old.embedder.dispose();
      },
    };
    this.#retired.add(entry);
  }

  /** A live memory the index met without a vector of its model: embedded again soon. */
  #noteStale(id: string): void {
    this.#stale.add(id);
    this.#repairing ??= this.#repair().finally(() => {
      this.#repairing = undefined;
    });
  }

  /**
   * Gives the memories noted stale a vector of the current model (a write of another
   * tab still on the old model, or one embedded by it just before a switch), each only
   * when it still holds the text embedded and no vector of this model.
   */
  async #repair(): Promise<void> {
    await Promise.resolve();
    while (this.#stale.size > 0 && !this.#core.closed) {
      const ids = this.#takeStale();
      try {
        const { embedder, state } = await this.ready();
        const { db } = this.#core;
        // Only the store's recorded model repairs: a tab still on the old one leaves the store alone.
        if ((await storedEmbedderRecord(db))?.id !== embedder.id) {
          this.#stale.clear();
          return;
        }
        const rows = await db.memories.bulkGet(ids);
        const now = this.#core.now();
        const live = rows.filter((r) => isLive(r, now));
        if (live.length === 0) continue;
        const { vectors } = await this.embed(live.map((r) => r.text));
        await db.transaction('rw', [db.memories, db.vectors, db.meta], () =>
          storeRepairs(this.#core, embedder.id, live, vectors),
        );
        await state.recheck(live.map((r) => r.id));
      } catch {
        // Closed, or the model failed: the memory stays findable by keyword; the next sighting tries again.
        return;
      }
    }
  }

  /** The next memories noted stale, at most REPAIR_BATCH, taken out of the set. */
  #takeStale(): string[] {
    const ids = [...this.#stale].slice(0, REPAIR_BATCH);
    for (const id of ids) this.#stale.delete(id);
    return ids;
  }

  /**
   * The vectors of memories about to be written (see {@link embed}), or undefined once this
   * instance learned that another one switched the store to another model (EmbedderChangedError
   * for searches): the memories are then written without a vector, and an instance on the
   * store's model embeds them when it meets them (its repair). A wrong-model vector would only
   * be embedded again there.
   */
  async embedForWrite(
    texts: readonly string[],
    signal?: AbortSignal,
  ): Promise<{ vectors: Float32Array[]; embedderId: string } | undefined> {
    const { state } = await untilAborted(this.ready(), signal);
    if (state.superseded !== undefined) return undefined;
    const { vectors, embedder } = await this.embed(texts, signal, 'passage');
    return { vectors, embedderId: embedder.id };
  }

  /**
   * Embeds texts, as the store's analyzer normalizes them (contractions
   * expanded) and marked for `role` as the embedder's retrieval profile says
   * (e5's "query: " / "passage: "), and checks the embedder's answer (count,
   * length, finite, unit norm).
   */
  async embed(
    texts: readonly string[],
    signal?: AbortSignal,
    role: EmbeddingRole = 'passage',
  ): Promise<{ vectors: Float32Array[]; embedder: Embedder }> {
    // A memory's vector is made by the model the store is switching to, not the one it leaves.
    if (role === 'passage' && this.#switching !== undefined) await untilAborted(this.#switching, signal);
    const { embedder } = await untilAborted(this.ready(), signal);
    const profile = retrievalProfile(embedder.id);
    let vectors: unknown;
    try {
      // An embedder that ignores the signal still cannot hold the call past an abort.
      vectors = await untilAborted(
        embedder.embed(
          texts.map((t) => textToEmbed(profile, role, this.#core.analyzer.normalize(t))),
          signal === undefined ? {} : { signal },
        ),
        signal,
      );
    } catch (e) {
      throw asEmbeddingError(e, embedder.id);
    }
    validateEmbeddings(texts, vectors, embedder.dimensions);
    return { vectors, embedder };
  }

  /** Snapshots the index if it was loaded, then frees it and the embedder (and what a re-embed replaced). */
  async close(): Promise<void> {
    for (const entry of this.#retired) {
      clearTimeout(entry.timer);
      await entry.free().catch(() => undefined);
    }
    this.#retired.clear();
    await this.#repairing;
    if (this.#ready === undefined) return;
    const ready = await this.#ready.catch(() => undefined);
    if (ready === undefined) return;
    try {
      await ready.state.catchUp();
      await ready.state.snapshot();
    } finally {
      ready.state.dispose();
      // An embedder the caller handed in stays the caller's; one engram made is freed here.
      if (typeof this.#source === 'function') await ready.embedder.dispose();
    }
  }
}

/** The error of an engram whose model is not the one the store was embedded with (and no re-embed was asked for). */
function modelMismatch(recorded: EmbedderRecord, embedder: Embedder): DimensionMismatchError {
  return new DimensionMismatchError(
    recorded.dimensions,
    embedder.dimensions,
    `the store was embedded with "${recorded.id}" (${recorded.dimensions}-d); this engram uses "${embedder.id}" (${embedder.dimensions}-d). Re-embed with engram.reembed(embedder), or open with { reembed: true }`,
  );
}

/**
 * Inside the repair's transaction: stores the new vectors (`vectors`, by `embedderId`) of the memories
 * `live`, each only while the store still records that model and the memory still holds the text
 * embedded and no vector of it.
 */
async function storeRepairs(
  core: EngineStore,
  embedderId: string,
  live: readonly MemoryRow[],
  vectors: readonly Float32Array[],
): Promise<void> {
  const { db } = core;
  // Checked again where it counts: a switch may have come in between.
  if (embedderRecordOf((await db.meta.get(EMBEDDER_KEY))?.value)?.id !== embedderId) return;
  const [rowsNow, current] = await Promise.all([
    db.memories.bulkGet(live.map((r) => r.id)),
    db.vectors.bulkGet(live.map((r) => r.id)),
  ]);
  const puts: VectorRow[] = [];
  live.forEach((r, i) => {
    const row = rowsNow[i];
    if (!isLive(row, core.now()) || row.text !== r.text) return;
    if (vectorOfModel(current[i], embedderId) !== undefined) return;
    puts.push({ id: r.id, vector: vectors[i]!, embedderId });
  });
  await db.vectors.bulkPut(puts);
}

/** Records `embedder` as the one the store's vectors are made with. */
async function recordEmbedder(db: EngramDb, embedder: Embedder): Promise<void> {
  try {
    await db.meta.put({
      key: EMBEDDER_KEY,
      value: { id: embedder.id, dimensions: embedder.dimensions } satisfies EmbedderRecord,
    });
  } catch (e) {
    throw storeError(e, 'recording the embedder');
  }
}

/**
 * The embedder a re-embed runs with: `source` itself, or what its factory makes. Stopped while
 * the model loads, what the factory makes once loaded is freed, never used.
 */
async function embedderOf(source: EmbedderSource, signal: AbortSignal | undefined): Promise<Embedder> {
  if (typeof source !== 'function') return source;
  const making = source();
  try {
    return await untilAborted(making, signal);
  } catch (e) {
    making.then((made) => made.dispose()).catch(() => undefined);
    throw e;
  }
}
