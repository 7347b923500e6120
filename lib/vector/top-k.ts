/**
 * The best k of a stream of scored positions, with the ordering every index
 * returns (higher score first, ties to the smaller id): one rule for the exact
 * scan, the scan of a scope, and the HNSW fallbacks.
 */
import type { VectorHit } from './vector-index.js';

/**
 * Keeps the best `k` (score, position) pairs in a min-heap; `ids[position]`
 * names a hit and breaks ties (the smaller id wins).
 * @example
 * const top = new TopK(10, ids);
 * scores.forEach((s, i) => top.offer(s, i));
 * top.sorted(); // [{ id, score }, …] best first
 */
export class TopK {
  readonly #scores: Float64Array;
  readonly #slots: Int32Array;
  readonly #ids: readonly string[];
  #size = 0;

  constructor(k: number, ids: readonly string[]) {
    this.#scores = new Float64Array(k);
    this.#slots = new Int32Array(k);
    this.#ids = ids;
  }

  /** True when hit a is worse than hit b. */
  #worse(scoreA: number, slotA: number, scoreB: number, slotB: number): boolean {
    if (scoreA !== scoreB) return scoreA < scoreB;
    return this.#ids[slotA]! > this.#ids[slotB]!;
  }

  offer(score: number, slot: number): void {
    if (this.#size < this.#scores.length) this.#siftUp(this.#size++, score, slot);
    else if (this.#worse(this.#scores[0]!, this.#slots[0]!, score, slot)) this.#siftDown(score, slot);
  }

  /** Places a hit in free heap position `i` (the heap not yet full), moving worse parents down. */
  #siftUp(i: number, score: number, slot: number): void {
    const scores = this.#scores;
    const slots = this.#slots;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#worse(score, slot, scores[parent]!, slots[parent]!)) break;
      scores[i] = scores[parent]!;
      slots[i] = slots[parent]!;
      i = parent;
    }
    scores[i] = score;
    slots[i] = slot;
  }

  /** Replaces the worst hit (the root of the full heap) by a better one, moving worse children up. */
  #siftDown(score: number, slot: number): void {
    const scores = this.#scores;
    const slots = this.#slots;
    const k = scores.length;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= k) break;
      const right = left + 1;
      const child = right < k && this.#worse(scores[right]!, slots[right]!, scores[left]!, slots[left]!) ? right : left;
      if (!this.#worse(scores[child]!, slots[child]!, score, slot)) break;
      scores[i] = scores[child]!;
      slots[i] = slots[child]!;
      i = child;
    }
    scores[i] = score;
    slots[i] = slot;
  }

  sorted(): VectorHit[] {
    const order = Array.from({ length: this.#size }, (_, i) => i);
    order.sort((a, b) => (this.#worse(this.#scores[a]!, this.#slots[a]!, this.#scores[b]!, this.#slots[b]!) ? 1 : -1));
    return order.map((i) => ({ id: this.#ids[this.#slots[i]!]!, score: this.#scores[i]! }));
  }
}
