/**
 * lib/index owns nearest-neighbour search over vectors: the {@link VectorIndex}
 * seam, `HnswIndex` (hnswlib in WASM), `ExactIndex` (brute force, the ground truth),
 * their snapshots, and the rule for choosing between them.
 *
 * It must not import Dexie, the embedder or the engine: an index is a cache the
 * engine fills from the store and snapshots into it. Only `hnsw-index.ts`
 * touches hnswlib (through `hnswlib-runtime.ts`), and only lazily inside
 * `create()`/`restore()`.
 */

/**
 * One search result.
 * @example
 * const [best]: VectorHit[] = index.search(query, 1); // { id: 'm1', score: 0.93 }
 */
export interface VectorHit {
  id: string;
  /** Cosine similarity in [-1, 1]; higher is better. */
  score: number;
}

/**
 * Nearest-neighbour index over fixed-length vectors, by cosine similarity.
 * Implemented by `HnswIndex` (approximate, fast at scale) and `ExactIndex`
 * (exact, fast below the measured crossover size).
 * @example
 * const index: VectorIndex = ExactIndex.create({ dimensions: 3 });
 * index.add('a', new Float32Array([1, 0, 0]));
 * index.search(new Float32Array([1, 0.1, 0]), 5); // [{ id: 'a', score: 0.995… }]
 */
export interface VectorIndex {
  readonly kind: 'hnsw' | 'exact';
  readonly dimensions: number;
  /** Live (not deleted) vectors. */
  readonly size: number;
  /** Adds or replaces the vector for id. Throws DimensionMismatchError / ValidationError (NaN, non-finite) before touching anything. */
  add(id: string, vector: Float32Array): void;
  /** Adds or replaces many vectors; validates all of them before adding any. For duplicate ids the last one wins. */
  addMany(items: readonly { id: string; vector: Float32Array }[]): void;
  /** Removes id; false when it was not there. */
  remove(id: string): boolean;
  has(id: string): boolean;
  /** Up to k hits, best first; filter restricts which ids may be returned (applied inside the search, not after, so k filtered hits come back when they exist). */
  search(vector: Float32Array, k: number, filter?: (id: string) => boolean): VectorHit[];
  /**
   * Up to k of `ids` (those the index holds; others are left out), best first
   * (ties to the smaller id), each scored exactly against its stored vector:
   * a scan of a search scope from the index's own memory, costing time in
   * proportion to the ids given, not to the index (no graph walk, no store read).
   */
  searchAmong(vector: Float32Array, k: number, ids: Iterable<string>): VectorHit[];
  /**
   * Up to k of `scope`, best first: a search scope answered from the index's
   * memory by whichever costs this index less, an exact scan of the scope
   * ({@link searchAmong}) or a search filtered to it (HNSW's walk, approximate),
   * by the costs measured in bench/memory-search (bench/results/REPORT.md).
   */
  searchIn(vector: Float32Array, k: number, scope: ReadonlySet<string>): VectorHit[];
  /**
   * Cosine similarity of `vector` with the stored vector of each of `ids` the
   * index holds (ids it does not hold are left out): exact scores for a few
   * known candidates without reading their vectors back from the store.
   */
  similarities(vector: Float32Array, ids: Iterable<string>): Map<string, number>;
  /** Serialises the whole index (ids included) into bytes; restore with the class's static restore(). */
  snapshot(): Uint8Array;
  /** Frees memory (WASM included). Idempotent; other calls afterwards throw ClosedError. */
  dispose(): void;
}
