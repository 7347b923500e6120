/**
 * Which results of a memories-view search are listed as matches, decided as the
 * library decides recall: in hybrid mode a result must be recalled (isRecalled:
 * the model's minRelevance and, where its fusion is per query, evidence from a
 * keyword match or a cosine at minSimilarity), not merely score high. With a
 * per-query fusion (MiniLM) the query's nearest memory scores near 1 whether or
 * not anything fits, so a cut on the score alone lists unrelated memories for a
 * question never told. Pure, so that Node tests run it with the real model.
 */
import {
  isRecalled,
  retrievalProfile,
  type Engram,
  type MemoryFilters,
  type RetrievalProfile,
  type SearchMode,
  type SearchResult,
} from '../../lib/index.js';

/** How many results a memories-view search asks for. */
export const SEARCH_LIMIT = 50;

/**
 * The relevance a result needs to be listed as a match: the embedding model's
 * measured `minRelevance` for hybrid (where a match also needs evidence, {@link isMatch}),
 * its `minSimilarity` (a cosine) for meaning search, and any keyword match for keyword
 * search (its relevance is a share of the query's terms).
 * @example
 * matchThreshold('vector', retrievalProfile('engram-glove-100d')) // 0.35
 */
export function matchThreshold(mode: SearchMode, profile: RetrievalProfile): number {
  if (mode === 'hybrid') return profile.minRelevance;
  if (mode === 'vector') return profile.minSimilarity;
  return Number.MIN_VALUE;
}

/**
 * Whether a result of a search in `mode` is a match under the model's `profile`: hybrid as
 * recall decides ({@link isRecalled}), the other modes by their {@link matchThreshold}.
 * @example
 * isMatch({ ...result, score: 0.98, similarity: 0.1 }, 'hybrid', retrievalProfile('Xenova/all-MiniLM-L6-v2')) // false
 */
export function isMatch(
  result: Pick<SearchResult, 'score' | 'similarity' | 'keywordRelevance'>,
  mode: SearchMode,
  profile: RetrievalProfile,
): boolean {
  if (mode === 'hybrid') return isRecalled(result, profile);
  return result.score >= matchThreshold(mode, profile);
}

/** A memories-view search: its matches, the weaker results (shown on request), and the cut. */
export interface MemoryMatches {
  matches: SearchResult[];
  weaker: SearchResult[];
  /** The relevance (cosine in meaning mode) below which a result is weaker. */
  threshold: number;
  /** Whether a hybrid result also needs evidence (the model's fusion is per query). */
  needsEvidence: boolean;
}

/**
 * Searches `engram` as the memories view does and splits the results into matches and weaker ones.
 * @example
 * const { matches } = await findMatches(engram, 'Where does my sister live?', { mode: 'hybrid' });
 */
export async function findMatches(
  engram: Engram,
  query: string,
  options: { mode: SearchMode; filters?: MemoryFilters },
): Promise<MemoryMatches> {
  const { mode, filters } = options;
  const { results } = await engram.search(query, {
    mode,
    limit: SEARCH_LIMIT,
    ...(filters === undefined ? {} : { filters }),
  });
  const profile = retrievalProfile((await engram.ready()).embedderId);
  const matches: SearchResult[] = [];
  const weaker: SearchResult[] = [];
  for (const r of results) (isMatch(r, mode, profile) ? matches : weaker).push(r);
  return {
    matches,
    weaker,
    threshold: matchThreshold(mode, profile),
    needsEvidence: mode === 'hybrid' && profile.fusionScale === 'per-query',
  };
}
