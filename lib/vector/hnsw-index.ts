/**
 * HnswIndex: approximate cosine search with hnswlib compiled to WebAssembly
 * with SIMD (engram's own build, `native/`, loaded lazily by
 * `hnswlib-runtime.ts` inside `create()`/`restore()`, so importing it has no
 * side effects).
 *
 * hnswlib works on integer labels. Each new vector gets a fresh label (a
 * counter saved in snapshots); `remove()` marks the label deleted, and the next
 * new vector takes over a deleted slot (this build enables hnswlib's
 * replace-deleted mode), so removals do not leak capacity. Re-adding a removed
 * id is an ordinary add under a new label.
 *
 * Identical vectors share one label (one graph node). Many copies of one
 * vector (the same text stored for many users, or texts the model embeds
 * alike) otherwise link only to each other, since each is the others' nearest
 * neighbour, and form islands the graph walk cannot leave: measured in
 * bench/memory-search, where 100k messages of words the offline model does not
 * know all embed to one vector, every search filtered to one user of ten
 * stayed in an island of 171 nodes and came back empty. A vector is found
 * again by a 32-bit hash of its values (kept in the snapshot's id table), then
 * compared with the stored vector, so a hash collision never joins two
 * different vectors.
 *
 * Every input is checked in JS first, so that hnswlib never sees bad input;
 * the errors it still reports are translated to IndexError.
 */
import { ClosedError, IndexError, ValidationError } from '../errors.js';
import { inspectHnswlibFile, type HnswlibFileInfo } from './hnswlib-file.js';
import { loadRuntime, NativeHnsw, wasmCall } from './hnswlib-runtime.js';
import { decodeSnapshot, encodeSnapshot, type DecodeOptions, type SnapshotParts } from './snapshot-format.js';
import { TopK } from './top-k.js';
import { assertId, assertIntegerIn, assertItems, assertK, assertVector, normalizeInto } from './vector-checks.js';
import type { VectorHit, VectorIndex } from './vector-index.js';

/** A vector addMany() adds under a label of its own, with its hash. */
interface FreshVector {
  id: string;
  vector: Float32Array;
  hash: number;
}

/** A copy, within one addMany() batch, of the vector `fresh[of]` new there: it joins that label once it has one. */
interface BatchCopy {
  id: string;
  of: number;
}

/** A search filter's throw, kept until the call into WASM has returned. */
interface FilterFailure {
  error?: unknown;
  failed: boolean;
}

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
/** Vectors per addPoints() call: each call copies its batch into WASM memory, so batches bound that copy. */
const ADD_BATCH = 1000;
/**
 * Share of the hnswlib module's 2 GiB heap that the level-0 arrays of one
 * index may take: the heap is one per realm, shared by every index, and a
 * resize needs the old and the new array at once.
 */
