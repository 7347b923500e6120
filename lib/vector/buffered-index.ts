/**
 * A vector index with a small exact buffer in front of it. New vectors land in
 * the buffer (an ExactIndex: an insert is a copy, a search scans it) and move
 * into the main index (HNSW at scale, where an insert costs a graph search)
 * when the owner calls {@link BufferedIndex.merge}, in slices, off the writer's
 * path. Searches see both, so a vector is searchable the moment it is added.
 * An id lives in exactly one of the two.
 */
import { ValidationError } from '../errors.js';
import { ExactIndex } from './exact-index.js';
import { assertId, assertVector } from './vector-checks.js';
import type { VectorHit, VectorIndex } from './vector-index.js';

export class BufferedIndex implements VectorIndex {
  #main: VectorIndex;
  #buffer: ExactIndex;
  /**
   * The buffered ids, oldest first: they move into the main index in the order
   * they came. Merging in any other order can leave HNSW's graph poorly
   * connected: in bench/memory-search's chat corpus, merging from the buffer's
   * storage order (which a removal reshuffles) made every search filtered to one
   * user of ten come back short from the graph walk (100 of 100 queries; 0 of
   * 100 when merged oldest first).
   */
  readonly #order = new Set<string>();

  /**
   * @example
   * const index = new BufferedIndex(await createIndex({ dimensions: 384, expectedSize: 50_000 }));
   */
  constructor(main: VectorIndex, buffer: ExactIndex = ExactIndex.create({ dimensions: main.dimensions })) {
    this.#main = main;
    this.#buffer = buffer;
    for (const { id } of buffer.entries()) this.#order.add(id);
  }

  get kind(): 'hnsw' | 'exact' {
    return this.#main.kind;
  }

  get dimensions(): number {
    return this.#main.dimensions;
  }

  get size(): number {
    return this.#main.size + this.#buffer.size;
  }

  /** Vectors waiting in the buffer. */
  get pending(): number {
    return this.#buffer.size;
  }

  /** The index behind the buffer. */
  get main(): VectorIndex {
    return this.#main;
  }

