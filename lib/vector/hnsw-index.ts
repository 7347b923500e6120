/**
 * HnswIndex: approximate cosine search with hnswlib compiled to WebAssembly
 * (hnswlib-wasm, loaded lazily by `hnswlib-runtime.ts` inside
 * `create()`/`restore()`, so importing it has no side effects).
 *
 * hnswlib works on integer labels. Each id added gets a fresh label (a counter
 * saved in snapshots); `remove()` marks the label deleted, and the next new
 * vector takes over a deleted slot (this build enables hnswlib's
 * replace-deleted mode), so removals do not leak capacity. Re-adding a removed
 * id is an ordinary add under a new label. Every input is checked in JS first,
 * because hnswlib's own errors surface as opaque `WebAssembly.Exception`s;
 * those that still occur are translated to IndexError.
 */
import { ClosedError, IndexError, ValidationError } from '../errors.js';
import { inspectHnswlibFile } from './hnswlib-file.js';
import { REGULAR_FILE_MODE } from './idbfs-memory.js';
import { loadRuntime, MOUNT, removeFile, syncFromStore, wasmCall, type NativeHnsw, type Runtime } from './hnswlib-runtime.js';
import { decodeSnapshot, encodeSnapshot } from './snapshot-format.js';
import { assertId, assertIntegerIn, assertK, assertVector, normalizeInto } from './vector-checks.js';
import type { VectorHit, VectorIndex } from './vector-index.js';

/**
 * Options of {@link HnswIndex.create}.
 * @example
 * await HnswIndex.create({ dimensions: 384, capacity: 50_000, m: 16, efConstruction: 100, efSearch: 64 });
 */
export interface HnswIndexOptions {
  /**
   * Vector length.
   * @example { dimensions: 384 }
   */
  dimensions: number;
  /**
   * Slots allocated up front; doubles whenever an add would not fit.
   * @default 1024
   * @example { capacity: 100_000 }
   */
  capacity?: number;
  /**
   * Graph degree (links per node per layer; layer 0 gets 2·m).
   * @default 16
   * @example { m: 32 }
   */
  m?: number;
  /**
   * Candidate list size while inserting: higher builds slower and better. At
   * 100, recall@10 at efSearch 64 is 0.9995 on 100k × 384-d (bench/vector),
   * and an insert costs about half of what it does at 200.
   * @default 100
   * @example { efConstruction: 200 }
   */
  efConstruction?: number;
  /**
   * Candidate list size while searching (raised to k when k is larger): higher is slower and more accurate.
   * @default 64
   * @example { efSearch: 128 }
   */
  efSearch?: number;
}

/** hnswlib's level generator seed: fixed so that builds are reproducible. */
const RANDOM_SEED = 100;
/** Items per addPoints() call. The binding rebuilds a used-label cache (O(size)) after every call, so batches keep bulk loads linear. */
const ADD_BATCH = 1000;
/**
 * Share of hnswlib-wasm's 2 GiB heap that the level-0 arrays of one index may
 * take: the heap is one per realm, shared by every index, and a resize needs
 * the old and the new array at once.
 */
const HEAP_BUDGET = 1.5 * 2 ** 30;
/** Bytes hnswlib allocates per slot at level 0: links (2m + count), vector, label. */
const slotBytes = (dimensions: number, m: number): number => (2 * m + 1) * 4 + dimensions * 4 + 4;

/**
 * Approximate nearest neighbours (HNSW) by cosine similarity.
 * @example
 * const index = await HnswIndex.create({ dimensions: 384 });
 * index.addMany(rows.map((r) => ({ id: r.id, vector: r.vector })));
 * const hits = index.search(queryVector, 10);
 * const bytes = index.snapshot();
 * const again = await HnswIndex.restore(bytes);
 */
export class HnswIndex implements VectorIndex {
  readonly kind = 'hnsw' as const;
  readonly dimensions: number;
  readonly #runtime: Runtime;
  readonly #native: NativeHnsw;
  readonly #m: number;
  readonly #efConstruction: number;
  #efSearch: number;
  #capacity: number;
  /** Live ids and their labels, both ways. */
  readonly #labelOf = new Map<string, number>();
  readonly #idOf = new Map<number, string>();
  /** Slots hnswlib holds, live and deleted (its element count). */
  #slots: number;
  /** Deleted slots waiting to be taken over by new vectors. */
  #tombstones: number;
  #nextLabel: number;
  #disposed = false;
  #broken: unknown = undefined;

