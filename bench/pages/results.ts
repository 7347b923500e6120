/**
 * Result shapes shared by the benchmarks that produce them and the report that
 * reads them (the browser pages post theirs to `window.__benchResult`).
 */

/** One size of bench/recall-search. */
export interface RecallSearchResult {
  messages: number;
  queries: number;
  indexP50: number;
  indexP95: number;
  scanP50: number;
  scanP95: number;
  speedup: number;
  agreement: number;
  buildSeconds: number;
  scopedP50: number;
  scopedP95: number;
}

/** p50 and p95 of one kind of query, in milliseconds. */
export interface SearchTimes {
  p50: number;
  p95: number;
}

/** One corpus and size of bench/memory-search. */
export interface MemorySearchResult {
  corpus: 'sentences' | 'chat';
  memories: number;
  queries: number;
  fillSeconds: number;
  /** The first search after the fill: loads the keyword index, catches both indexes up. */
  firstSearchMs: number;
  /** By mode: hybrid, keyword, vector. */
  unscoped: Partial<Record<'hybrid' | 'keyword' | 'vector', SearchTimes>>;
  /** The same, scoped to one user of ten. */
  scoped: Partial<Record<'hybrid' | 'keyword' | 'vector', SearchTimes>>;
}

/** One scope of bench/memory-search's scope sweep (or its unscoped baseline). */
export interface ScopeSweepRow {
  /** `sweep`: one store with users of every sweep size; `users`: 1,000 users of 100. */
  store: 'sweep' | 'users';
  memories: number;
  /** `unscoped`, or which user the searches were scoped to. */
  scope: string;
  /** Memories the search may return (the whole store when unscoped). */
  scopeSize: number;
  times: Partial<Record<'hybrid' | 'keyword' | 'vector', SearchTimes>>;
  /** Vector mode's recall@10 against an exact scan of the scope (absent where not measured). */
  recallAt10?: number;
  /** On the unscoped row: the store's fill, and the first search after it. */
  fillSeconds?: number;
  firstSearchMs?: number;
}

/** One scope size of bench/memory-search's crossover: the index alone, exact scan of the scope against a filtered HNSW walk. */
export interface ScopeCrossoverRow {
  memories: number;
  dimensions: number;
  scopeSize: number;
  /** scopeSize / memories. */
  share: number;
  scan: SearchTimes;
  walk: SearchTimes;
  /** The walk's top 10 against the scan's. */
  walkRecallAt10: number;
}

/**
 * bench/model-search: search() over one store of varied sentences with a
 * sentence model embedding every query in its worker.
 */
export interface ModelSearchResult {
  /** The embedding model's id. */
  model: string;
  memories: number;
  /** Queries per (scope, mode); each has its own, so no query vector comes from the embedding cache. */
  queries: number;
  fillSeconds: number;
  /** The first search after the fill: loads the keyword index, catches both indexes up. */
  firstSearchMs: number;
  /** TransformersEmbedder.create() in the page: worker, runtime and model loaded. */
  loadMs: number;
  /** The first embed() after create(): one query. */
  firstEmbedMs: number;
  unscoped: Partial<Record<'hybrid' | 'keyword' | 'vector', SearchTimes>>;
  /** Scoped to one user of ten. */
  scoped: Partial<Record<'hybrid' | 'keyword' | 'vector', SearchTimes>>;
}

/** One batch size of bench/ingest. */
export interface IngestResult {
  /** The embedding model's id (absent in older results: the offline model). */
  model?: string;
  /** TransformersEmbedder.create() in the page: worker, runtime and model loaded (absent in older results). */
  loadMs?: number;
  /** The first embed() after create(), one batch (absent in older results). */
  firstEmbedMs?: number;
  texts: number;
  batch: number;
  rawPerSecond: number;
  /** The IndexedDB write of the same rows alone (absent in older results). */
  writePerSecond?: number;
  /** The vector index insert of the same vectors alone (absent in older results). */
  indexPerSecond?: number;
  addPerSecond: number;
  /** add() with the embedder's vectors computed before the timing: add()'s own cost, without the model's (absent in older results). */
  precomputedPerSecond?: number;
  /** Rounds the stages ran in, in turn (absent in older results: one). */
  rounds?: number;
  /** add() over the raw embedder. */
  ratio: number;
  /** add() over its slowest stage alone (absent in older results). */
  slowestStageRatio?: number;
  /** add() with precomputed vectors over the slowest stage alone (absent in older results). */
  precomputedStageRatio?: number;
  /** Cores the machine kept busy during each stage; absent in older results. */
  cpu?: StageCores;
}

/**
 * Cores the machine kept busy during each stage of bench/ingest (all processes:
 * the browser's IndexedDB backend, the page, the embedding worker), of `cores`.
 */
export interface StageCores {
  cores: number;
  embedder: number;
  write: number;
  index: number;
  add: number;
}

/** One size of bench/cold-open. */
export interface ColdOpenResult {
  memories: number;
  fillSeconds: number;
  snapshotMs: number[];
  rebuildMs: number[];
  ratio: number;
  /** JS heap in use and WASM memory with the store open in a fresh page, and the raw vector bytes (absent in older results). */
  memory?: { heapBytes: number; wasmBytes: number; rawVectorBytes: number };
  /** The same in the page that filled the store (its own vector table, the fill's WASM high-water mark), for reference. */
  memoryAfterFill?: { heapBytes: number; wasmBytes: number; rawVectorBytes: number };
  /**
   * Open to first search from the snapshot in fresh documents (a page load each: new JS heap,
   * hnswlib's WASM compiled again), as an app start opens it (absent in older results).
   */
  freshOpenMs?: number[];
  /** The store's name between the run and the fresh-page measurement (not in saved results). */
  store?: string;
}

