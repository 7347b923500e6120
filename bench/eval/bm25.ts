/**
 * A plain BM25 baseline, independent of engram's code: lower-cased word
 * tokens (letters and digits), no stemming, no stopwords, k1 = 1.2, b = 0.75,
 * Lucene's idf. It is the yardstick every engram mode is compared with in the
 * same run.
 */

const K1 = 1.2;
const B = 0.75;
const WORD = /[\p{L}\p{N}]+/gu;

/** Lower-cased word tokens. */
export function plainTokens(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

/** A BM25 index over a fixed set of documents. */
export class Bm25 {
  readonly #ids: string[] = [];
  readonly #lengths: number[] = [];
  readonly #postings = new Map<string, Map<number, number>>();
  #total = 0;

  /** Indexes `docs` (id, text). */
  constructor(docs: readonly { id: string; text: string }[], tokens: (text: string) => string[] = plainTokens) {
    this.tokens = tokens;
    docs.forEach((doc, d) => {
      const terms = tokens(doc.text);
      this.#ids.push(doc.id);
      this.#lengths.push(terms.length);
      this.#total += terms.length;
      for (const t of terms) {
        let posting = this.#postings.get(t);
        if (posting === undefined) this.#postings.set(t, (posting = new Map<number, number>()));
        posting.set(d, (posting.get(d) ?? 0) + 1);
      }
    });
  }

  readonly tokens: (text: string) => string[];

  /** The best `k` document ids for `query`, best first (ties in document order). */
  search(query: string, k: number): string[] {
    return this.searchScored(query, k).map((h) => h.id);
  }

  /** The best `k` documents for `query` with their scores. */
  searchScored(query: string, k: number): { id: string; score: number }[] {
    return this.searchTerms(this.tokens(query), k);
  }

  /** The highest score any document could reach for these query terms (each term's idf × (k1 + 1)). */
  bound(terms: readonly string[]): number {
    const n = this.#ids.length;
    let sum = 0;
    for (const term of new Set(terms)) {
      const df = this.#postings.get(term)?.size ?? 0;
      if (df > 0) sum += Math.log(1 + (n - df + 0.5) / (df + 0.5)) * (K1 + 1);
    }
    return sum;
  }

  /** The best `k` documents for already analysed query terms. */
  searchTerms(terms: readonly string[], k: number): { id: string; score: number }[] {
    const n = this.#ids.length;
    const avg = n === 0 ? 1 : this.#total / n;
    const scores = new Map<number, number>();
    for (const term of new Set(terms)) {
      const posting = this.#postings.get(term);
      if (posting === undefined) continue;
      const idf = Math.log(1 + (n - posting.size + 0.5) / (posting.size + 0.5));
      for (const [d, f] of posting) {
        const norm = f + K1 * (1 - B + (B * this.#lengths[d]!) / avg);
        scores.set(d, (scores.get(d) ?? 0) + (idf * f * (K1 + 1)) / norm);
      }
    }
    return [...scores]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, k)
      .map(([d, score]) => ({ id: this.#ids[d]!, score }));
  }
}