  private constructor(
    runtime: Runtime,
    native: NativeHnsw,
    params: { dimensions: number; m: number; efConstruction: number; efSearch: number; capacity: number; nextLabel: number },
    live: readonly { id: string; label: number }[],
    tombstones: number,
  ) {
    this.#runtime = runtime;
    this.#native = native;
    this.dimensions = params.dimensions;
    this.#m = params.m;
    this.#efConstruction = params.efConstruction;
    this.#efSearch = params.efSearch;
    this.#capacity = params.capacity;
    this.#nextLabel = params.nextLabel;
    for (const { id, label } of live) {
      this.#labelOf.set(id, label);
      this.#idOf.set(label, id);
    }
    this.#tombstones = tombstones;
    this.#slots = live.length + tombstones;
  }

  /**
   * Loads hnswlib-wasm (first call only) and creates an empty index.
   * @example
   * const index = await HnswIndex.create({ dimensions: 100, efSearch: 128 });
   */
  static async create(options: HnswIndexOptions): Promise<HnswIndex> {
    const dimensions = options.dimensions;
    const capacity = options.capacity ?? 1024;
    const m = options.m ?? 16;
    const efConstruction = options.efConstruction ?? 100;
    const efSearch = options.efSearch ?? 64;
    assertIntegerIn(dimensions, 'dimensions', 1, 65_536);
    assertIntegerIn(capacity, 'capacity', 1, 2 ** 31);
    assertIntegerIn(m, 'm', 2, 1024);
    assertIntegerIn(efConstruction, 'efConstruction', 1, 1_000_000);
    assertIntegerIn(efSearch, 'efSearch', 1, 1_000_000);
    if (capacity * slotBytes(dimensions, m) > HEAP_BUDGET) {
      throw new ValidationError('capacity', `${capacity} slots of ${dimensions} dimensions do not fit in hnswlib-wasm's 2 GiB heap`);
    }
    const runtime = await loadRuntime();
    const native = wasmCall(runtime, 'create index', () => new runtime.lib.HierarchicalNSW('cosine', dimensions, ''));
    try {
      wasmCall(runtime, 'initIndex', () => {
        native.initIndex(capacity, m, efConstruction, RANDOM_SEED);
        native.setEfSearch(efSearch);
      });
    } catch (e) {
      native.delete();
      throw e;
    }
    return new HnswIndex(runtime, native, { dimensions, m, efConstruction, efSearch, capacity, nextLabel: 0 }, [], 0);
  }

  /** Starts loading the WASM runtime without waiting for it; a failure surfaces on the next create() or restore(). */
  static preload(): void {
    loadRuntime().catch(() => undefined);
  }

  /**
   * Opens an index from {@link HnswIndex.snapshot} bytes without rebuilding the
   * graph. Corrupt or truncated bytes throw IndexError before reaching WASM.
   * @example
   * const index = await HnswIndex.restore(bytesFromStore);
   */
  static async restore(bytes: Uint8Array): Promise<HnswIndex> {
    const parts = decodeSnapshot(bytes, 'hnsw');
    const [m, efConstruction, efSearch, capacity, nextLabel] = parts.params;
    if (parts.params.length !== 5 || m === undefined || efConstruction === undefined || efSearch === undefined || capacity === undefined || nextLabel === undefined) {
      throw new IndexError('hnsw snapshot parameters are missing');
    }
    const file = inspectHnswlibFile(parts.payload, parts.dimensions);
    const fileLabels = new Set(file.labels);
    const consistent =
      parts.ids.length === file.count - file.deleted.size &&
      capacity * slotBytes(parts.dimensions, m) <= HEAP_BUDGET &&
      file.m === m &&
      file.efConstruction === efConstruction &&
      capacity >= file.count &&
      efSearch >= 1 &&
      file.labels.every((label) => label < nextLabel) &&
      parts.ids.every((entry) => entry.id !== '' && fileLabels.has(entry.label) && !file.deleted.has(entry.label)) &&
      new Set(parts.ids.map((entry) => entry.id)).size === parts.ids.length &&
      new Set(parts.ids.map((entry) => entry.label)).size === parts.ids.length;
    if (!consistent) throw new IndexError('hnsw snapshot id table does not match its index data');

    const runtime = await loadRuntime();
    const native = wasmCall(runtime, 'create index', () => new runtime.lib.HierarchicalNSW('cosine', parts.dimensions, ''));
    const name = `engram-${runtime.nextFile++}`;
    try {
      runtime.files.records.set(`${MOUNT}/${name}`, { timestamp: new Date(), mode: REGULAR_FILE_MODE, contents: parts.payload });
      syncFromStore(runtime);
      wasmCall(runtime, 'readIndex', () => {
        native.readIndex(name, capacity);
        native.setEfSearch(efSearch);
      });
    } catch (e) {
      native.delete();
      throw e;
    } finally {
      removeFile(runtime, name);
    }
    const params = { dimensions: parts.dimensions, m, efConstruction, efSearch, capacity, nextLabel };
    return new HnswIndex(runtime, native, params, parts.ids, file.deleted.size);
  }

