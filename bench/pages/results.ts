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

/** One batch size of bench/ingest. */
export interface IngestResult {
  texts: number;
  batch: number;
  rawPerSecond: number;
  addPerSecond: number;
  ratio: number;
}

/** One size of bench/cold-open. */
export interface ColdOpenResult {
  memories: number;
  fillSeconds: number;
  snapshotMs: number[];
  rebuildMs: number[];
  ratio: number;
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
  hnsw: { buildMs: number; byEf: EfFigures[]; snapshotBytes: number; saveMs: number; loadMs: number; restoredSearchIdentical?: boolean };
  native?: { buildMs: number; byEf: EfFigures[]; snapshotBytes: number; saveMs: number; loadMs: number };
}
