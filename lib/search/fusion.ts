/**
 * Fusion of keyword and vector search into one relevance in [0, 1], one function for every model:
 *
 * - vector relevance: the cosine similarity (negatives as 0);
 * - keyword relevance: the BM25 score over the most the query's terms could
 *   score (each term's idf × (k1 + 1)); 1 when a document has every query
 *   term as strongly as BM25 counts;
 * - hybrid relevance: each side scaled to [0, 1] as the model's profile says ({@link FusionScale}:
 *   as it is, or min-max over the query's own candidate list), then a noisy-OR,
 *   1 − (1 − v × vector) × (1 − w × keyword), with the weights v and w of the embedding model
 *   (lib/search/retrieval-profile.ts). It is never below v × vector nor w × keyword and monotone
 *   in both: a document above another on both (scaled) sides stays above it, so a result that
 *   both searches rank near the top is never buried (its hybrid rank is at most its vector rank
 *   plus its keyword rank minus one).
 *
 * Why both scales: with `absolute` a relevance means the same across queries, so a threshold cuts
 * what is not relevant; but a sentence model's cosines crowd into a narrow band whose place moves
 * from query to query, and weights fitted on raw scores did not carry over: for MiniLM the noisy-OR
 * of raw scores beat keyword on LoCoMo's tuning half and lost to it on the held-out one.
 * bench/eval/tune.ts chooses the scale per model by leave-one-conversation-out cross-validation on
 * the tuning half, where `per-query` (min-max, Bruch et al. 2023) was ahead for MiniLM; a convex
 * combination, z-scores and weighted reciprocal rank fusion were measured beside it and were no
 * better out of fold (bench/results/REPORT.md, section eval).
 */

/**
 * How each side's scores are put on [0, 1] before they are fused:
 *
 * - `absolute`: the similarity (clamped) and the keyword relevance as they are; a relevance means
 *   the same in every query, so a threshold cuts what is not relevant;
 * - `per-query`: each side min-max over its own candidate list (the best of the vector pool is
 *   1, the pool's lowest 0; the best keyword match 1, the last of the keyword list 0, as no match). A model whose cosines crowd into a narrow band for any text (sentence
 *   models: most turns of a conversation sit within a few hundredths of each other) is then
 *   weighed by where a memory stands in the query's list, not by a cosine that means different
 *   things in different queries (Bruch et al., "An Analysis of Fusion Functions for Hybrid
 *   Retrieval", 2023). A threshold then cuts relative to the query's best.
 */
export type FusionScale = 'absolute' | 'per-query';

/**
 * When a query's vector side is trusted: only when its best similarity stands out from the pool,
 * its best minus its `depth`-th (or its last, in a shorter pool) at least `margin`; otherwise the
 * vector side is worth `weight` instead of the model's weight. Per-query scaling makes any pool's
 * best 1, also where the model sees nothing near the query (every turn within a few hundredths);
 * the margin tells the two apart (bench/eval/tune.ts, step 2b).
 */
export interface VectorGate {
  readonly depth: number;
  readonly margin: number;
  readonly weight: number;
}

/** The parameters of hybrid fusion. */
export interface FusionWeights {
  /** What the model's (scaled) similarity is worth, in [0, 1]. */
  vector: number;
  /** What (scaled) keyword relevance is worth, in [0, 1]. */
  keyword: number;
  /** How each side is scaled before fusion. @default 'absolute' */
  scale?: FusionScale;
  /** When the vector side is worth less, {@link VectorGate}. @default none: always `vector` */
  gate?: VectorGate;
}

/**
 * The weights one query is fused with: `weights` with its gate applied to the query's vector pool
 * (similarities best first), and no gate left.
 * @example
 * gatedWeights([{ score: 0.5 }, { score: 0.48 }], { vector: 1, keyword: 1, gate: { depth: 40, margin: 0.15, weight: 0.2 } }) // { vector: 0.2, keyword: 1 }
 */
export function gatedWeights(vector: readonly { score: number }[], weights: FusionWeights): FusionWeights {
  const { gate, ...rest } = weights;
  if (gate === undefined) return weights;
  const best = vector[0]?.score;
  const deep = vector[Math.min(gate.depth, vector.length) - 1]?.score;
  const margin = best === undefined || deep === undefined ? 0 : best - deep;
  return margin >= gate.margin ? rest : { ...rest, vector: gate.weight };
}

/** The weights for an embedder search knows nothing about (lib/search/retrieval-profile.ts). */
export const DEFAULT_FUSION_WEIGHTS: FusionWeights = Object.freeze({ vector: 1, keyword: 0.9, scale: 'absolute' });

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
  return combine(vectorRelevance(similarity ?? 0), clamp(keyword ?? 0), weights);
}