  /** Puts `next` (holding the same vectors as the main index, e.g. a promoted copy) behind the buffer and frees the old one. */
  replaceMain(next: VectorIndex): void {
    if (next === this.#main) return;
    this.#main.dispose();
    this.#main = next;
  }

  /**
   * Puts `next`, an empty index (HNSW when an exact main index reaches the
   * crossover), behind the buffer, and makes the exact main index the buffer,
   * holding its vectors and then those waiting: every one reaches `next`
   * through {@link merge}, in slices like any new vector, instead of in one
   * long task (1000 HNSW inserts of 384-d take about a quarter of a second).
   * Searches see the same vectors throughout. Throws ValidationError (and
   * changes nothing) unless the main index is exact and `next` empty.
   */
  rebuildBehind(next: VectorIndex): void {
    const old = this.#main;
    if (!(old instanceof ExactIndex))
      throw new ValidationError('main', 'only an exact main index is rebuilt behind the buffer');
    if (next === old || next.size !== 0 || next.dimensions !== old.dimensions)
      throw new ValidationError('next', `must be a new empty index of ${old.dimensions} dimensions`);
    old.addMany([...this.#order].map((id) => ({ id, vector: this.#buffer.vectorOf(id)! })));
    this.#buffer.dispose();
    this.#buffer = old;
    this.#main = next;
    this.#order.clear();
    for (const { id } of old.entries()) this.#order.add(id);
  }

  /** Replaces everything: `next` becomes the main index, the buffer is emptied; the old ones are freed. */
  reset(next: VectorIndex): void {
    if (next !== this.#main) this.#main.dispose();
    this.#buffer.dispose();
    this.#main = next;
    this.#buffer = ExactIndex.create({ dimensions: next.dimensions });
    this.#order.clear();
  }

  add(id: string, vector: Float32Array): void {
    this.addMany([{ id, vector }]);
  }

  /**
   * New ids into the buffer; an id the main index already holds is replaced
   * there (a no-op when its vector is unchanged, as when a catch-up reads back
   * writes this index already has). Taking it out of HNSW and buffering it
   * again would leave a deleted node behind every time.
   */
  addMany(items: readonly { id: string; vector: Float32Array }[]): void {
    // Every item is checked before either part changes.
    items.forEach((item, i) => {
      assertId(item.id, `items[${i}].id`);
      assertVector(item.vector, this.dimensions, `items[${i}].vector`);
    });
    const held: { id: string; vector: Float32Array }[] = [];
    const fresh: { id: string; vector: Float32Array }[] = [];
    for (const item of items) (this.#main.has(item.id) ? held : fresh).push(item);
    this.#buffer.addMany(fresh);
    for (const { id } of fresh) {
      this.#order.delete(id);
      this.#order.add(id);
    }
    if (held.length > 0) this.#main.addMany(held);
  }

  remove(id: string): boolean {
    const buffered = this.#buffer.remove(id);
    if (buffered) this.#order.delete(id);
    return this.#main.remove(id) || buffered;
  }

  has(id: string): boolean {
    return this.#buffer.has(id) || this.#main.has(id);
  }

  search(vector: Float32Array, k: number, filter?: (id: string) => boolean): VectorHit[] {
    const main = this.#main.search(vector, k, filter);
    if (this.#buffer.size === 0) return main;
    return [...main, ...this.#buffer.search(vector, k, filter)]
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, k);
  }

  searchAmong(vector: Float32Array, k: number, ids: Iterable<string>): VectorHit[] {
    if (this.#buffer.size === 0) return this.#main.searchAmong(vector, k, ids);
    const scope: ReadonlySet<string> = ids instanceof Set ? (ids as ReadonlySet<string>) : new Set(ids);
    return this.#withBuffered(this.#main.searchAmong(vector, k, scope), vector, k, scope);
  }

  /** The main index's choice for the scope, and the buffered members of the scope scanned beside it. */
  searchIn(vector: Float32Array, k: number, scope: ReadonlySet<string>): VectorHit[] {
    const main = this.#main.searchIn(vector, k, scope);
    return this.#buffer.size === 0 ? main : this.#withBuffered(main, vector, k, scope);
  }

  /** `main`'s hits merged with the scan of the buffered members of `scope`. */
  #withBuffered(main: VectorHit[], vector: Float32Array, k: number, scope: ReadonlySet<string>): VectorHit[] {
    // The buffer (at most a few thousand rows) is scanned whole when that is shorter than the scope.
    const buffered =
      this.#buffer.size <= scope.size
        ? this.#buffer.search(vector, k, (id) => scope.has(id))
        : this.#buffer.searchAmong(vector, k, scope);
    return [...main, ...buffered].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, k);
  }

  similarities(vector: Float32Array, ids: Iterable<string>): Map<string, number> {
    const all = [...ids];
    const out = this.#main.similarities(vector, all);
    if (this.#buffer.size > 0) for (const [id, score] of this.#buffer.similarities(vector, all)) out.set(id, score);
    return out;
  }

  /**
   * Moves up to `max` buffered vectors into the main index, oldest first; returns how many moved.
   * @example
   * while (index.pending > 0 && performance.now() < deadline) index.merge(16);
   */
  merge(max = Infinity): number {
    const batch: { id: string; vector: Float32Array }[] = [];
    for (const id of this.#order) {
      if (batch.length >= max) break;
      batch.push({ id, vector: this.#buffer.vectorOf(id)! });
    }
    if (batch.length === 0) return 0;
    this.#main.addMany(batch);
    for (const { id } of batch) {
      this.#buffer.remove(id);
      this.#order.delete(id);
    }
    return batch.length;
  }

  /** Merges the whole buffer, then serialises the main index (restore it with restoreIndex and wrap it again). */
  snapshot(): Uint8Array {
    this.merge();
    return this.#main.snapshot();
  }

  /** The main index and the buffer serialised apart, without merging (the buffer is an ExactIndex snapshot). */
  snapshotParts(): { main: Uint8Array; buffer: Uint8Array } {
    return { main: this.#main.snapshot(), buffer: this.#buffer.snapshot() };
  }

  dispose(): void {
    this.#main.dispose();
    this.#buffer.dispose();
  }
}
