/**
 * Reciprocal rank fusion: merges rankings (vector and keyword) by summing
 * 1 / (k + rank) for each list an item appears in.
 */

/** The constant of RRF (Cormack et al. use 60). */
export const RRF_K = 60;

/** A fused item with its score and its rank in each input list (1-based, undefined when absent). */
export interface FusedHit {
  id: string;
  score: number;
  ranks: (number | undefined)[];
}

/**
 * Fuses ranked id lists, best first.
 * @example
 * reciprocalRankFusion([['a', 'b'], ['b', 'c']]) // b first: it is in both lists
 */
export function reciprocalRankFusion(lists: readonly (readonly string[])[], k = RRF_K): FusedHit[] {
  const fused = new Map<string, FusedHit>();
  lists.forEach((list, li) => {
    list.forEach((id, i) => {
      const hit = fused.get(id) ?? { id, score: 0, ranks: lists.map(() => undefined) };
      hit.score += 1 / (k + i + 1);
      hit.ranks[li] = i + 1;
      fused.set(id, hit);
    });
  });
  return [...fused.values()].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
