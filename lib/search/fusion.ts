/**
 * Fusion of keyword and vector search into one relevance in [0, 1], so that a
 * number shown to a user, or a threshold, means the same in every mode:
 *
 * - vector relevance: the cosine similarity (negatives as 0);
 * - keyword relevance: the BM25 score over the most the query's terms could
 *   score (each term's idf × (k1 + 1)); 1 when a document has every query
 *   term as strongly as BM25 counts;
 * - hybrid relevance: a noisy-OR, 1 − (1 − v × similarity) × (1 − w × keyword),
 *   with the weights v and w of the embedding model (lib/search/retrieval-profile.ts).
 *   It is never below v × similarity nor w × keyword, it grows with each, and it
 *   is monotone in both: a document above another on both sides stays above
 *   it, so a result that both searches rank near the top is never buried (its
 *   hybrid rank is at most its vector rank plus its keyword rank minus one).
 *   With v = 1 (the profile of a model search knows nothing about) it is never
 *   below the similarity either.
 *
 * Why a noisy-OR of scores rather than a fusion of ranks: the result stays a
 * relevance that means the same across queries, so a threshold can cut what is
 * not relevant; reciprocal rank fusion gives the best of every query the same
 * score. bench/eval/tune.ts measures both on the tuning halves: with GloVe they
 * are within a question or two; with MiniLM weighted reciprocal rank fusion (1:1,
 * k = 1) was ahead on LoCoMo's tuning half (recall@5 0.630 against 0.607, @10
 * 0.725 against 0.711), a gain kept for later because its scores would not be
 * relevances; see bench/results/REPORT.md, section eval. The quality round of issue 22 measured
 * more (100 of each side instead of 40, a convex combination with the similarity rescaled above a
 * floor, RRF over a wider grid): on LoCoMo's tuning half none moved e5's hybrid by more than half a
 * point, and only weighted RRF kept hybrid at or above both inputs on every generated tuning set
 * too; the noisy-OR stays, for its relevances.
 */

/** The two weights of hybrid fusion. */
export interface FusionWeights {
  /** What the model's cosine similarity is worth, in [0, 1]. */
  vector: number;
  /** What keyword relevance is worth, in [0, 1]. */
  keyword: number;
}

/** The weights for an embedder search knows nothing about (lib/search/retrieval-profile.ts). */
export const DEFAULT_FUSION_WEIGHTS: FusionWeights = Object.freeze({ vector: 1, keyword: 0.9 });

/** One document's relevance from one or both searches. */
export interface FusedHit {
  id: string;
  /** Fused relevance in [0, 1]. */
  relevance: number;
  /** Cosine similarity with the query, when the vector side scored it. */
  similarity?: number;
  /** BM25 score, when the keyword side matched it. */
  keywordScore?: number;
  /** BM25 score over its bound for the query, in [0, 1]. */
  keywordRelevance?: number;
}

const clamp = (x: number): number => (x <= 0 ? 0 : x >= 1 ? 1 : x);

/**
 * Vector relevance: the cosine similarity clamped to [0, 1].
 * @example
 * vectorRelevance(-0.2) // 0
 */
export function vectorRelevance(similarity: number): number {
  return clamp(similarity);
}

/**
 * Keyword relevance: a BM25 score over the query's bound, clamped to [0, 1].
 * @example
 * keywordRelevance(3.1, 6.2) // 0.5
 */
export function keywordRelevance(score: number, bound: number): number {
  return bound > 0 ? clamp(score / bound) : 0;
}

/**
 * Hybrid relevance of a document from its similarity and keyword relevance
 * (either may be missing: 0).
 * @example
 * hybridRelevance(0.5, 1) // 0.95 with the default weights (1, 0.9)
 * hybridRelevance(0.5, 1, { vector: 0.25, keyword: 1 }) // 1
 */
export function hybridRelevance(
  similarity: number | undefined,
  keyword: number | undefined,
  weights: FusionWeights = DEFAULT_FUSION_WEIGHTS,
): number {
  return (
    1 -
    (1 - clamp(weights.vector) * vectorRelevance(similarity ?? 0)) * (1 - clamp(weights.keyword) * clamp(keyword ?? 0))
  );
}

/**
 * Fuses vector hits (cosine similarity) and keyword hits (BM25 score and
 * keyword relevance) into one list ordered by hybrid relevance, best first,
 * ties in id order. A document only one side found gets 0 from the other,
 * unless `similarityOf` knows its similarity (the caller computes it exactly
 * for keyword hits the vector pool missed).
 * @example
 * fuse([{ id: 'a', score: 0.62 }], [{ id: 'b', score: 4.1, relevance: 0.8 }])
 */
export function fuse(
  vector: readonly { id: string; score: number }[],
  keyword: readonly { id: string; score: number; relevance: number }[],
  options: { weights?: FusionWeights; similarityOf?: ReadonlyMap<string, number> } = {},
): FusedHit[] {
  const weights = options.weights ?? DEFAULT_FUSION_WEIGHTS;
  const hits = new Map<string, FusedHit>();
  for (const h of vector) hits.set(h.id, { id: h.id, relevance: 0, similarity: h.score });
  for (const h of keyword) {
    const hit = hits.get(h.id) ?? { id: h.id, relevance: 0 };
    const known = options.similarityOf?.get(h.id);
    if (hit.similarity === undefined && known !== undefined) hit.similarity = known;
    hit.keywordScore = h.score;
    hit.keywordRelevance = h.relevance;
    hits.set(h.id, hit);
  }
  for (const hit of hits.values()) hit.relevance = hybridRelevance(hit.similarity, hit.keywordRelevance, weights);
  return [...hits.values()].sort((a, b) => b.relevance - a.relevance || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
