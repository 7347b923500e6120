/**
 * Types of the generated module hnswlib.js (scripts/build-hnswlib.mjs): the
 * binding declared in hnswlib-binding.cc and the parts of Emscripten's runtime
 * that lib/vector/hnswlib-runtime.ts uses. Every string result is an error
 * message, "" for success; no call throws for bad input.
 */
export interface HnswBinding {
  init(maxElements: number, m: number, efConstruction: number, seed: number): string;
  beginLoad(header: number, maxElements: number): number;
  finishLoad(links: number, length: number): string;
  /** hnswlib's index file as a view of WASM memory, valid until release() or the next call; null on failure (see lastError()). */
  serialize(): Uint8Array | null;
  release(): void;
  resize(maxElements: number): string;
  addPoints(vectors: number, labels: number, count: number, replaceDeleted: boolean): string;
  markDelete(label: number): string;
  search(
    query: number,
    k: number,
    filter: ((label: number) => boolean) | undefined,
    outLabels: number,
    outDistances: number,
  ): number;
  /** Cosine distances of the query with the vectors under `count` labels into `outDistances` (NaN: not live); "" or an error message. */
  distances(query: number, labels: number, count: number, outDistances: number): string;
  /** search() with the allowed labels as a bitmap of `words` uint32 words (bit l of word l / 32) instead of a JS filter. */
  searchAllowed(
    query: number,
    k: number,
    bitmap: number,
    words: number,
    outLabels: number,
    outDistances: number,
  ): number;
  point(label: number): number;
  setEf(ef: number): string;
  lastError(): string;
  delete(): void;
}

export interface HnswModule {
  Hnsw: new (dimensions: number) => HnswBinding;
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  HEAPF32: Float32Array;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
}

declare function loadHnswlib(options?: object): Promise<HnswModule>;
// eslint-disable-next-line no-restricted-syntax -- Emscripten's ES module exports its factory as default.
export default loadHnswlib;
