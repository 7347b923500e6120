/**
 * Semantic memory's moving parts: the embedder (loaded lazily, recorded in the
 * store with its dimension) and the vector state. A store written with one
 * embedder refuses another with DimensionMismatchError unless re-embedding is
 * asked for, which re-embeds every live memory and rebuilds the index.
 */
import { DimensionMismatchError, EmbeddingError, isEngramError, throwIfAborted } from '../../errors.js';
import { CachedEmbedder } from '../../embed/cached-embedder.js';
import { validateEmbeddings, type Embedder } from '../../embed/embedder.js';
import type { VectorRow } from '../../store/rows.js';
import { storeError } from '../../store/write.js';
import { deleteSnapshot } from '../../store/snapshot-chunks.js';
import { untilAborted } from '../../util/abort.js';
import type { EngineStore } from '../engine-store.js';
import { VectorState, isLive, type LongWorkOptions } from './vector-state.js';

/** The embedder a store was written with. */
export interface EmbedderRecord {
  id: string;
  dimensions: number;
}

const EMBEDDER_KEY = 'embedder';
const REEMBED_BATCH = 64;
/**
 * Longest expected embedding (ms) for which add() starts its write before the
 * vectors are there: the transaction then holds the store about as long as its
 * own writes take (bench/ingest: 64 texts of the offline model, about 10 ms).
 */
const QUICK_EMBED_MS = 40;

/** Where the embedder comes from: an instance, or a factory called on first use. */
export type EmbedderSource = Embedder | (() => Promise<Embedder>);

/** Embedder plus vector index, made ready on first use. */
export class SemanticIndex {
  readonly #core: EngineStore;
  readonly #source: EmbedderSource;
  readonly #reembed: LongWorkOptions | undefined;
  #ready: Promise<{ embedder: Embedder; state: VectorState }> | undefined;
  /** Recent embedding time per text the model embedded (ms, moving average; cached texts left out), undefined before the first. */
  #msPerText: number | undefined;

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
    const value = row.value as Partial<EmbedderRecord> | null;
    if (
      typeof value === 'object' &&
      value !== null &&
      typeof value.id === 'string' &&
      typeof value.dimensions === 'number' &&
      Number.isInteger(value.dimensions) &&
      value.dimensions > 0
    ) {
      return { id: value.id, dimensions: value.dimensions };
    }
    core.reportDamaged({ table: 'meta', key: EMBEDDER_KEY, reason: 'not an embedder record' });
    return undefined;
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
      if (this.#reembed === undefined) {
        throw new DimensionMismatchError(
          recorded.dimensions,
          embedder.dimensions,
          `the store was embedded with "${recorded.id}" (${recorded.dimensions}-d); this engram uses "${embedder.id}" (${embedder.dimensions}-d). Open with { reembed: true } to re-embed every memory`,
        );
      }
      await reembedAll(this.#core, embedder, { ...this.#reembed, ...options });
    }
    if (recorded === undefined || recorded.id !== embedder.id || recorded.dimensions !== embedder.dimensions) {
      await this.#core.db.meta.put({
        key: EMBEDDER_KEY,
        value: { id: embedder.id, dimensions: embedder.dimensions } satisfies EmbedderRecord,
      });
    }
    const state = await VectorState.load(this.#core, embedder.id, embedder.dimensions, options);
    return { embedder, state };
  }

  /**
   * Embeds texts, as the store's analyzer normalizes them (contractions
   * expanded), and checks the embedder's answer (count, length, finite, unit norm).
   */
  async embed(
    texts: readonly string[],
    signal?: AbortSignal,
  ): Promise<{ vectors: Float32Array[]; embedder: Embedder }> {
    const { embedder } = await untilAborted(this.ready(), signal);
    let vectors: unknown;
    const started = performance.now();
    const missesBefore = embedder instanceof CachedEmbedder ? embedder.stats.misses : 0;
    try {
      // An embedder that ignores the signal still cannot hold the call past an abort.
      vectors = await untilAborted(
        embedder.embed(
          texts.map((t) => this.#core.analyzer.normalize(t)),
          signal === undefined ? {} : { signal },
        ),
        signal,
      );
    } catch (e) {
      if (isEngramError(e)) throw e;
      throw new EmbeddingError(`embedder "${embedder.id}" failed: ${e instanceof Error ? e.message : String(e)}`, {
        cause: e,
      });
    }
    validateEmbeddings(texts, vectors, embedder.dimensions);
    // The model's own speed: cached texts tell nothing of it (calls in flight together share their counts).
    const embedded = embedder instanceof CachedEmbedder ? embedder.stats.misses - missesBefore : texts.length;
    if (embedded > 0) {
      const ms = (performance.now() - started) / embedded;
      this.#msPerText = this.#msPerText === undefined ? ms : 0.7 * this.#msPerText + 0.3 * ms;
    }
    return { vectors, embedder };
  }

  /**
   * Whether embedding `count` texts is expected to take about as long as
   * writing them or less, by the recent embeddings (false before the first).
   */
  embedsQuickly(count: number): boolean {
    return this.#msPerText !== undefined && this.#msPerText * count <= QUICK_EMBED_MS;
  }

  /** Snapshots the index if it was loaded, then frees it and the embedder. */
  async close(): Promise<void> {
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

/** Re-embeds every live memory with `embedder`, resumable: vectors already made by it are kept. */
async function reembedAll(core: EngineStore, embedder: Embedder, options: LongWorkOptions): Promise<void> {
  const { db } = core;
  const rows = (await db.memories.toArray()).filter((r) => isLive(r, core.now()));
  const existing = await db.vectors.bulkGet(rows.map((r) => r.id));
  const todo = rows.filter((_, i) => existing[i]?.embedderId !== embedder.id);
  let done = rows.length - todo.length;
  options.onProgress?.({ phase: 'reembed', done, total: rows.length });
  for (let i = 0; i < todo.length; i += REEMBED_BATCH) {
    throwIfAborted(options.signal);
    const batch = todo.slice(i, i + REEMBED_BATCH);
    const texts = batch.map((r) => core.analyzer.normalize(r.text));
    const vectors = await untilAborted(
      embedder.embed(texts, options.signal === undefined ? {} : { signal: options.signal }),
      options.signal,
    );
    validateEmbeddings(texts, vectors, embedder.dimensions);
    const out: VectorRow[] = batch.map((r, j) => ({ id: r.id, vector: vectors[j]!, embedderId: embedder.id }));
    try {
      await db.vectors.bulkPut(out);
    } catch (e) {
      throw storeError(e, 're-embedding');
    }
    done += batch.length;
    options.onProgress?.({ phase: 'reembed', done, total: rows.length });
  }
  // The old snapshot indexes old vectors; drop it so the index is rebuilt from the new ones.
  await deleteSnapshot(db, 'indexSnapshot');
}