/**
 * The noisy-OR of two scaled scores in [0, 1]: 1 − (1 − v × vector) × (1 − w × keyword). In [0, 1],
 * never below either weighted input, monotone in each.
 * @example
 * combine(0.5, 1, { vector: 1, keyword: 0.9 }) // 0.95
 */
export function combine(vector: number, keyword: number, weights: FusionWeights): number {
  return 1 - (1 - clamp(weights.vector) * clamp(vector)) * (1 - clamp(weights.keyword) * clamp(keyword));
}

/** How one query's two sides are put on [0, 1] ({@link FusionScale}): a function per side. */
export interface FusionScaling {
  /** A similarity on the scale of the fusion, in [0, 1]. */
  vector: (similarity: number | undefined) => number;
  /** A keyword relevance on the scale of the fusion, in [0, 1]. */
  keyword: (relevance: number | undefined) => number;
}

/**
 * The scaling of one query's sides under `weights.scale`: `absolute` is the identity (clamped);
 * `per-query` reads the bounds of the lists as given, each best first (the candidate pools, so
 * the last is a pool's lowest). A score at or below its pool's lowest, or a side with nothing,
 * scales to 0; a pool whose scores are all equal (one keyword match) scales its members to 1.
 * @example
 * fusionScaling([{ id: 'a', score: 0.8 }, { id: 'b', score: 0.6 }], [], { vector: 1, keyword: 1, scale: 'per-query' }).vector(0.7) // 0.5
 */
export function fusionScaling(
  vector: readonly { score: number }[],
  keyword: readonly { relevance: number }[],
  weights: FusionWeights,
): FusionScaling {
  if ((weights.scale ?? 'absolute') === 'absolute')
    return { vector: (s) => vectorRelevance(s ?? 0), keyword: (k) => clamp(k ?? 0) };
  const minMax = (scores: readonly number[]): ((x: number | undefined) => number) => {
    if (scores.length === 0) return () => 0;
    const high = scores[0]!;
    const low = scores[scores.length - 1]!;
    return (x) => (x === undefined ? 0 : high > low ? clamp((x - low) / (high - low)) : x >= high ? 1 : 0);
  };
  return { vector: minMax(vector.map((h) => h.score)), keyword: minMax(keyword.map((h) => h.relevance)) };
}

/**
 * Each document either side found, once: its similarity (the vector side's, or a known one for a
 * document only the keyword side found) and its keyword score and relevance; relevance still 0.
 */
function joinedHits(
  vector: readonly { id: string; score: number }[],
  keyword: readonly { id: string; score: number; relevance: number }[],
  similarityOf: ReadonlyMap<string, number> | undefined,
): Map<string, FusedHit> {
  const hits = new Map<string, FusedHit>();
  for (const h of vector) hits.set(h.id, { id: h.id, relevance: 0, similarity: h.score });
  for (const h of keyword) {
    const hit = hits.get(h.id) ?? { id: h.id, relevance: 0 };
    const known = similarityOf?.get(h.id);
    if (hit.similarity === undefined && known !== undefined) hit.similarity = known;
    hit.keywordScore = h.score;
    hit.keywordRelevance = h.relevance;
    hits.set(h.id, hit);
  }
  return hits;
}

/**
 * Fuses vector hits (cosine similarity, best first: the candidate pool) and keyword hits (BM25
 * score and keyword relevance, best first) into one list ordered by hybrid relevance, best first,
 * ties in id order: the weights gated by the vector pool ({@link gatedWeights}), each side scaled by
 * {@link fusionScaling}, then {@link hybridRelevance}. A
 * document only one side found gets 0 from the other, unless `similarityOf` knows its similarity
 * (the caller computes it exactly for keyword hits the vector pool missed).
 * @example
 * fuse([{ id: 'a', score: 0.62 }], [{ id: 'b', score: 4.1, relevance: 0.8 }])
 */
export function fuse(
  vector: readonly { id: string; score: number }[],
  keyword: readonly { id: string; score: number; relevance: number }[],
  options: { weights?: FusionWeights; similarityOf?: ReadonlyMap<string, number> } = {},
): FusedHit[] {
  const weights = gatedWeights(vector, options.weights ?? DEFAULT_FUSION_WEIGHTS);
  const scaling = fusionScaling(vector, keyword, weights);
  const hits = joinedHits(vector, keyword, options.similarityOf);
  for (const hit of hits.values())
    hit.relevance = combine(scaling.vector(hit.similarity), scaling.keyword(hit.keywordRelevance), weights);
  return [...hits.values()].sort((a, b) => b.relevance - a.relevance || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
