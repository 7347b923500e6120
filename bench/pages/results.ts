/**
 * What the browser benchmark pages post to `window.__benchResult`, shared by
 * each page and the Node script that prints it.
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
