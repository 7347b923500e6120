/**
 * Loading engram's WebAssembly build of hnswlib (`native/hnswlib.js`, made by
 * scripts/build-hnswlib.mjs from `native/hnswlib-binding.cc`): the only file
 * that imports it, lazily, so importing the library has no side effects. One
 * module per JS realm; its memory (at most 2 GiB) holds every index.
 *
 * {@link NativeHnsw} turns the binding's pointer-and-status interface into
 * typed calls: vectors are copied into WASM memory here, results read back,
 * and every failure the binding reports becomes an IndexError.
 */
import { IndexError } from '../errors.js';
import { HNSWLIB_HEADER_BYTES } from './hnswlib-file.js';
import type { HnswBinding, HnswModule } from './native/hnswlib.js';

/** One runtime per JS realm, shared by every copy of this module, so that all indexes share one WASM memory. */
const RUNTIME_KEY = Symbol.for('engram.index.hnswlib-runtime');

/** Calls into WASM, turning anything it throws (a trap, an allocation failure) into IndexError. */
export function wasmCall<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof IndexError) throw e;
    throw new IndexError(`hnswlib ${what} failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

/**
 * Loads the module once per realm; a failed load is forgotten so that the next
 * call tries again.
 * @example
 * const module = await loadRuntime();
 */
export function loadRuntime(): Promise<HnswModule> {
  const slot = globalThis as unknown as Record<symbol, Promise<HnswModule> | undefined>;
  let pending = slot[RUNTIME_KEY];
  if (pending === undefined) {
    pending = startRuntime().catch((cause: unknown) => {
      slot[RUNTIME_KEY] = undefined;
      throw cause instanceof IndexError
        ? cause
        : new IndexError('could not load hnswlib (WebAssembly with SIMD and exception handling is needed)', { cause });
    });
    slot[RUNTIME_KEY] = pending;
  }
  return pending;
}

async function startRuntime(): Promise<HnswModule> {
  const { default: loadHnswlib } = await import('./native/hnswlib.js');
  return loadHnswlib();
}

/**
 * One hnswlib index in WASM memory (cosine space, replace-deleted mode on).
 * Vectors handed in are copied; the binding normalises its copy.
 * @example
 * const native = new NativeHnsw(await loadRuntime(), 384);
 * native.init(1024, 16, 100, 100);
 */
export class NativeHnsw {
  readonly #module: HnswModule;
  readonly #binding: HnswBinding;
  readonly #dimensions: number;
  /** A scratch allocation in WASM memory for vectors, labels and results, grown on demand. */
  #scratch = 0;
  #scratchBytes = 0;

  constructor(module: HnswModule, dimensions: number) {
    this.#module = module;
    this.#dimensions = dimensions;
    this.#binding = wasmCall('create index', () => new module.Hnsw(dimensions));
  }

  init(maxElements: number, m: number, efConstruction: number, seed: number): void {
    this.#check('initIndex', this.#binding.init(maxElements, m, efConstruction, seed));
  }

  /**
   * Reads an hnswlib index file, checked by hnswlib-file.ts first (whose
   * `level0End` says where its level-0 block ends), with room for
   * `maxElements`: the level-0 block is copied straight into the index's own
   * allocation, so the file is never held whole in WASM memory (which never
   * shrinks).
   */
  readIndex(file: Uint8Array, level0End: number, maxElements: number): void {
    const module = this.#module;
    const header = this.#reserve(HNSWLIB_HEADER_BYTES);
    module.HEAPU8.set(file.subarray(0, HNSWLIB_HEADER_BYTES), header);
    const level0 = this.#binding.beginLoad(header, maxElements);
    if (level0 === 0) this.#check('readIndex', this.#binding.lastError());
    module.HEAPU8.set(file.subarray(HNSWLIB_HEADER_BYTES, level0End), level0);
    const links = file.subarray(level0End);
    const linksAt = links.length === 0 ? 0 : module._malloc(links.length);
    if (links.length > 0 && linksAt === 0)
      throw new IndexError(`hnswlib could not allocate ${links.length} bytes of WASM memory`);
    try {
      module.HEAPU8.set(links, linksAt);
      this.#check('readIndex', this.#binding.finishLoad(linksAt, links.length));
    } finally {
      if (linksAt !== 0) module._free(linksAt);
    }
  }

  /**
   * Hands hnswlib's index file of this index to `use` as a view of WASM memory,
   * valid only while `use` runs (no copy is made; `use` must not call into the
   * index), and frees it after.
   * @example
   * const bytes = native.withIndexFile((file) => file.slice());
   */
  withIndexFile<T>(use: (file: Uint8Array) => T): T {
    const file = wasmCall('writeIndex', () => this.#binding.serialize());
    try {
      if (file === null) {
        this.#check('writeIndex', this.#binding.lastError());
        throw new IndexError('hnswlib writeIndex failed');
      }
      return use(file);
    } finally {
      this.#binding.release();
    }
  }

  resizeIndex(maxElements: number): void {
    this.#check('resizeIndex', this.#binding.resize(maxElements));
  }

  addPoints(points: readonly Float32Array[], labels: readonly number[], replaceDeleted: boolean): void {
    const vectorBytes = this.#dimensions * 4;
    const base = this.#reserve(points.length * (vectorBytes + 4));
    const labelsAt = base + points.length * vectorBytes;
    const { HEAPF32, HEAPU32 } = this.#module;
    points.forEach((point, i) => {
      HEAPF32.set(point, (base + i * vectorBytes) >>> 2);
    });
    HEAPU32.set(labels, labelsAt >>> 2);
    this.#check('addPoints', this.#binding.addPoints(base, labelsAt, points.length, replaceDeleted));
  }

  addPoint(point: Float32Array, label: number, replaceDeleted: boolean): void {
    this.addPoints([point], [label], replaceDeleted);
  }

  markDelete(label: number): void {
    this.#check('markDelete', this.#binding.markDelete(label));
  }

  /** Up to k nearest labels, closest first, with their cosine distances; `filter` runs inside the graph walk. */
  searchKnn(
    query: Float32Array,
    k: number,
    filter: ((label: number) => boolean) | undefined,
  ): { distances: number[]; neighbors: number[] } {
    const vectorBytes = this.#dimensions * 4;
    const base = this.#reserve(vectorBytes + k * 8);
    const labelsAt = base + vectorBytes;
    const distancesAt = labelsAt + k * 4;
    this.#module.HEAPF32.set(query, base >>> 2);
    const found = this.#binding.search(base, k, filter, labelsAt, distancesAt);
    if (found < 0) this.#check('searchKnn', this.#binding.lastError());
    const { HEAPF32, HEAPU32 } = this.#module;
    return {
      neighbors: Array.from(HEAPU32.subarray(labelsAt >>> 2, (labelsAt >>> 2) + found)),
      distances: Array.from(HEAPF32.subarray(distancesAt >>> 2, (distancesAt >>> 2) + found)),
    };
  }

  /** Up to k nearest labels whose bit is set in `allowed` (bit l of word l / 32), closest first: the filter runs in WASM. */
  searchAllowed(query: Float32Array, k: number, allowed: Uint32Array): { distances: number[]; neighbors: number[] } {
    const vectorBytes = this.#dimensions * 4;
    const base = this.#reserve(vectorBytes + k * 8 + allowed.length * 4);
    const labelsAt = base + vectorBytes;
    const distancesAt = labelsAt + k * 4;
    const bitmapAt = distancesAt + k * 4;
    this.#module.HEAPF32.set(query, base >>> 2);
    this.#module.HEAPU32.set(allowed, bitmapAt >>> 2);
    const found = this.#binding.searchAllowed(base, k, bitmapAt, allowed.length, labelsAt, distancesAt);
    if (found < 0) this.#check('searchKnn', this.#binding.lastError());
    const { HEAPF32, HEAPU32 } = this.#module;
    return {
      neighbors: Array.from(HEAPU32.subarray(labelsAt >>> 2, (labelsAt >>> 2) + found)),
      distances: Array.from(HEAPF32.subarray(distancesAt >>> 2, (distancesAt >>> 2) + found)),
    };
  }

  /**
   * Cosine distances of `query` with the vectors stored under the first `count`
   * of `labels`, in one call (NaN for a label that is not live).
   */
  distances(query: Float32Array, labels: Uint32Array, count: number): Float32Array {
    const vectorBytes = this.#dimensions * 4;
    const base = this.#reserve(vectorBytes + count * 8);
    const labelsAt = base + vectorBytes;
    const distancesAt = labelsAt + count * 4;
    const { HEAPF32, HEAPU32 } = this.#module;
    HEAPF32.set(query, base >>> 2);
    HEAPU32.set(labels.subarray(0, count), labelsAt >>> 2);
    this.#check('distances', this.#binding.distances(base, labelsAt, count, distancesAt));
    // Read from the module's current view: the call may have grown memory (a new HEAPF32).
    return this.#module.HEAPF32.slice(distancesAt >>> 2, (distancesAt >>> 2) + count);
  }

  /**
   * The normalised vector stored under a live label, as a view of WASM memory:
   * read it before the next call into the index (memory may move when it grows).
   */
  getPoint(label: number): Float32Array {
    const at = this.#binding.point(label);
    if (at === 0) throw new IndexError(`hnswlib getPoint failed: label ${label} is not in the index`);
    return this.#module.HEAPF32.subarray(at >>> 2, (at >>> 2) + this.#dimensions);
  }

  setEfSearch(ef: number): void {
    this.#check('setEfSearch', this.#binding.setEf(ef));
  }

  /** Frees the index and its scratch memory. */
  delete(): void {
    if (this.#scratch !== 0) this.#module._free(this.#scratch);
    this.#scratch = 0;
    this.#binding.delete();
  }

  #check(what: string, error: string): void {
    if (error !== '') throw new IndexError(`hnswlib ${what} failed: ${error}`);
  }

  /** A scratch area of at least `bytes` (16-byte aligned, as malloc returns). */
  #reserve(bytes: number): number {
    if (bytes <= this.#scratchBytes) return this.#scratch;
    const module = this.#module;
    if (this.#scratch !== 0) module._free(this.#scratch);
    this.#scratch = 0;
    this.#scratchBytes = 0;
    const at = module._malloc(bytes);
    if (at === 0) throw new IndexError(`hnswlib could not allocate ${bytes} bytes of WASM memory`);
    this.#scratch = at;
    this.#scratchBytes = bytes;
    return at;
  }
}