const HEAP_BUDGET = 1.5 * 2 ** 30;
/** Bytes hnswlib allocates per slot at level 0: links (2m + count), vector, label. */
/** Largest difference per normalised component between two copies of one vector (hnswlib normalises in float32, JS in float64). */
const SAME_VECTOR_TOLERANCE = 1e-6;
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
  readonly #native: NativeHnsw;
  readonly #m: number;
  readonly #efConstruction: number;
  #efSearch: number;
  #capacity: number;
  /** Each live id's label (ids with identical vectors share one). */
  readonly #labelOf = new Map<string, number>();
  /** Each live label's first id. */
  readonly #idOf = new Map<number, string>();
  /** Labels held by more than one id: all of their ids, the first included. */
  readonly #shared = new Map<number, Set<string>>();
  /** Vector hash → the live label holding that vector, and each label's hash (absent for labels restored from an older snapshot). */
  readonly #labelOfHash = new Map<number, number>();
  readonly #hashOf = new Map<number, number>();
  /** Slots hnswlib holds, live and deleted (its element count). */
  #slots: number;
  /** Deleted slots waiting to be taken over by new vectors. */
  #tombstones: number;
  #nextLabel: number;
  #disposed = false;
  #broken: unknown = undefined;
  /** Set while restoring when two ids of one label disagree on its vector hash (see #restoredWhole). */
  #disagrees = false;

  private constructor(
    native: NativeHnsw,
    params: {
      dimensions: number;
      m: number;
      efConstruction: number;
      efSearch: number;
      capacity: number;
      nextLabel: number;
    },
    live: readonly { id: string; label: number; flags: number }[],
    tombstones: number,
  ) {
    this.#native = native;
    this.dimensions = params.dimensions;
    this.#m = params.m;
    this.#efConstruction = params.efConstruction;
    this.#efSearch = params.efSearch;
    this.#capacity = params.capacity;
    this.#nextLabel = params.nextLabel;
    for (const { id, label, flags } of live) {
      if (!this.#idOf.has(label)) this.#record(id, label, flags);
      else if ((this.#hashOf.get(label) ?? 0) === flags) this.#join(id, label);
      else this.#disagrees = true;
    }
    this.#tombstones = tombstones;
    this.#slots = this.#idOf.size + tombstones;
  }

  /**
   * Loads the hnswlib module (first call only) and creates an empty index.
   * @example
   * const index = await HnswIndex.create({ dimensions: 100, efSearch: 128 });
   */
  static async create(options: HnswIndexOptions): Promise<HnswIndex> {
    const params = newIndexParams(options);
    const { m, efConstruction, efSearch, capacity } = params;
    const native = await nativeIndex(params.dimensions, 'initIndex', (made) => {
      made.init(capacity, m, efConstruction, RANDOM_SEED);
      made.setEfSearch(efSearch);
    });
    return new HnswIndex(native, { ...params, nextLabel: 0 }, [], 0);
  }

  /** Starts loading the WASM runtime without waiting for it; a failure surfaces on the next create() or restore(). */
  static preload(): void {
    loadRuntime().catch(() => undefined);
  }

  /**
   * Opens an index from {@link HnswIndex.snapshot} bytes without rebuilding the
   * graph. Corrupt or truncated bytes throw IndexError before reaching WASM
   * (with `checksum: false`, only a corrupt structure does; see DecodeOptions).
   * @example
   * const index = await HnswIndex.restore(bytesFromStore);
   */
  static async restore(bytes: Uint8Array, options: DecodeOptions = {}): Promise<HnswIndex> {
    const parts = decodeSnapshot(bytes, 'hnsw', options);
    const params = { dimensions: parts.dimensions, ...snapshotParams(parts.params) };
    const file = inspectHnswlibFile(parts.payload, parts.dimensions);
    if (!fileAgrees(parts, params, file)) throw new IndexError('hnsw snapshot id table does not match its index data');

    const native = await nativeIndex(parts.dimensions, 'readIndex', (made) => {
      made.readIndex(parts.payload, file.level0End, params.capacity);
      made.setEfSearch(params.efSearch);
    });
    const index = new HnswIndex(native, params, parts.ids, file.deleted.size);
    // Checked while the tables were built: every id once, the ids of one label agreeing on its vector hash, every live label held.
    if (!index.#restoredWhole(parts.ids.length, file.count - file.deleted.size)) {
      index.dispose();
      throw new IndexError('hnsw snapshot id table does not match its index data');
    }
    return index;
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
   * Adds or replaces the vector for `id`. An unchanged vector is left as it is;
   * a vector identical to one held joins its label.
   * @example
   * index.add('m1', embedding);
   */
  add(id: string, vector: Float32Array): void {
    this.#usable();
    assertId(id, 'id');
    assertVector(vector, this.dimensions, 'vector');
    this.#place(id, vector, vectorHash(vector));
  }

  /**
   * Adds or replaces many vectors; all are validated first. New vectors go to
   * hnswlib in batches, which is much faster than one add() each.
   * @example
   * index.addMany(rows.map((r) => ({ id: r.id, vector: r.vector })));
   */
  addMany(items: readonly { id: string; vector: Float32Array }[]): void {
    this.#usable();
    assertItems(items, this.dimensions);
    const latest = new Map<string, Float32Array>();
    for (const item of items) latest.set(item.id, item.vector);
    const { fresh, copies } = this.#placeKnown(latest);
    this.#insertFresh(fresh);
    for (const { id, of } of copies) this.#join(id, this.#labelOf.get(fresh[of]!.id)!);
  }

  /**
   * addMany()'s vectors of ids held and vectors held, placed (see #place, #join); the others are returned:
   * the vectors new to the index, and the copies within the batch of one of them.
   */
  #placeKnown(latest: ReadonlyMap<string, Float32Array>): { fresh: FreshVector[]; copies: BatchCopy[] } {
    const fresh: FreshVector[] = [];
    const copies: BatchCopy[] = [];
    const firstWithHash = new Map<number, number>();
    for (const [id, vector] of latest) {
      const hash = vectorHash(vector);
      if (this.#labelOf.has(id)) {
        this.#place(id, vector, hash);
        continue;
      }
      const twin = this.#twin(vector, hash);
      if (twin !== undefined) {
        this.#join(id, twin);
        continue;
      }
      const first = firstWithHash.get(hash);
      if (first !== undefined && sameValues(fresh[first]!.vector, vector)) {
        copies.push({ id, of: first });
        continue;
      }
      if (first === undefined) firstWithHash.set(hash, fresh.length);
      fresh.push({ id, vector, hash });
    }
    return { fresh, copies };
  }

  /** Adds vectors new to the index under labels of their own, ADD_BATCH per call into hnswlib. */
  #insertFresh(fresh: readonly FreshVector[]): void {
    this.#reserve(fresh.length);
    for (let start = 0; start < fresh.length; start += ADD_BATCH) {
      const batch = fresh.slice(start, start + ADD_BATCH);
      const first = this.#nextLabel;
      this.#mutate('addPoints', () => {
        this.#native.addPoints(
          batch.map((item) => item.vector),
          batch.map((_, i) => first + i),
          true,
        );
      });
      batch.forEach((item, i) => {
        this.#track(item.id, first + i, item.hash);
      });
    }
  }

  /**
   * Removes `id`; it no longer appears in results (its label is marked deleted
   * once no other id shares it). Returns false when it was absent.
   * @example
   * index.remove('m1'); // true
   */
  remove(id: string): boolean {
    this.#usable();
    const label = this.#labelOf.get(id);
    if (label === undefined) return false;
    const group = this.#shared.get(label);
    if (group === undefined) this.#deleteLabel(id, label);
    else this.#leaveGroup(id, label, group);
    return true;
  }

  /** remove() of an id sharing `label` with others (`group`): the label stays theirs. */
  #leaveGroup(id: string, label: number, group: Set<string>): void {
    group.delete(id);
    this.#labelOf.delete(id);
    if (this.#idOf.get(label) === id) this.#idOf.set(label, group.values().next().value!);
    if (group.size === 1) this.#shared.delete(label);
  }

  /** remove() of the only id of `label`: the label is marked deleted in hnswlib (a tombstone) and forgotten. */
  #deleteLabel(id: string, label: number): void {
    this.#mutate('markDelete', () => {
      this.#native.markDelete(label);
    });
    this.#labelOf.delete(id);
    this.#idOf.delete(label);
    const hash = this.#hashOf.get(label);
    if (hash !== undefined && this.#labelOfHash.get(hash) === label) this.#labelOfHash.delete(hash);
    this.#hashOf.delete(label);
    this.#tombstones += 1;
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
   * inside hnswlib's graph walk (as its label filter: a label shared by
   * identical vectors passes when any of its ids does), which keeps exploring
   * until it has k allowed hits or has visited every node it can reach. If it
   * still comes back short, see {@link HnswIndex.#widerSearch}.
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
    const failure: FilterFailure = { failed: false };
    const guarded = filter === undefined ? undefined : guardedFilter(filter, failure);
    const allowed = guarded === undefined ? undefined : (label: number): boolean => this.#some(label, guarded);
    const labels = Math.min(want, this.#idOf.size);
    const result = wasmCall('searchKnn', () => this.#native.searchKnn(vector, labels, allowed));
    if (failure.failed) throw failure.error;
    if (result.neighbors.length < labels && filter !== undefined) return this.#widerSearch(vector, want, filter);
    if (result.neighbors.length < labels) return this.#exactSearch(vector, want, filter);
    return this.#expand(result, want, filter);
  }

  /**
   * The k best of `ids` (those held), scored exactly against the vectors
   * hnswlib stores, in one call into WASM (its SIMD distance, no graph walk),
   * best first (ties by id). Scores are those {@link search} gives.
   * @example
   * index.searchAmong(query, 10, scopeIds);
   */
  searchAmong(vector: Float32Array, k: number, ids: Iterable<string>): VectorHit[] {
    this.#usable();
    assertVector(vector, this.dimensions, 'vector');
    assertK(k);
    const held: string[] = [];
    let labels = new Uint32Array(1024);
    for (const id of ids) {
      const label = this.#labelOf.get(id);
      if (label === undefined) continue;
      if (held.length === labels.length) {
        const grown = new Uint32Array(labels.length * 2);
        grown.set(labels);
        labels = grown;
      }
      labels[held.length] = label;
      held.push(id);
    }
    return this.#topOf(vector, k, held, labels);
  }

  /**
   * The k best of `scope`: the exact scan of its members while
   * {@link scopeScanWins} says it costs less than the walk, else the walk
   * filtered to the scope ({@link searchWalk}).
   * @example
   * index.searchIn(query, 40, scopeIds);
   */
  searchIn(vector: Float32Array, k: number, scope: ReadonlySet<string>): VectorHit[] {
    this.#usable();
    assertVector(vector, this.dimensions, 'vector');
    assertK(k);
    return scopeScanWins(scope.size, Math.max(this.#efSearch, k), this.size)
      ? this.searchAmong(vector, k, scope)
      : this.searchWalk(vector, k, scope);
  }

  /**
   * hnswlib's walk filtered to `scope` (approximate). Below BITMAP_WALK_SHARE
   * of the index the filter is a bitmap of the scope's labels in WASM memory:
   * hnswlib asks the filter for every candidate it considers, tens of thousands
   * in a walk over a small share of the index, and a call into JS for each cost
   * more than the walk's distances; above it, marking every member costs more
   * than the few calls. Short results widen as {@link search}'s do.
   * @example
   * index.searchWalk(query, 40, scopeIds);
   */
  searchWalk(vector: Float32Array, k: number, scope: ReadonlySet<string>): VectorHit[] {
    this.#usable();
    assertVector(vector, this.dimensions, 'vector');
    assertK(k);
    // A large share of the index: few candidates fail the filter, and asking JS for each costs
    // less than marking every member in a bitmap.
    if (scope.size >= BITMAP_WALK_SHARE * this.size) return this.search(vector, k, (id) => scope.has(id));
    const want = Math.min(k, this.size);
    if (want === 0) return [];
    const bitmap = new Uint32Array(Math.max(1, Math.ceil(this.#nextLabel / 32)));
    for (const id of scope) {
      const label = this.#labelOf.get(id);
      if (label !== undefined) bitmap[label >>> 5]! |= 1 << (label & 31);
    }
    const labels = Math.min(want, this.#idOf.size);
    const result = wasmCall('searchKnn', () => this.#native.searchAllowed(vector, labels, bitmap));
    const filter = (id: string): boolean => scope.has(id);
    if (result.neighbors.length < labels) return this.#widerSearch(vector, want, filter);
    return this.#expand(result, want, filter);
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
    const byLabel = new Map<number, number>();
    for (const id of ids) {
      const label = this.#labelOf.get(id);
      if (label === undefined) continue;
      let score = byLabel.get(label);
      if (score === undefined) {
        score = this.#score(query, label);
        byLabel.set(label, score);
      }
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
    const ids = [...this.#labelOf].map(([id, label]) => ({ id, label, flags: this.#hashOf.get(label) ?? 0 }));
    const params = [this.#m, this.#efConstruction, this.#efSearch, this.#capacity, this.#nextLabel];
    // The file is a view of WASM memory: encoded (copied) before it is freed.
    return this.#native.withIndexFile((payload) =>
      encodeSnapshot({ kind: 'hnsw', dimensions: this.dimensions, params, ids, payload }),
    );
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

  /** Whether the id table a restore built is whole: `ids` distinct ids, `liveLabels` labels, no disagreement. */
  #restoredWhole(ids: number, liveLabels: number): boolean {
    return !this.#disagrees && this.#labelOf.size === ids && this.#idOf.size === liveLabels;
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
      wasmCall(what, fn);
    } catch (e) {
      this.#broken = e;
      throw e;
    }
  }

  /** Records a new live id whose vector went in under a new `label` with replaceDeleted on. */
  #track(id: string, label: number, hash: number): void {
    this.#record(id, label, hash);
    this.#nextLabel = label + 1;
    if (this.#tombstones > 0) this.#tombstones -= 1;
    else this.#slots += 1;
  }

  /** Records `id` as the first id of `label`, whose vector has `hash` (0: not known). */
  #record(id: string, label: number, hash: number): void {
    this.#labelOf.set(id, label);
    this.#idOf.set(label, id);
    if (hash === 0) return;
    this.#hashOf.set(label, hash);
    if (!this.#labelOfHash.has(hash)) this.#labelOfHash.set(hash, label);
  }

  /** Adds `id` to the ids of `label`, which holds a vector identical to its own. */
  #join(id: string, label: number): void {
    this.#labelOf.set(id, label);
    let group = this.#shared.get(label);
    if (group === undefined) {
      group = new Set([this.#idOf.get(label)!]);
      this.#shared.set(label, group);
    }
    group.add(id);
  }

  /** add() of one validated vector: unchanged, joining an identical one, or under a label of its own. */
  #place(id: string, vector: Float32Array, hash: number): void {
    const existing = this.#labelOf.get(id);
    if (existing !== undefined) {
      const known = this.#hashOf.get(existing);
      if ((known === undefined || known === hash) && this.#holds(existing, vector)) {
        if (known === undefined) this.#record(this.#idOf.get(existing)!, existing, hash);
        return;
      }
      this.remove(id);
    }
    const twin = this.#twin(vector, hash);
    if (twin !== undefined) {
      this.#join(id, twin);
      return;
    }
    this.#reserve(1);
    const label = this.#nextLabel;
    this.#mutate('addPoint', () => {
      this.#native.addPoint(vector, label, true);
    });
    this.#track(id, label, hash);
  }

  /** The live label that holds exactly `vector`, if any (found by its hash, then compared). */
  #twin(vector: Float32Array, hash: number): number | undefined {
    const label = this.#labelOfHash.get(hash);
    return label !== undefined && this.#holds(label, vector) ? label : undefined;
  }

  /** Whether `label` stores `vector` (both normalised; hnswlib's float rounding aside). */
  #holds(label: number, vector: Float32Array): boolean {
    const query = new Float32Array(this.dimensions);
    normalizeInto(vector, query, 0);
    const stored = wasmCall('getPoint', () => this.#native.getPoint(label));
    for (let i = 0; i < query.length; i++)
      if (Math.abs(query[i]! - (stored[i] ?? Number.NaN)) > SAME_VECTOR_TOLERANCE) return false;
    return true;
  }

  /** Cosine similarity of a normalised query with the vector stored under `label`. */
  #score(query: Float32Array, label: number): number {
    const stored = wasmCall('getPoint', () => this.#native.getPoint(label));
    let score = 0;
    for (let i = 0; i < query.length; i++) score += query[i]! * (stored[i] ?? 0);
    return score;
  }

  /** Whether any id of `label` passes `filter`. */
  #some(label: number, filter: (id: string) => boolean): boolean {
    const group = this.#shared.get(label);
    if (group === undefined) {
      const id = this.#idOf.get(label);
      return id !== undefined && filter(id);
    }
    for (const id of group) if (filter(id)) return true;
    return false;
  }

  /** Hits from hnswlib's labels, best first: each label's ids (those that pass `filter`), up to `want`. */
  #expand(
    result: { neighbors: number[]; distances: number[] },
    want: number,
    filter?: (id: string) => boolean,
  ): VectorHit[] {
    const hits: VectorHit[] = [];
    for (let i = 0; i < result.neighbors.length && hits.length < want; i++) {
      const label = result.neighbors[i]!;
      const score = 1 - (result.distances[i] ?? 1);
      const group = this.#shared.get(label);
      if (group === undefined) {
        const id = this.#idOf.get(label);
        if (id !== undefined && (filter === undefined || filter(id))) hits.push({ id, score });
        continue;
      }
      for (const id of group) {
        if (hits.length >= want) break;
        if (filter === undefined || filter(id)) hits.push({ id, score });
      }
    }
    return hits;
  }

  /**
   * Grows capacity (doubling) so that `extra` more vectors fit. New vectors
   * take over deleted slots first (hnswlib's replace-deleted mode), so only
   * those beyond the tombstones need room.
   */
  #reserve(extra: number): void {
    const needed = this.#slots + Math.max(0, extra - this.#tombstones);
    if (needed <= this.#capacity) return;
    const limit = Math.floor(HEAP_BUDGET / slotBytes(this.dimensions, this.#m));
    if (needed > limit)
      throw new IndexError(
        `${needed} vectors of ${this.dimensions} dimensions do not fit in the hnswlib module's 2 GiB heap`,
      );
    let capacity = this.#capacity;
    while (capacity < needed) capacity *= 2;
    capacity = Math.min(capacity, limit);
    this.#mutate('resizeIndex', () => {
      this.#native.resizeIndex(capacity);
    });
    this.#capacity = capacity;
  }

  /**
   * A filtered walk that came back short (the allowed nodes hnswlib can reach
   * are too few, e.g. one user's among many similar memories of others):
   * unfiltered searches for many more neighbours, filtered here, widening while
   * too few pass; the exact scan only when the widest (a quarter of the index)
   * is still short (it visits every id to apply the filter, then scores the
   * allowed ones in one call into WASM).
   */
  #widerSearch(vector: Float32Array, want: number, filter: (id: string) => boolean): VectorHit[] {
    const labels = this.#idOf.size;
    for (let fetch = want * 16; fetch <= labels / 4; fetch *= 8) {
      const result = wasmCall('searchKnn', () => this.#native.searchKnn(vector, fetch, undefined));
      const hits = this.#expand(result, want, filter);
      if (hits.length >= want) return hits;
    }
    return this.#exactSearch(vector, want, filter);
  }

  /** Exact scoring over every live id that passes `filter`, in one call into WASM for all their labels. */
  #exactSearch(vector: Float32Array, k: number, filter?: (id: string) => boolean): VectorHit[] {
    const held: string[] = [];
    const labels = new Uint32Array(this.#labelOf.size);
    for (const [id, label] of this.#labelOf) {
      if (filter !== undefined && !filter(id)) continue;
      labels[held.length] = label;
      held.push(id);
    }
    return this.#topOf(vector, k, held, labels);
  }

  /** The k best of `ids`, whose labels are the first ids.length of `labels`, scored in WASM. */
  #topOf(vector: Float32Array, k: number, ids: readonly string[], labels: Uint32Array): VectorHit[] {
    const want = Math.min(k, ids.length);
    if (want === 0) return [];
    const distances = wasmCall('distances', () => this.#native.distances(vector, labels, ids.length));
    const top = new TopK(want, ids);
    for (let i = 0; i < ids.length; i++) {
      const d = distances[i]!;
      // Every label was looked up live just before: NaN would mean the two sides disagree, and such an id is left out.
      if (!Number.isNaN(d)) top.offer(1 - d, i);
    }
    return top.sorted();
  }
}

/**
 * How many times the cost of scoring one scope member in a scan a filtered
 * HNSW walk spends per node it visits (the distances to its neighbours, the
 * bitmap filter): measured in Chromium at 100k × 384-d by bench/memory-search
 * (its crossover table in bench/results/REPORT.md, memory-search).
 */
export const WALK_VISIT_COST = 5;

/**
 * Share of the index from which a walk filtered to a scope asks JS for each
 * candidate instead of a bitmap (see {@link HnswIndex.searchWalk}), measured with
 * WALK_VISIT_COST: above it, building the bitmap is the whole cost (the
 * measurements: bench/results/REPORT.md, "Measurements cited by the code").
 */
export const BITMAP_WALK_SHARE = 0.15;

/**
 * Whether an exact scan of a scope of `scope` members costs less than a walk
 * of an HNSW index of `size` vectors filtered to it, at candidate list size
 * `ef` (efSearch, at least k). The scan costs one SIMD distance per member; the
 * walk visits about ef·size/scope nodes before it holds ef allowed ones. So the
 * walk wins once scope² > WALK_VISIT_COST · ef · size: a share of the index that
 * shrinks as it grows. The scan is exact, the walk not (its recall is in the
 * same table).
 * @example
 * scopeScanWins(4000, 64, 100_000); // true
 */
export function scopeScanWins(scope: number, ef: number, size: number): boolean {
  return scope * scope <= WALK_VISIT_COST * ef * size;
}

/** The parameters of a new index: `options` with their defaults, each checked, and the capacity within the heap. */
function newIndexParams(options: HnswIndexOptions): {
  dimensions: number;
  m: number;
  efConstruction: number;
  efSearch: number;
  capacity: number;
} {
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
    throw new ValidationError(
      'capacity',
      `${capacity} slots of ${dimensions} dimensions do not fit in the hnswlib module's 2 GiB heap`,
    );
  }
  return { dimensions, m, efConstruction, efSearch, capacity };
}

/** The parameters a snapshot holds (m, efConstruction, efSearch, capacity, nextLabel); IndexError when any is missing. */
function snapshotParams(params: readonly number[]): {
  m: number;
  efConstruction: number;
  efSearch: number;
  capacity: number;
  nextLabel: number;
} {
  const [m, efConstruction, efSearch, capacity, nextLabel] = params;
  if (
    params.length !== 5 ||
    m === undefined ||
    efConstruction === undefined ||
    efSearch === undefined ||
    capacity === undefined ||
    nextLabel === undefined
  ) {
    throw new IndexError('hnsw snapshot parameters are missing');
  }
  return { m, efConstruction, efSearch, capacity, nextLabel };
}

/** Whether a snapshot's parameters and id table agree with the hnswlib file it holds (and fit in the heap). */
function fileAgrees(
  parts: SnapshotParts,
  params: { m: number; efConstruction: number; efSearch: number; capacity: number; nextLabel: number },
  file: HnswlibFileInfo,
): boolean {
  const { m, efConstruction, efSearch, capacity, nextLabel } = params;
  return (
    capacity * slotBytes(parts.dimensions, m) <= HEAP_BUDGET &&
    file.m === m &&
    file.efConstruction === efConstruction &&
    capacity >= file.count &&
    efSearch >= 1 &&
    file.maxLabel < nextLabel &&
    parts.ids.every((entry) => entry.id !== '' && file.labels.has(entry.label) && !file.deleted.has(entry.label))
  );
}

/** A native index of `dimensions`, set up by `setup` (the WASM call `what`); freed again when the setup fails. */
async function nativeIndex(dimensions: number, what: string, setup: (native: NativeHnsw) => void): Promise<NativeHnsw> {
  const native = new NativeHnsw(await loadRuntime(), dimensions);
  try {
    wasmCall(what, () => {
      setup(native);
    });
  } catch (e) {
    native.delete();
    throw e;
  }
  return native;
}

/**
 * `filter` made safe to call from inside WASM: its throw is kept in `failure` instead of unwinding
 * through WASM frames, and every later id is rejected; the caller rethrows it after the call.
 */
function guardedFilter(filter: (id: string) => boolean, failure: FilterFailure): (id: string) => boolean {
  return (id) => {
    if (failure.failed) return false;
    try {
      return filter(id);
    } catch (e) {
      failure.failed = true;
      failure.error = e;
      return false;
    }
  };
}

/** FNV-1a over a vector's float bits; never 0 (0 marks "no hash" in older snapshots). */
function vectorHash(vector: Float32Array): number {
  const words = new Uint32Array(vector.buffer, vector.byteOffset, vector.length);
  let hash = 0x811c9dc5;
  for (let i = 0; i < words.length; i++) hash = Math.imul(hash ^ words[i]!, 0x01000193);
  return hash >>> 0 || 1;
}

/** Same values, bit for bit (a batch's copies of one vector). */
function sameValues(a: Float32Array, b: Float32Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
