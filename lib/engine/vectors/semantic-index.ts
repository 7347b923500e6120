/**
 * Semantic memory's moving parts: the embedder (loaded lazily, recorded in the
 * store with its dimension) and the vector state. A store written with one
 * embedder refuses another with DimensionMismatchError unless re-embedding is
 * asked for, which re-embeds every live memory and rebuilds the index.
 */
import { DimensionMismatchError, EmbeddingError, isEngramError, throwIfAborted } from '../../errors.js';
import { CachedEmbedder } from '../../embed/cached-embedder.js';
import { validateEmbeddings, type Embedder } from '../../embed/embedder.js';
import { isLive, type VectorRow } from '../../store/rows.js';
import type { EngramDb } from '../../store/schema.js';
import { storeError } from '../../store/store-error.js';
import { deleteSnapshot } from '../../store/snapshot-chunks.js';
import { retrievalProfile, textToEmbed, type EmbeddingRole } from '../../search/retrieval-profile.js';
import { untilAborted } from '../../util/abort.js';
import type { EngineStore } from '../engine-store.js';
import { VectorState, type LongWorkOptions } from './vector-state.js';

/** The embedder a store was written with. */
export interface EmbedderRecord {
  id: string;
  dimensions: number;
}

const EMBEDDER_KEY = 'embedder';
const REEMBED_BATCH = 64;

/** The record's id and dimension when `value` is a well-formed embedder record. */
function embedderRecordOf(value: unknown): EmbedderRecord | undefined {
  const record = value as Partial<EmbedderRecord> | null;
  if (
    typeof record === 'object' &&
    record !== null &&
    typeof record.id === 'string' &&
    typeof record.dimensions === 'number' &&
    Number.isInteger(record.dimensions) &&
    record.dimensions > 0
  ) {
    return { id: record.id, dimensions: record.dimensions };
  }
  return undefined;
}

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
  readonly #source: EmbedderSource;
  readonly #reembed: LongWorkOptions | undefined;
  #ready: Promise<{ embedder: Embedder; state: VectorState }> | undefined;

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
      if (this.#reembed === undefined) {
        throw new DimensionMismatchError(
          recorded.dimensions,
          embedder.dimensions,
          `the store was embedded with "${recorded.id}" (${recorded.dimensions}-d); this engram uses "${embedder.id}" (${embedder.dimensions}-d). Open with { reembed: true } to re-embed every memory`,
        );
      }
      // Both listeners hear the re-embed (open()'s onProgress and reembed's own); the re-embed's signal first.
      const reembed = this.#reembed;
      const signal = reembed.signal ?? options.signal;
      await reembedAll(this.#core, embedder, {
        ...(signal === undefined ? {} : { signal }),
        onProgress: (p) => {
          reembed.onProgress?.(p);
          if (options.onProgress !== reembed.onProgress) options.onProgress?.(p);
        },
      });
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
   * expanded) and marked for `role` as the embedder's retrieval profile says
   * (e5's "query: " / "passage: "), and checks the embedder's answer (count,
   * length, finite, unit norm).
   */
  async embed(
    texts: readonly string[],
    signal?: AbortSignal,
    role: EmbeddingRole = 'passage',
  ): Promise<{ vectors: Float32Array[]; embedder: Embedder }> {
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
      if (isEngramError(e)) throw e;
      throw new EmbeddingError(`embedder "${embedder.id}" failed: ${e instanceof Error ? e.message : String(e)}`, {
        cause: e,
      });
    }
    validateEmbeddings(texts, vectors, embedder.dimensions);
    return { vectors, embedder };
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

/**
 * Re-embeds every live memory with `embedder`. All or nothing when it stops: on an
 * abort or a failure the vectors this run replaced are put back (the store then holds
 * the recorded embedder's vectors, searchable as before, its index snapshot still
 * valid) and the error is rethrown. Only a run killed mid-way (a closed tab) leaves
 * new vectors behind, and the next re-embed keeps them: vectors already made by
 * `embedder` are not embedded again.
 */
async function reembedAll(core: EngineStore, embedder: Embedder, options: LongWorkOptions): Promise<void> {
  const { db } = core;
  const rows = (await db.memories.toArray()).filter((r) => isLive(r, core.now()));
  const existing = await db.vectors.bulkGet(rows.map((r) => r.id));
  const todo = rows.flatMap((r, i) => {
    const before = existing[i];
    return before?.embedderId === embedder.id ? [] : [{ row: r, before }];
  });
  const profile = retrievalProfile(embedder.id);
  let done = rows.length - todo.length;
  options.onProgress?.({ phase: 'reembed', done, total: rows.length });
  let replaced = 0;
  try {
    for (let i = 0; i < todo.length; i += REEMBED_BATCH) {
      throwIfAborted(options.signal);
      const batch = todo.slice(i, i + REEMBED_BATCH);
      const texts = batch.map((t) => textToEmbed(profile, 'passage', core.analyzer.normalize(t.row.text)));
      const vectors = await untilAborted(
        embedder.embed(texts, options.signal === undefined ? {} : { signal: options.signal }),
        options.signal,
      );
      validateEmbeddings(texts, vectors, embedder.dimensions);
      const out: VectorRow[] = batch.map((t, j) => ({ id: t.row.id, vector: vectors[j]!, embedderId: embedder.id }));
      // Counted before the write: a put that lands after an abort is still put back.
      replaced = i + batch.length;
      try {
        await db.vectors.bulkPut(out);
      } catch (e) {
        throw storeError(e, 're-embedding');
      }
      done += batch.length;
      options.onProgress?.({ phase: 'reembed', done, total: rows.length });
    }
  } catch (e) {
    await putBack(db, embedder.id, todo.slice(0, replaced));
    throw e;
  }
  // The old snapshot indexes old vectors; drop it so the index is rebuilt from the new ones.
  await deleteSnapshot(db, 'indexSnapshot');
}

/**
 * Puts back the vectors a stopped re-embed replaced, in one transaction; a vector
 * written since by someone else (no longer `newId`'s) stays.
 */
async function putBack(
  db: EngramDb,
  newId: string,
  replaced: readonly { row: { id: string }; before: VectorRow | undefined }[],
): Promise<void> {
  if (replaced.length === 0) return;
  try {
    await db.transaction('rw', db.vectors, async () => {
      const now = await db.vectors.bulkGet(replaced.map((r) => r.row.id));
      const restore: VectorRow[] = [];
      const remove: string[] = [];
      replaced.forEach((r, i) => {
        if (now[i]?.embedderId !== newId) return;
        if (r.before === undefined) remove.push(r.row.id);
        else restore.push(r.before);
      });
      await db.vectors.bulkPut(restore);
      await db.vectors.bulkDelete(remove);
    });
  } catch (e) {
    throw storeError(e, 'putting back the vectors of a stopped re-embed');
  }
}
