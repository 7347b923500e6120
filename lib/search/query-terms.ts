/**
 * A keyword query is bounded: a pasted page or a 0.5 MB string becomes at most
 * {@link MAX_QUERY_TERMS} distinct terms, the rarest ones (they carry the
 * most weight in BM25, and the common ones would walk the longest postings).
 */

/** The most distinct terms a keyword query walks. */
export const MAX_QUERY_TERMS = 64;

/**
 * The query's distinct terms, at most `max`: terms some document holds, rarest
 * first (ties in query order), then terms no document holds. Order of the
 * result follows the query.
 * @example
 * rarestTerms(['m:the', 'm:quokka', 'm:the'], (k) => (k === 'm:the' ? 900 : 1), 1) // ['m:quokka']
 */
export function rarestTerms(
  keys: readonly string[],
  documentFrequency: (key: string) => number,
  max = MAX_QUERY_TERMS,
): string[] {
  const distinct = [...new Set(keys)];
  if (distinct.length <= max) return distinct;
  const ranked = distinct.map((key, at) => ({ key, at, df: documentFrequency(key) }));
  ranked.sort((a, b) => (a.df === 0 ? 1 : 0) - (b.df === 0 ? 1 : 0) || a.df - b.df || a.at - b.at);
  return ranked
    .slice(0, max)
    .sort((a, b) => a.at - b.at)
    .map((t) => t.key);
}
