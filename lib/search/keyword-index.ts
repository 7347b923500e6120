/**
 * Keyword postings in IndexedDB and BM25 ranking over them. A search reads the
 * postings of the query's terms only (one key range per term), never every
 * document, so it stays fast as the conversation log grows.
 */
import { Dexie, type Table } from 'dexie';
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
}

/**
 * BM25 over the postings of the query's terms. Returns every matching document
 * (at least one query term, accepted by the filter), best first; ties keep id order.
 * @example
 * const { hits } = await keywordSearch(db.postings, db.meta, 'm', 'paris trip')
 */
export async function keywordSearch(
  postings: Table<PostingRow, [string, string, string]>,
  meta: Table<MetaRow, string>,
  corpus: Corpus,
  query: string,
  options: KeywordSearchOptions = {},
): Promise<{ hits: KeywordHit[]; total: number }> {
  const terms = queryTerms(query);
  if (terms.length === 0) return { hits: [], total: 0 };
  const [statsRow, ...lists] = await Promise.all([
    meta.get(statsKey(corpus)),
    ...terms.map((k) => postings.where('[c+k+d]').between([corpus, k, Dexie.minKey], [corpus, k, Dexie.maxKey]).toArray()),
  ]);
  const stats = (statsRow?.value as CorpusStats | undefined) ?? { docs: 0, length: 0 };
  const docs = Math.max(stats.docs, 1);
  const avgLength = stats.length > 0 ? stats.length / docs : 1;
  const scores = new Map<string, number>();
  const filter = options.filter;
  for (const list of lists) {
    const df = list.length;
    if (df === 0) continue;
    const idf = Math.log(1 + (docs - df + 0.5) / (df + 0.5));
    for (const p of list) {
      if (filter !== undefined && !filter(p)) continue;
      const tf = (p.f * (K1 + 1)) / (p.f + K1 * (1 - B + (B * p.n) / avgLength));
      scores.set(p.d, (scores.get(p.d) ?? 0) + idf * tf);
    }
  }
  const hits = [...scores].map(([id, score]) => ({ id, score }));
  hits.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  return { hits, total: hits.length };
}
