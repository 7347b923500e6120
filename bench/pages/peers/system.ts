/**
 * The seam every system of bench/peers sits behind in the page: insert the
 * corpus to a durable state, open that state again in a new browser process,
 * answer top-k queries with document indexes. One file per system beside this one.
 */
import type { PeerCorpus } from '../../util/peer-corpus.js';

/** Matched HNSW parameters, set wherever a system lets them be set. */
export const HNSW = { m: 16, efConstruction: 100, efSearch: 64 } as const;

/** Rows per insert call or transaction, wherever a system takes batches. */
export const BATCH = 1000;

/** One system under comparison. */
export interface PeerSystem {
  /** Its configuration as the report prints it: version, index, parameters, persistence. */
  readonly config: string;
  /**
   * Inserts every document and returns once the state is durable (committed
   * to IndexedDB as the system persists), with the system closed.
   */
  ingest(corpus: PeerCorpus, log: (line: string) => void): Promise<void>;
  /**
   * After ingest(), the milliseconds of it to report when that is not the whole
   * call (an import: not the store its file is exported from); absent or undefined: all of it.
   */
  ingestMs?: () => number | undefined;
  /** Opens the persisted state (this is a new browser process) so that the next query can be answered. */
  open(n: number): Promise<void>;
  /** The top `k` document indexes for the query vector, best first. */
  vector(query: Float32Array, text: string, k: number): Promise<number[]>;
  /** The top `k` of a keyword-plus-vector query; absent where the system has no hybrid search. */
  hybrid?: (query: Float32Array, text: string, k: number) => Promise<number[]>;
}

/** The float32 values of `v` as a plain list (systems that take JSON-like rows). */
export function toList(v: Float32Array): number[] {
  return Array.from(v);
}