  /**
   * Live (not deleted) vectors; 0 after dispose().
   * @example
   * if (index.size === 0) return [];
   */
  get size(): number {
    return this.#disposed ? 0 : this.#labelOf.size;
  }

  /**
   * Slots allocated in WASM memory (grows by doubling).
   * @example
   * console.log(`${index.size}/${index.capacity} slots used`);
   */
  get capacity(): number {
    return this.#capacity;
  }

  /**
   * Deleted slots hnswlib still holds; the next new vectors take them over.
   * @example
   * if (index.tombstones > index.size) rebuildLater();
   */
  get tombstones(): number {
    return this.#tombstones;
  }

  /**
   * Current search candidate list size.
   * @example
   * index.setEfSearch(index.efSearch * 2);
   */
  get efSearch(): number {
    return this.#efSearch;
  }

  /**
   * Sets the search candidate list size: higher is slower and more accurate.
   * @example
   * index.setEfSearch(128);
   */
  setEfSearch(ef: number): void {
    this.#usable();
    assertIntegerIn(ef, 'ef', 1, 1_000_000);
    this.#mutate('setEfSearch', () => {
      this.#native.setEfSearch(ef);
    });
    this.#efSearch = ef;
  }

  /**
   * Adds or replaces the vector for `id`.
   * @example
   * index.add('m1', embedding);
   */
  add(id: string, vector: Float32Array): void {
    this.#usable();
    assertId(id, 'id');
    assertVector(vector, this.dimensions, 'vector');
    // The binding refuses even an in-place update when every slot is used.
    this.#reserve(1);
    const existing = this.#labelOf.get(id);
    if (existing !== undefined) {
      // Same label, replaceDeleted off: hnswlib updates the vector and repairs its links.
      this.#mutate('addPoint', () => {
        this.#native.addPoint(vector, existing, false);
      });
      return;
    }
    const label = this.#nextLabel;
    this.#mutate('addPoint', () => {
      this.#native.addPoint(vector, label, true);
    });
    this.#track(id, label);
  }

  /**
   * Adds or replaces many vectors; all are validated first. New ids go to
   * hnswlib in batches, which is much faster than one add() each.
   * @example
   * index.addMany(rows.map((r) => ({ id: r.id, vector: r.vector })));
   */
  addMany(items: readonly { id: string; vector: Float32Array }[]): void {
    this.#usable();
    items.forEach((item, i) => {
      assertId(item.id, `items[${i}].id`);
      assertVector(item.vector, this.dimensions, `items[${i}].vector`);
    });
    const latest = new Map<string, Float32Array>();
    for (const item of items) latest.set(item.id, item.vector);
    const fresh: [string, Float32Array][] = [];
    for (const [id, vector] of latest) {
      if (this.#labelOf.has(id)) this.add(id, vector);
      else fresh.push([id, vector]);
    }
    this.#reserve(fresh.length);
    for (let start = 0; start < fresh.length; start += ADD_BATCH) {
      const batch = fresh.slice(start, start + ADD_BATCH);
      const first = this.#nextLabel;
      const labels = batch.map((_, i) => first + i);
      this.#mutate('addPoints', () => {
        this.#native.addPoints(
          batch.map(([, vector]) => vector),
          labels,
          true,
        );
      });
      batch.forEach(([id], i) => {
        this.#track(id, first + i);
      });
    }
  }

  /**
   * Marks `id` deleted; it no longer appears in results. Returns false when it was absent.
   * @example
   * index.remove('m1'); // true
   */
  remove(id: string): boolean {
    this.#usable();
    const label = this.#labelOf.get(id);
    if (label === undefined) return false;
    this.#mutate('markDelete', () => {
      this.#native.markDelete(label);
    });
    this.#labelOf.delete(id);
    this.#idOf.delete(label);
    this.#tombstones += 1;
    return true;
  }

  /**
   * True when `id` is live in the index.
   * @example
   * if (!index.has(id)) index.add(id, vector);
   */
  has(id: string): boolean {
    this.#usable();
    return this.#labelOf.has(id);
  }

  /**
   * Up to k hits, best first; k is clamped to the live count. `filter` runs
   * inside hnswlib's graph walk (as its label filter), which keeps exploring
   * until it has k allowed hits or has visited every node it can reach. If it
   * still comes back short (allowed nodes hnswlib cannot reach), the allowed ids
   * are enumerated from this index's own id table and scored exactly against
   * their stored vectors, so k filtered hits come back whenever k exist.
   * @example
   * index.search(query, 10, (id) => allowed.has(id));
   */
  search(vector: Float32Array, k: number, filter?: (id: string) => boolean): VectorHit[] {
    this.#usable();
    assertVector(vector, this.dimensions, 'vector');
    assertK(k);
    const want = Math.min(k, this.size);
    if (want === 0) return [];
    // A throwing filter must not unwind through WASM frames: remember the error, reject the rest, rethrow after.
    const failure: { error?: unknown; failed: boolean } = { failed: false };
    const idOf = this.#idOf;
    const allowed =
      filter === undefined
        ? undefined
        : (label: number): boolean => {
            const id = idOf.get(label);
            if (failure.failed || id === undefined) return false;
            try {
              return filter(id);
            } catch (e) {
              failure.failed = true;
              failure.error = e;
              return false;
            }
          };
    const result = wasmCall(this.#runtime, 'searchKnn', () => this.#native.searchKnn(vector, want, allowed));
    if (failure.failed) throw failure.error;
    if (result.neighbors.length < want && filter !== undefined) return this.#widerSearch(vector, want, filter);
    if (result.neighbors.length < want) return this.#exactSearch(vector, want, filter);
    const hits: VectorHit[] = [];
    result.neighbors.forEach((label, i) => {
      const id = idOf.get(label);
      if (id !== undefined) hits.push({ id, score: 1 - (result.distances[i] ?? 1) });
    });
    return hits;
  }

  /**
   * Cosine similarity of `vector` with the stored vectors of `ids` (those held),
   * read back from hnswlib: no graph walk.
   * @example
   * index.similarities(query, ['a', 'b']); // Map { 'a' => 0.93, 'b' => 0.41 }
   */
  similarities(vector: Float32Array, ids: Iterable<string>): Map<string, number> {
    this.#usable();
    assertVector(vector, this.dimensions, 'vector');
    const query = new Float32Array(this.dimensions);
    normalizeInto(vector, query, 0);
    const out = new Map<string, number>();
    for (const id of ids) {
      const label = this.#labelOf.get(id);
      if (label === undefined) continue;
      const stored = wasmCall(this.#runtime, 'getPoint', () => this.#native.getPoint(label));
      let score = 0;
      for (let i = 0; i < query.length; i++) score += query[i]! * (stored[i] ?? 0);
      out.set(id, score);
    }
    return out;
  }

  /**
   * Serialises the whole index (graph, vectors, ids, parameters) into one byte
   * array: the envelope of `snapshot-format.ts` around hnswlib's own index file.
   * @example
   * await store.put('index-snapshot', index.snapshot());
   */
  snapshot(): Uint8Array {
    this.#usable();
    const runtime = this.#runtime;
    const name = `engram-${runtime.nextFile++}`;
    let file: Uint8Array | undefined;
    try {
      wasmCall(runtime, 'writeIndex', () => this.#native.writeIndex(name));
      runtime.files.flush();
      file = runtime.files.records.get(`${MOUNT}/${name}`)?.contents;
    } finally {
      removeFile(runtime, name);
    }
    if (file === undefined) throw new IndexError('hnswlib-wasm did not hand over the index file');
    return encodeSnapshot({
      kind: 'hnsw',
      dimensions: this.dimensions,
      params: [this.#m, this.#efConstruction, this.#efSearch, this.#capacity, this.#nextLabel],
      ids: [...this.#labelOf].map(([id, label]) => ({ id, label, flags: 0 })),
      payload: file,
    });
  }

  /**
   * Frees the WASM memory of this index. Idempotent; later calls throw ClosedError.
   * @example
   * index.dispose();
   */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    try {
      this.#native.delete();
    } catch {
      // Already gone after a WASM fault: nothing left to free.
    }
  }

  #usable(): void {
    if (this.#disposed) throw new ClosedError('HnswIndex');
    if (this.#broken !== undefined) {
      throw new IndexError('HnswIndex is unusable after an earlier WASM failure; rebuild it', { cause: this.#broken });
    }
  }

  /** Runs a state-changing WASM call; if it fails the JS and WASM sides may disagree, so the index is retired. */
  #mutate(what: string, fn: () => void): void {
    try {
      wasmCall(this.#runtime, what, fn);
    } catch (e) {
      this.#broken = e;
      throw e;
    }
  }

  /** Records a new live id whose vector went in under `label` with replaceDeleted on. */
  #track(id: string, label: number): void {
    this.#labelOf.set(id, label);
    this.#idOf.set(label, id);
    this.#nextLabel = label + 1;
    if (this.#tombstones > 0) this.#tombstones -= 1;
    else this.#slots += 1;
  }

  /**
   * Grows capacity (doubling) so that `extra` more slots fit. The binding
   * checks `count + extra <= capacity` before it considers reusing deleted
   * slots, so tombstones do not count as free here.
   */
  #reserve(extra: number): void {
    const needed = this.#slots + extra;
    if (needed <= this.#capacity) return;
    const limit = Math.floor(HEAP_BUDGET / slotBytes(this.dimensions, this.#m));
    if (needed > limit) throw new IndexError(`${needed} vectors of ${this.dimensions} dimensions do not fit in hnswlib-wasm's 2 GiB heap`);
    let capacity = this.#capacity;
    while (capacity < needed) capacity *= 2;
    capacity = Math.min(capacity, limit);
    this.#mutate('resizeIndex', () => {
      this.#native.resizeIndex(capacity);
    });
    this.#capacity = capacity;
  }

  /** Exact scoring over every live id that passes `filter`, reading vectors back from hnswlib. */
  /**
   * A filtered walk that came back short (hnswlib's walk can stop early when the
   * allowed nodes are few near the query, e.g. one user's among many similar
   * memories of others): unfiltered searches for many more neighbours, filtered
   * here, widening while too few pass; the exact scan only when the widest
   * (a quarter of the index) is still short. Reading every allowed vector back
   * from WASM costs about 25 µs each (bench/memory-search, chat, scoped).
   */
  #widerSearch(vector: Float32Array, want: number, filter: (id: string) => boolean): VectorHit[] {
    const idOf = this.#idOf;
    for (let fetch = want * 16; fetch <= this.size / 4; fetch *= 8) {
      const result = wasmCall(this.#runtime, 'searchKnn', () => this.#native.searchKnn(vector, fetch, undefined));
      const hits: VectorHit[] = [];
      for (let i = 0; i < result.neighbors.length && hits.length < want; i++) {
        const id = idOf.get(result.neighbors[i]!);
        if (id !== undefined && filter(id)) hits.push({ id, score: 1 - (result.distances[i] ?? 1) });
      }
      if (hits.length >= want) return hits;
    }
    return this.#exactSearch(vector, want, filter);
  }

  #exactSearch(vector: Float32Array, k: number, filter?: (id: string) => boolean): VectorHit[] {
    const query = new Float32Array(this.dimensions);
    normalizeInto(vector, query, 0);
    const hits: VectorHit[] = [];
    this.#labelOf.forEach((label, id) => {
      if (filter !== undefined && !filter(id)) return;
      const stored = wasmCall(this.#runtime, 'getPoint', () => this.#native.getPoint(label));
      let score = 0;
      for (let i = 0; i < query.length; i++) score += query[i]! * (stored[i] ?? 0);
      hits.push({ id, score });
    });
    hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
    return hits.slice(0, k);
  }
}
