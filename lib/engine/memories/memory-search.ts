/**
 * Memory search: vector similarity (HNSW, or an exact scan of a scope, both from the index's memory),
 * BM25 keywords, or both fused into one relevance in [0, 1] (lib/search/fusion.ts).
 * Filters are applied inside both searches, so scoped results never leak and k
 * hits come back when k exist. How the query is embedded in each mode, and
 * the weights of the fusion, are the embedding model's (lib/search/retrieval-profile.ts);
 * the keyword side uses the store's analyzer.
 */
import { ExactIndex } from '../../vector/exact-index.js';
import { vectorDefect } from '../../vector/vector-checks.js';
import type { CompiledFilter } from '../../search/filters.js';
import { fuse, hybridRelevance, vectorRelevance, type FusedHit } from '../../search/fusion.js';
import { retrievalProfile } from '../../search/retrieval-profile.js';
import { readLogHead } from '../../store/change-log.js';
import { MEMORY_CORPUS } from '../../store/keyword-terms.js';
import type { MemoryRow } from '../../store/rows.js';
import type { EngineStore } from '../engine-store.js';
import { keywordState } from '../keywords/keyword-state.js';
import { matchingRows } from './memories.js';
import type { SemanticIndex } from '../vectors/semantic-index.js';

/** How results are found. */
export type SearchMode = 'hybrid' | 'vector' | 'keyword';
export const SEARCH_MODES: readonly SearchMode[] = ['hybrid', 'vector', 'keyword'];

/** Rows read beyond the results asked for, in case some fail the filter on a second look. */
const ROW_SPARE = 4;

/**
 * A ranked memory. `score` is its relevance in [0, 1] in every mode: the
 * cosine similarity (vector), BM25 over the query's bound (keyword), or their
 * fusion (hybrid); the per-mode scores come along where computed.
 */
export interface ScoredMemory {
  row: MemoryRow;
  score: number;
  similarity?: number;
  keywordScore?: number;
  keywordRelevance?: number;
}

/** Options of {@link searchMemories}. */
export interface MemorySearchOptions {
  filter: CompiledFilter;
  limit: number;
  mode: SearchMode;
  /** Minimum relevance (`score`, in [0, 1]) of a result, in every mode. */
  threshold?: number;
  signal?: AbortSignal;
}

/**
 * Exact cosine similarity of `query` with the stored vectors of `ids`, read from
 * the store: only for ids the index does not hold (a vector it skipped as damaged).
 */
async function storedScores(
  core: EngineStore,
  query: Float32Array,
  ids: readonly string[],
): Promise<Map<string, number>> {
  const vectors = await core.db.vectors.bulkGet([...ids]);
  const index = ExactIndex.create({ dimensions: query.length });
  const usable = vectors.filter((v) => {
    if (v === undefined) return false;
    // A stored vector that cannot be scored (wrong length, NaN) is skipped and reported.
    const defect = vectorDefect(v.vector, query.length);
    if (defect !== undefined) core.reportDamaged({ table: 'vectors', key: v.id, reason: defect });
    return defect === undefined;
  });
  index.addMany(usable.map((v) => ({ id: v!.id, vector: v!.vector })));
  return new Map(index.search(query, Math.max(index.size, 1)).map((h) => [h.id, h.score]));
}

