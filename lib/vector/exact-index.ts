/**
 * ExactIndex: brute-force cosine search. Unit-length copies of the vectors
 * live in one contiguous Float32Array (row i = slot i); removal moves the last
 * row into the hole, so rows stay dense and a search is one linear pass. It is
 * the ground truth for tests and benchmarks, and the faster choice below the
 * crossover size measured in `choose-index.ts`.
 */
import { ClosedError, IndexError } from '../errors.js';
import { decodeSnapshot, encodeSnapshot } from './snapshot-format.js';
import { TopK } from './top-k.js';
import { assertId, assertIntegerIn, assertItems, assertK, assertVector, normalizeInto } from './vector-checks.js';
import type { VectorHit, VectorIndex } from './vector-index.js';

/**
 * Options of {@link ExactIndex.create}.
 * @example
 * ExactIndex.create({ dimensions: 100, capacity: 500 });
 */
export interface ExactIndexOptions {
  /**
   * Vector length.
   * @example { dimensions: 384 }
   */
  dimensions: number;
  /**
   * Rows to allocate up front; grows by doubling.
   * @default 1024
   * @example { capacity: 5000 }
   */
  capacity?: number;
}

/**
 * Exact nearest neighbours by cosine similarity.
 * @example
 * const index = ExactIndex.create({ dimensions: 3 });
 * index.add('a', new Float32Array([1, 0, 0]));
 * index.add('b', new Float32Array([0, 1, 0]));
 * index.search(new Float32Array([1, 0.2, 0]), 1); // [{ id: 'a', score: 0.98… }]
 */
/** Dot product of `query` with the row of `rows` starting at `base` (four accumulators: the scan's inner loop). */
function dotAt(rows: Float32Array, base: number, query: Float32Array): number {
  const d = query.length;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < d; i += 4) {
    s0 += rows[base + i]! * query[i]!;
    s1 += rows[base + i + 1]! * query[i + 1]!;
    s2 += rows[base + i + 2]! * query[i + 2]!;
    s3 += rows[base + i + 3]! * query[i + 3]!;
  }
  for (; i < d; i++) s0 += rows[base + i]! * query[i]!;
  return s0 + s1 + s2 + s3;
}

export class ExactIndex implements VectorIndex {
  readonly kind = 'exact' as const;
  readonly dimensions: number;
  #rows: Float32Array;
  #ids: string[] = [];
  #slots = new Map<string, number>();
  #disposed = false;

  private constructor(dimensions: number, capacity: number) {
    this.dimensions = dimensions;
    this.#rows = new Float32Array(dimensions * capacity);
  }

  /**
   * Creates an empty index.
   * @example
   * const index = ExactIndex.create({ dimensions: 384 });
   */
  static create(options: ExactIndexOptions): ExactIndex {
    assertIntegerIn(options.dimensions, 'dimensions', 1, 65_536);
    const capacity = options.capacity ?? 1024;
    assertIntegerIn(capacity, 'capacity', 1, 2 ** 31);
    return new ExactIndex(options.dimensions, capacity);
  }

