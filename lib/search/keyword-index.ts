/**
 * Keyword postings in IndexedDB and BM25 ranking over them. A search reads the
 * postings of the query's terms only (one key range per term), never every
 * document, so it stays fast as the conversation log grows.
 */
import { Dexie, type Collection, type Table } from 'dexie';
import type { MetaRow, PostingRow } from '../store/rows.js';
import { queryTerms, termFrequencies } from './tokenize.js';

/** Which document collection postings belong to: 'm' messages, 'v' memories. */
export type Corpus = PostingRow['c'];

/** Fields copied into every posting of a document so filters need no other read. */
export type PostingFields = Pick<PostingRow, 't' | 'a' | 'u' | 'r'>;

/** Document count and total length of a corpus, for BM25's length normalisation. */
export interface CorpusStats {
  docs: number;
  length: number;
}

const K1 = 1.2;
const B = 0.75;

/** The meta key under which a corpus's statistics live. */
export function statsKey(corpus: Corpus): string {
  return `stats:${corpus}`;
}

/** The postings of one document; `length` is its length in indexed terms. */
export function postingsOf(corpus: Corpus, id: string, text: string, fields: PostingFields = {}): { rows: PostingRow[]; length: number } {
  const { terms, length } = termFrequencies(text);
  const rows: PostingRow[] = [];
  for (const [k, f] of terms) rows.push({ c: corpus, k, d: id, f, n: length, ...fields });
  return { rows, length };
}

/** The primary keys of a document's postings, for deleting them. */
export function postingKeys(corpus: Corpus, id: string, text: string): [string, string, string][] {
  return [...termFrequencies(text).terms.keys()].map((k) => [corpus, k, id]);
}

/** A ranked keyword hit. */
export interface KeywordHit {
  id: string;
  score: number;
}

/** Options of {@link keywordSearch}. */
export interface KeywordSearchOptions {
  /** Keeps only postings (documents) it accepts. */
  filter?: (posting: PostingRow) => boolean;
  /**
   * Only the best `depth` hits need exact scores and order (start + count of the
   * page asked for). Lets an unfiltered search skip reading the postings of very
   * common terms (MaxScore): they can no longer change the top `depth`.
   * @default Infinity
   */
  depth?: number;
}

type PostingTable = Table<PostingRow, [string, string, string]>;

function termRange(postings: PostingTable, corpus: Corpus, k: string): Collection<PostingRow, [string, string, string]> {
  return postings.where('[c+k+d]').between([corpus, k, Dexie.minKey], [corpus, k, Dexie.maxKey]);
}

/**
 * BM25 over the postings of the query's terms. Returns matching documents (at
 * least one query term, accepted by the filter), best first, ties in id order,
 * and how many matched in all. The first `depth` hits are exact; without a
 * filter, the postings of terms too common to reach the top `depth` are not
 * read, only looked up for the contenders and counted for the total.
 * @example
 * const { hits, total } = await keywordSearch(db.postings, db.meta, 'm', 'paris trip', { depth: 10 })
 */
export async function keywordSearch(
  postings: PostingTable,
  meta: Table<MetaRow, string>,
  corpus: Corpus,
  query: string,
  options: KeywordSearchOptions = {},
): Promise<{ hits: KeywordHit[]; total: number }> {
  const terms = queryTerms(query);
  if (terms.length === 0) return { hits: [], total: 0 };
  const [statsRow, ...dfs] = await Promise.all([meta.get(statsKey(corpus)), ...terms.map((k) => termRange(postings, corpus, k).count())]);
  const stats = (statsRow?.value as CorpusStats | undefined) ?? { docs: 0, length: 0 };
  const docs = Math.max(stats.docs, 1);
  const avgLength = stats.length > 0 ? stats.length / docs : 1;
  const weighted = terms
    .map((k, i) => {
      const df = dfs[i] ?? 0;
      const idf = Math.log(1 + (docs - df + 0.5) / (df + 0.5));
      return { k, df, idf, bound: idf * (K1 + 1) };
    })
    .filter((t) => t.df > 0)
    .sort((a, b) => b.bound - a.bound);
  const contribution = (idf: number, p: PostingRow): number => (idf * p.f * (K1 + 1)) / (p.f + K1 * (1 - B + (B * p.n) / avgLength));
  const scores = new Map<string, number>();
  const filter = options.filter;
  const depth = options.depth ?? Infinity;
  let read = 0;
  for (; read < weighted.length; read++) {
    if (filter === undefined && scores.size >= depth) {
      const rest = weighted.slice(read).reduce((sum, t) => sum + t.bound, 0);
      if (rest < kthLargest([...scores.values()], depth)) break;
    }
    const t = weighted[read]!;
    for (const p of await termRange(postings, corpus, t.k).toArray()) {
      if (filter !== undefined && !filter(p)) continue;
      scores.set(p.d, (scores.get(p.d) ?? 0) + contribution(t.idf, p));
    }
  }
  const skipped = weighted.slice(read);
  let total = scores.size;
  if (skipped.length > 0) {
    // Contenders: documents that could still reach the top `depth` with every skipped term.
    const threshold = kthLargest([...scores.values()], depth);
    const rest = skipped.reduce((sum, t) => sum + t.bound, 0);
    const contenders = [...scores].filter(([, score]) => score + rest >= threshold).map(([d]) => d);
    for (const t of skipped) {
      const found = await postings.bulkGet(contenders.map((d): [string, string, string] => [corpus, t.k, d]));
      for (const p of found) if (p !== undefined) scores.set(p.d, (scores.get(p.d) ?? 0) + contribution(t.idf, p));
    }
    total = await unionSize(postings, corpus, skipped, new Set(scores.keys()));
  }
  const hits = [...scores].map(([id, score]) => ({ id, score }));
  hits.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  return { hits, total };
}

function kthLargest(values: number[], k: number): number {
  if (values.length < k) return -Infinity;
  values.sort((a, b) => b - a);
  return values[k - 1]!;
}

/**
 * How many documents contain any query term: the documents already read, plus
 * the skipped terms' postings, counting the largest list by its size alone.
 */
async function unionSize(postings: PostingTable, corpus: Corpus, skipped: { k: string; df: number }[], seen: Set<string>): Promise<number> {
  const largest = skipped.reduce((a, b) => (b.df > a.df ? b : a));
  for (const t of skipped) {
    if (t === largest) continue;
    for (const key of await termRange(postings, corpus, t.k).primaryKeys()) seen.add(key[2]);
  }
  const ids = [...seen];
  const inLargest = (await postings.bulkGet(ids.map((d): [string, string, string] => [corpus, largest.k, d]))).filter((p) => p !== undefined).length;
  return largest.df + ids.length - inLargest;
}