/** Searches live memories that pass the filter. */
export async function searchMemories(
  core: EngineStore,
  semantic: SemanticIndex,
  query: string,
  options: MemorySearchOptions,
): Promise<ScoredMemory[]> {
  const { filter, limit, mode, threshold } = options;
  const { state, embedder } = await semantic.ready();
  const profile = retrievalProfile(embedder.id);
  const weights = { vector: profile.vectorWeight, keyword: profile.keywordWeight };
  const form = mode === 'vector' ? profile.vectorQuery : profile.hybridQuery;
  // The query is embedded (in the embedder's worker) while the indexes catch up and the keyword side runs.
  const embedding =
    mode === 'keyword'
      ? undefined
      : semantic.embed([form === 'question' ? query : core.analyzer.queryText(query)], options.signal, 'query');
  embedding?.catch(() => undefined); // awaited below; a failure surfaces there
  // Both indexes catch up with the change log at once (the keyword one loads on first use),
  // from one read of where the log stands.
  const head = readLogHead(core.db);
  head.catch(() => undefined); // awaited by the catch-ups; a failure surfaces there
  const [keywords] = await Promise.all([
    mode === 'vector' ? undefined : keywordState(core).then(async (k) => (await k.catchUp(head), k)),
    state.catchUp({}, head),
  ]);
  const now = core.now();
  // Which memories may be returned: from the in-memory scope table, or (for metadata
  // conditions, which need whole rows) from the rows of the scope.
  const allowed = filter.empty
    ? undefined
    : filter.needsMetadata
      ? new Set((await matchingRows(core, filter)).map((r) => r.id))
      : state.scopes.matching(filter, now);
  if (allowed?.size === 0) return [];
  const pool = Math.max(limit * 4, 40);

  let keywordRanked: { id: string; score: number; relevance: number }[] = [];
  if (keywords !== undefined) {
    // In-memory postings (lib/engine/keywords/keyword-state.ts): a scope is filtered inside the walk of the
    // query terms' postings or, when small against them (one user of many), its memories alone are
    // scored by binary search in those postings; the ranking is the same either way.
    // Caught up above, with the vector index: not again here.
    const { hits } = keywords.searchCaughtUp(MEMORY_CORPUS, query, {
      depth: pool,
      prune: true,
      ...(allowed === undefined ? {} : { within: allowed }),
    });
    keywordRanked = hits;
  }

  let vectorRanked: { id: string; score: number }[] = [];
  let queryVector: Float32Array | undefined;
  if (embedding !== undefined) {
    queryVector = (await embedding).vectors[0]!;
    // A scope is searched from the index's memory, never by reading its vectors: an exact scan of
    // its members or a filtered graph walk, whichever the measured costs say is cheaper.
    vectorRanked =
      allowed === undefined ? state.index.search(queryVector, pool) : state.index.searchIn(queryVector, pool, allowed);
  }

  // The rows of each side's best are read while the ranking is computed (one wait, not two);
  // a result outside them is read after. One mode's ranking is its side's: its first `limit`
  // rows are read, no spare (each row is a request: 14 instead of 10 cost a vector search at 10k
  // about a third more, bench/peers); hybrid's fused order may differ, so a few spare of each side.
  const spare = mode === 'hybrid' ? ROW_SPARE : 0;
  const want = limit + spare;
  const early = [...new Set([...vectorRanked.slice(0, want), ...keywordRanked.slice(0, want)].map((h) => h.id))];
  const earlyRead = core.db.memories.bulkGet(early);
  earlyRead.catch(() => undefined); // awaited below; a failure surfaces there
  let ranked: FusedHit[];
  if (mode === 'hybrid') {
    // Keyword hits the vector pool missed get their true similarity when they could still be
    // returned: the pool is the best by similarity, so such a hit's similarity is at most the
    // pool's lowest, and its relevance at most that fused with its keyword relevance. One that
    // cannot reach the `limit`-th relevance of the pool's hits is left at the keyword side's.
    const pooled = new Set(vectorRanked.map((h) => h.id));
    const floor = vectorRanked.length >= pool ? vectorRanked[vectorRanked.length - 1]!.score : 1;
    const keywordOf = new Map(keywordRanked.map((h) => [h.id, h.relevance]));
    const pooledRelevance = vectorRanked
      .map((h) => hybridRelevance(h.score, keywordOf.get(h.id), weights))
      .sort((a, b) => b - a);
    const bar = pooledRelevance.length >= limit ? pooledRelevance[limit - 1]! : -Infinity;
    const missing = keywordRanked
      .filter((h) => !pooled.has(h.id) && hybridRelevance(floor, h.relevance, weights) >= bar)
      .map((h) => h.id);
    // From the index's own copies (no store read); only ids it does not hold are read from the store.
    const similarityOf =
      queryVector !== undefined && missing.length > 0
        ? state.index.similarities(queryVector, missing)
        : new Map<string, number>();
    const unheld = missing.filter((id) => !similarityOf.has(id));
    if (queryVector !== undefined && unheld.length > 0)
      for (const [id, s] of await storedScores(core, queryVector, unheld)) similarityOf.set(id, s);
    ranked = fuse(vectorRanked, keywordRanked, { weights, similarityOf });
  } else if (mode === 'vector') {
    ranked = vectorRanked.map((h) => ({ id: h.id, relevance: vectorRelevance(h.score), similarity: h.score }));
  } else {
    ranked = keywordRanked.map((h) => ({
      id: h.id,
      relevance: h.relevance,
      keywordScore: h.score,
      keywordRelevance: h.relevance,
    }));
  }
  if (threshold !== undefined) ranked = ranked.filter((h) => h.relevance >= threshold);

  const out: ScoredMemory[] = [];
  // Whole rows only for the best ranked, a few more than asked for (a row may fail the filter
  // on a second look, e.g. expired since), read again for the next ones while results are missing.
  const read = new Map<string, MemoryRow | undefined>();
  (await earlyRead).forEach((row, i) => read.set(early[i]!, row));
  let next = 0;
  for (let round = 0; out.length < limit && next < ranked.length; round++) {
    const chunk = ranked.slice(next, next + limit - out.length + (round === 0 ? spare : ROW_SPARE));
    next += chunk.length;
    const unread = chunk.map((h) => h.id).filter((id) => !read.has(id));
    if (unread.length > 0) (await core.db.memories.bulkGet(unread)).forEach((row, i) => read.set(unread[i]!, row));
    chunk.forEach((hit) => {
      const row = read.get(hit.id);
      if (out.length === limit || row === undefined || !filter.matches(row, now)) return;
      const item: ScoredMemory = { row, score: hit.relevance };
      if (hit.similarity !== undefined) item.similarity = hit.similarity;
      if (hit.keywordScore !== undefined) item.keywordScore = hit.keywordScore;
      if (hit.keywordRelevance !== undefined) item.keywordRelevance = hit.keywordRelevance;
      out.push(item);
    });
  }
  return out;
}
