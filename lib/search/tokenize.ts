/**
 * lib/search owns text matching and ranking: tokenizing, the keyword terms
 * index and BM25, fusion of keyword and vector rankings, and filters. It reads
 * terms rows through tables handed to it; it must not import the engine,
 * the vector index or the embedder.
 */

/** Words too common to carry meaning; not indexed, ignored in queries. */
const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be but by for from had has have he her his i if in into is it its me my no not of on or our ' +
    'she so than that the their them then there these they this to was we were what when where which who will with ' +
    'you your'
  ).split(' '),
);

const MAX_TERM_LENGTH = 64;
const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Lower-cased word tokens with diacritics removed and punctuation dropped;
 * stopwords stay in (callers that index use {@link termFrequencies}).
 * @example
 * tokenize("Café, au-lait!") // ['cafe', 'au', 'lait']
 */
export function tokenize(text: string): string[] {
  const folded = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
  return folded.match(WORD)?.filter((t) => t.length <= MAX_TERM_LENGTH) ?? [];
}

/** The indexable terms of a text with their counts, and the document length in terms. */
export function termFrequencies(text: string): { terms: Map<string, number>; length: number } {
  const terms = new Map<string, number>();
  let length = 0;
  for (const token of tokenize(text)) {
    if (STOPWORDS.has(token)) continue;
    length++;
    terms.set(token, (terms.get(token) ?? 0) + 1);
  }
  return { terms, length };
}

/** The distinct indexable terms of a query, in order of first appearance. */
export function queryTerms(text: string): string[] {
  return [...termFrequencies(text).terms.keys()];
}
