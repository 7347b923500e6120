/**
 * Retrieval metrics over questions with labelled evidence: recall@k (any
 * evidence item in the top k) and MRR (reciprocal rank of the first evidence
 * item within the ranked list, 0 when absent).
 */

/** 1-based rank of the first evidence item in `ranked`, or undefined. */
export function firstHit(ranked: readonly string[], evidence: ReadonlySet<string>): number | undefined {
  const at = ranked.findIndex((id) => evidence.has(id));
  return at < 0 ? undefined : at + 1;
}

/** Recall@5, recall@10 and MRR (over a list of at most 10) of one method. */
export interface Scores {
  recallAt5: number;
  recallAt10: number;
  mrr: number;
  questions: number;
}

/** Scores from the first-hit ranks of every question (undefined: not found). */
export function scoresOf(ranks: readonly (number | undefined)[]): Scores {
  const n = ranks.length;
  if (n === 0) return { recallAt5: 0, recallAt10: 0, mrr: 0, questions: 0 };
  const within = (k: number): number => ranks.filter((r) => r !== undefined && r <= k).length / n;
  const mrr = ranks.reduce<number>((sum, r) => sum + (r !== undefined && r <= 10 ? 1 / r : 0), 0) / n;
  return { recallAt5: within(5), recallAt10: within(10), mrr, questions: n };
}