  /**
   * Rebuilds an index from {@link ExactIndex.snapshot} bytes. Throws IndexError when they are corrupt or truncated.
   * @example
   * const copy = ExactIndex.restore(index.snapshot());
   */
  static restore(bytes: Uint8Array): ExactIndex {
    const parts = decodeSnapshot(bytes, 'exact');
    const { dimensions, ids, payload } = parts;
    if (dimensions < 1 || payload.length !== ids.length * dimensions * 4) {
      throw new IndexError('exact snapshot payload does not match its id table');
    }
    const index = new ExactIndex(dimensions, Math.max(1, ids.length));
    // decodeSnapshot returns a 4-byte aligned payload, so it can be viewed as floats directly.
    index.#rows.set(new Float32Array(payload.buffer, payload.byteOffset, payload.length / 4));
    ids.forEach((entry, slot) => {
      if (entry.label !== slot || index.#slots.has(entry.id) || entry.id === '')
        throw new IndexError('exact snapshot id table is corrupt');
      index.#ids.push(entry.id);
      index.#slots.set(entry.id, slot);
    });
    return index;
  }

  /**
   * Vectors held; 0 after dispose().
   * @example
   * if (index.size >= EXACT_CROSSOVER) index = await promote(index);
   */
  get size(): number {
    return this.#ids.length;
  }

  /**
   * Adds or replaces the vector for `id`.
   * @example
   * index.add('m1', embedding);
   */
  add(id: string, vector: Float32Array): void {
    this.#open();
    assertId(id, 'id');
    assertVector(vector, this.dimensions, 'vector');
    this.#put(id, vector);
  }

  /**
   * Adds or replaces many vectors; all are validated before any is stored.
   * @example
   * index.addMany([{ id: 'a', vector: va }, { id: 'b', vector: vb }]);
   */
  addMany(items: readonly { id: string; vector: Float32Array }[]): void {
    this.#open();
    assertItems(items, this.dimensions);
    const fresh = items.filter((item) => !this.#slots.has(item.id)).length;
    this.#reserve(this.#ids.length + fresh);
    for (const item of items) this.#put(item.id, item.vector);
  }

  /**
   * Removes `id` (the last row moves into its place). Returns false when it was absent.
   * @example
   * index.remove('m1'); // true
   */
  remove(id: string): boolean {
    this.#open();
    const slot = this.#slots.get(id);
    if (slot === undefined) return false;
    const last = this.#ids.length - 1;
    if (slot !== last) {
      const movedId = this.#ids[last]!;
      const d = this.dimensions;
      this.#rows.copyWithin(slot * d, last * d, (last + 1) * d);
      this.#ids[slot] = movedId;
      this.#slots.set(movedId, slot);
    }
    this.#ids.pop();
    this.#slots.delete(id);
    return true;
  }

  /**
   * True when `id` is in the index.
   * @example
   * if (!index.has(id)) index.add(id, vector);
   */
  has(id: string): boolean {
    this.#open();
    return this.#slots.has(id);
  }

  /**
   * The k most similar vectors, best first (ties broken by id). `filter` is
   * checked before a row is scored, so k filtered hits come back whenever k exist.
   * @example
   * index.search(query, 10, (id) => id.startsWith('user-1:'));
   */
  search(vector: Float32Array, k: number, filter?: (id: string) => boolean): VectorHit[] {
    this.#open();
    assertVector(vector, this.dimensions, 'vector');
    assertK(k);
    const count = this.#ids.length;
    const want = Math.min(k, count);
    if (want === 0) return [];
    const d = this.dimensions;
    const query = new Float32Array(d);
    normalizeInto(vector, query, 0);
    const rows = this.#rows;
    const ids = this.#ids;
    const top = new TopK(want, ids);
    for (let slot = 0; slot < count; slot++) {
      if (filter !== undefined && !filter(ids[slot]!)) continue;
      top.offer(dotAt(rows, slot * d, query), slot);
    }
    return top.sorted();
  }

  /**
   * The k best of `ids` (those held), scored exactly, best first (ties by id): a scan of those rows only.
   * @example
   * index.searchAmong(query, 10, scopeIds);
   */
  searchAmong(vector: Float32Array, k: number, ids: Iterable<string>): VectorHit[] {
    this.#open();
    assertVector(vector, this.dimensions, 'vector');
    assertK(k);
    const d = this.dimensions;
    const query = new Float32Array(d);
    normalizeInto(vector, query, 0);
    const held: string[] = [];
    const slots: number[] = [];
    for (const id of ids) {
      const slot = this.#slots.get(id);
      if (slot === undefined) continue;
      held.push(id);
      slots.push(slot);
    }
    const want = Math.min(k, held.length);
    if (want === 0) return [];
    const top = new TopK(want, held);
    const rows = this.#rows;
    for (let i = 0; i < slots.length; i++) top.offer(dotAt(rows, slots[i]! * d, query), i);
    return top.sorted();
  }

  /**
   * The k best of `scope`: always the scan of its rows (a filtered search would scan every row).
   * @example
   * index.searchIn(query, 10, scopeIds);
   */
  searchIn(vector: Float32Array, k: number, scope: ReadonlySet<string>): VectorHit[] {
    return this.searchAmong(vector, k, scope);
  }

  /**
   * Cosine similarity of `vector` with the stored vectors of `ids` (those held).
   * @example
   * index.similarities(query, ['a', 'b']); // Map { 'a' => 0.93, 'b' => 0.41 }
   */
  similarities(vector: Float32Array, ids: Iterable<string>): Map<string, number> {
    this.#open();
    assertVector(vector, this.dimensions, 'vector');
    const query = new Float32Array(this.dimensions);
    normalizeInto(vector, query, 0);
    const out = new Map<string, number>();
    for (const id of ids) {
      const slot = this.#slots.get(id);
      if (slot !== undefined) out.set(id, dotAt(this.#rows, slot * this.dimensions, query));
    }
    return out;
  }

  /**
   * A copy of the stored (unit-length) vector of `id`, or undefined when absent.
   * @example
   * const v = exact.vectorOf('m1');
   */
  vectorOf(id: string): Float32Array | undefined {
    this.#open();
    const slot = this.#slots.get(id);
    if (slot === undefined) return undefined;
    const d = this.dimensions;
    return this.#rows.slice(slot * d, (slot + 1) * d);
  }

  /**
   * Every id with a copy of its stored (unit-length) vector, in storage order.
   * @example
   * for (const { id, vector } of exact.entries()) hnsw.add(id, vector);
   */
  *entries(): IterableIterator<{ id: string; vector: Float32Array }> {
    this.#open();
    const d = this.dimensions;
    for (let slot = 0; slot < this.#ids.length; slot++) {
      yield { id: this.#ids[slot]!, vector: this.#rows.slice(slot * d, (slot + 1) * d) };
    }
  }

  /**
   * Serialises ids and unit vectors; {@link ExactIndex.restore} reads it back.
   * @example
   * await store.put('index-snapshot', index.snapshot());
   */
  snapshot(): Uint8Array {
    this.#open();
    const used = this.#rows.subarray(0, this.#ids.length * this.dimensions);
    return encodeSnapshot({
      kind: 'exact',
      dimensions: this.dimensions,
      params: [],
      ids: this.#ids.map((id, label) => ({ id, label, flags: 0 })),
      payload: new Uint8Array(used.buffer, used.byteOffset, used.byteLength),
    });
  }

  /**
   * Releases the storage. Idempotent; later calls throw ClosedError.
   * @example
   * index.dispose();
   */
  dispose(): void {
    this.#disposed = true;
    this.#rows = new Float32Array(0);
    this.#ids = [];
    this.#slots.clear();
  }

  #open(): void {
    if (this.#disposed) throw new ClosedError('ExactIndex');
  }

  #put(id: string, vector: Float32Array): void {
    let slot = this.#slots.get(id);
    if (slot === undefined) {
      slot = this.#ids.length;
      this.#reserve(slot + 1);
      this.#ids.push(id);
      this.#slots.set(id, slot);
    }
    normalizeInto(vector, this.#rows, slot * this.dimensions);
  }

  #reserve(rows: number): void {
    const d = this.dimensions;
    if (rows * d <= this.#rows.length) return;
    let capacity = Math.max(1, this.#rows.length / d);
    while (capacity < rows) capacity *= 2;
    const grown = new Float32Array(capacity * d);
    grown.set(this.#rows);
    this.#rows = grown;
  }
}
