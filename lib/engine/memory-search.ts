/**
 * Memory search: vector similarity (HNSW, or exact over a small filtered set),
 * BM25 keywords, or both fused with reciprocal rank fusion. Filters are applied
 * inside both searches, so scoped results never leak and k hits come back when
 * k exist.
 */
import { ExactIndex } from '../index/exact-index.js';
import type { CompiledFilter } from '../search/filters.js';
import { reciprocalRankFusion } from '../search/fusion.js';
import { keywordSearch } from '../search/keyword-index.js';
import type { MemoryRow } from '../store/rows.js';
import type { Core } from './core.js';
import { matchingRows } from './memories.js';
import type { Semantic } from './semantic.js';

/** How results are found. */
export type SearchMode = 'hybrid' | 'vector' | 'keyword';
export const SEARCH_MODES: readonly SearchMode[] = ['hybrid', 'vector', 'keyword'];

/** Below this many filtered candidates, exact scoring beats a filtered graph walk. */
const EXACT_CANDIDATES = 4096;

/** A ranked memory. `score` is the ranking score of the mode: RRF for hybrid, cosine for vector, BM25 for keyword. */
export interface ScoredMemory {
  row: MemoryRow;
  score: number;
  similarity?: number;
  keywordScore?: number;
}

/** Options of {@link searchMemories}. */
export interface MemorySearchOptions {
  filter: CompiledFilter;
  limit: number;
  mode: SearchMode;
  /** Minimum cosine similarity (vector, hybrid) or BM25 score (keyword). */
  threshold?: number;
  signal?: AbortSignal;
}

/** Exact cosine similarity of `query` with the stored vectors of `ids` (the exact index, built for them). */
async function exactScores(core: Core, query: Float32Array, ids: readonly string[]): Promise<Map<string, number>> {
  const vectors = await core.db.vectors.bulkGet([...ids]);
  const index = ExactIndex.create({ dimensions: query.length });
  index.addMany(vectors.flatMap((v) => (v === undefined || v.vector.length !== query.length ? [] : [{ id: v.id, vector: v.vector }])));
  return new Map(index.search(query, Math.max(index.size, 1)).map((h) => [h.id, h.score]));
}

/** Searches live memories that pass the filter. */
export async function searchMemories(core: Core, semantic: Semantic, query: string, options: MemorySearchOptions): Promise<ScoredMemory[]> {
  core.assertOpen();
  const { filter, limit, mode, threshold } = options;
  const allowedRows = filter.empty ? undefined : new Map((await matchingRows(core, filter)).map((r) => [r.id, r]));
  if (allowedRows?.size === 0) return [];
  const pool = Math.max(limit * 4, 40);
  const now = core.now();

  let vectorRanked: { id: string; score: number }[] = [];
  let queryVector: Float32Array | undefined;
  if (mode !== 'keyword') {
    const [{ state }, { vectors }] = await Promise.all([semantic.ready(), semantic.embed([query], options.signal)]);
    queryVector = vectors[0]!;
    if (allowedRows !== undefined && allowedRows.size <= EXACT_CANDIDATES) {
      const scores = await exactScores(core, queryVector, [...allowedRows.keys()]);
      vectorRanked = [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score).slice(0, pool);
    } else {
      await state.catchUp();
      vectorRanked = state.index.search(queryVector, pool, allowedRows === undefined ? undefined : (id) => allowedRows.has(id));
    }
    if (threshold !== undefined) vectorRanked = vectorRanked.filter((h) => h.score >= threshold);
  }

  let keywordRanked: { id: string; score: number }[] = [];
  if (mode !== 'vector') {
    const { hits } = await keywordSearch(core.db.terms, core.db.meta, 'v', query, allowedRows === undefined ? { depth: pool } : { filter: (p) => allowedRows.has(p.d) });
    keywordRanked = hits.slice(0, pool);
    if (mode === 'keyword' && threshold !== undefined) keywordRanked = keywordRanked.filter((h) => h.score >= threshold);
  }

  let ranked: { id: string; score: number }[];
  const similarity = new Map(vectorRanked.map((h) => [h.id, h.score]));
  const keywordScore = new Map(keywordRanked.map((h) => [h.id, h.score]));
  if (mode === 'hybrid') {
    // Keyword hits the vector pool missed still get a true similarity, so the threshold holds for every result.
    const missing = keywordRanked.filter((h) => !similarity.has(h.id)).map((h) => h.id);
    if (queryVector !== undefined && missing.length > 0) {
      for (const [id, s] of await exactScores(core, queryVector, missing)) similarity.set(id, s);
    }
    const keywordIds = keywordRanked.map((h) => h.id).filter((id) => threshold === undefined || (similarity.get(id) ?? -1) >= threshold);
    ranked = reciprocalRankFusion([vectorRanked.map((h) => h.id), keywordIds]).map((h) => ({ id: h.id, score: h.score }));
  } else {
    ranked = mode === 'vector' ? vectorRanked : keywordRanked;
  }

  const out: ScoredMemory[] = [];
  const rows = allowedRows ?? new Map((await core.db.memories.bulkGet(ranked.map((h) => h.id))).filter((r): r is MemoryRow => r !== undefined).map((r) => [r.id, r]));
  for (const hit of ranked) {
    const row = rows.get(hit.id);
    if (row === undefined || !filter.matches(row, now)) continue;
    const item: ScoredMemory = { row, score: hit.score };
    const s = similarity.get(hit.id);
    const k = keywordScore.get(hit.id);
    if (s !== undefined) item.similarity = s;
    if (k !== undefined) item.keywordScore = k;
    out.push(item);
    if (out.length === limit) break;
  }
  return out;
}