/** recall and time of one efSearch setting. */
export interface EfFigures {
  ef: number;
  recall: number;
  p50Ms: number;
  p95Ms: number;
}

/** One dataset of bench/vector.ts. */
export interface VectorDataset {
  dataset: string;
  n: number;
  dims: number;
  queries: number;
  m: number;
  efConstruction: number;
  exact: { buildMs: number; p50Ms: number; p95Ms: number; snapshotBytes: number; saveMs: number; loadMs: number };
  hnsw: {
    buildMs: number;
    byEf: EfFigures[];
    snapshotBytes: number;
    saveMs: number;
    loadMs: number;
    restoredSearchIdentical?: boolean;
  };
  native?: { buildMs: number; byEf: EfFigures[]; snapshotBytes: number; saveMs: number; loadMs: number };
}

/** Memory an open system holds in bench/peers, over the page before it opened. */
export interface PeerMemory {
  /** V8 heap in use after a collection. */
  heapBytes: number;
  /** ArrayBuffer backing stores (DevTools counts no WebAssembly memory among them). */
  buffersBytes: number;
  /** WebAssembly memories at their size (absent in the first results, which missed them). */
  wasmBytes?: number;
}

/** What one page of bench/peers posts (one system, one phase). */
export interface PeerPhaseResult {
  config: string;
  /** Insert of every document to a durable state (phase ingest). */
  ingestMs?: number;
  /** Open from the persisted state to the first vector answer, in a new browser process (phase open). */
  openMs?: number;
  firstHybridMs?: number;
  vectorMs?: number[];
  /** Top-10 document indexes per query, best first. */
  vectorHits?: number[][];
  hybridMs?: number[];
  /**
   * The vector queries again, after the hybrid ones: IndexedDB answers its first few hundred reads
   * after a reopen 2-3x slower than later ones, whatever wrote the store (bench/results/REPORT.md,
   * peers, session 45), so the first pass measures that warm-up as much as the store.
   */
  vectorAgainMs?: number[];
  /** The hybrid queries again, after the second vector pass (see vectorAgainMs); absent for a system without hybrid search. */
  hybridAgainMs?: number[];
  memory?: PeerMemory;
}

/** One store's side of bench/at-rest. */
export interface AtRestSide {
  addPerSecond: number;
  searchP50Ms: number;
  searchP95Ms: number;
  /** Median time from open() to the first answered search, from the index snapshot. */
  openMs: number;
  /** Median time of open() alone (the index snapshot loads after it, before the first search). */
  openOnlyMs: number;
  /** The fastest and slowest open to the first answered search (the spread the median is taken over). */
  openRangeMs: [number, number];
}

/** bench/at-rest at one size: a plain and an encrypted store fed the same calls in one page. */
export interface AtRestResult {
  memories: number;
  queries: number;
  /** Fills of a fresh store pair the add() figure is the median of (absent in older results: one). */
  fills?: number;
  plain: AtRestSide;
  encrypted: AtRestSide;
}

/** Search latency over one stretch of a re-embed (bench/reembed). */
export interface ReembedWindow {
  searches: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

/** bench/reembed at one size and model: a store re-embedded while the same engram searches back to back. */
export interface ReembedBenchResult {
  memories: number;
  /** The new model: `hash-384` (engram's own work) or MiniLM. */
  model: string;
  /** The new model's load (create() to the first vector), not part of the run. */
  modelLoadMs: number;
  /** engram.reembed() from its call to its return (staging, switch, the new index's rebuild). */
  totalMs: number;
  /** The staging phase: first to last `reembed` progress report. */
  stagingMs: number;
  /** Texts embedded and staged per second of the staging phase. */
  textsPerSecond: number;
  /** Last staged batch to the new index's first `rebuild` report: the log check and the switch transaction. */
  switchMs: number;
  /** The new model's index, built from the switched vectors, until reembed() returned. */
  rebuildMs: number;
  /** Search latency before the run (idle), while it stages, and from the last staged batch to its return. */
  before: ReembedWindow;
  staging: ReembedWindow;
  switching: ReembedWindow;
  /** The longest single search that overlapped the switch transaction. */
  longestOverSwitchMs: number;
}

/** bench/convert: one store converted to encrypted and back (Chromium). */
export interface ConvertResult {
  memories: number;
  /** Rows of the sealed tables converted. */
  rows: number;
  progressReports: number;
  encryptMs: number;
  decryptMs: number;
  heapBeforeMb: number;
  encryptPeakHeapMb: number;
  decryptPeakHeapMb: number;
  /** From the call to its AbortError, cancelled at half-way. */
  cancelRunMs: number;
  /** From the abort() to the AbortError. */
  cancelReturnMs: number;
  cancelIntact: boolean;
  /** open() to the first hybrid search: the plain store (from its snapshots) before the conversion. */
  plainOpenMs: number;
  /** The same, encrypted, right after the conversion (index snapshots rebuilt). */
  firstOpenMs: number;
  /** The same, encrypted, from the snapshots the first open's close wrote. */
  secondOpenMs: number;
  /** The same, plain again after decryptStore (snapshots rebuilt). */
  plainAgainOpenMs: number;
}
