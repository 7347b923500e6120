/**
 * The keyword index in IndexedDB and BM25 ranking over it. Each document has
 * one terms row, multi-entry indexed by term; a search reads the rows of the
 * query's terms only (one index range per term), never every document, so it
 * stays fast as the conversation log grows.
 */
import type { Table } from 'dexie';
import {
  readTermsRow,
  statsKey,
  termKey,
  type Corpus,
  type CorpusStats,
  type TermsEntry,
} from '../store/keyword-terms.js';
import type { MetaRow, TermsRow } from '../store/rows.js';
import { ENGLISH_ANALYZER, type Analyzer } from './analyze.js';
import { rarestTerms } from './query-terms.js';

type TermsTable = Table<TermsRow, [string, string]>;

const K1 = 1.2;
const B = 0.75;

/** A ranked keyword hit. */
export interface KeywordHit {
  id: string;
  /** BM25 score. */
  score: number;
  /** The score over the most this query could score (see `bound`), in [0, 1]. */
  relevance: number;
}

/** Options of {@link keywordSearch}. */
export interface KeywordSearchOptions {
  /** Keeps only documents whose terms entry it accepts. */
  filter?: (entry: TermsEntry) => boolean;
  /**
   * Only the best `depth` hits need exact scores and order (start + count of the
   * page asked for). Lets an unfiltered search skip reading the rows of very
   * common terms (MaxScore): they can no longer change the top `depth`.
   * @default Infinity
   */
  depth?: number;
  /**
   * Turns the query into terms; must be the analyzer the documents were indexed with.
   * @default ENGLISH_ANALYZER
   */
  analyzer?: Analyzer;
}

interface WeightedTerm {
  key: string;
  df: number;
  idf: number;
  /** The most one occurrence list can add to a score. */
  bound: number;
}

/**
 * BM25 over the terms rows of the query's terms. Returns matching documents (at
 * least one query term, accepted by the filter), best first, ties in id order,
 * and how many matched in all. The first `depth` hits are exact; without a
 * filter, the rows of terms too common to reach the top `depth` are not read,
 * only counted.
 * @example
 * const { hits, total } = await keywordSearch(db.terms, db.meta, 'm', 'paris trip', { depth: 10 })
 */
export async function keywordSearch(
  terms: TermsTable,
  meta: Table<MetaRow, string>,
  corpus: Corpus,
  query: string,
  options: KeywordSearchOptions = {},
): Promise<{ hits: KeywordHit[]; total: number; bound: number }> {
  const asked = [...new Set((options.analyzer ?? ENGLISH_ANALYZER).query(query).map((t) => termKey(corpus, t)))];
  if (asked.length === 0) return { hits: [], total: 0, bound: 0 };
  const [statsRow, ...askedDfs] = await Promise.all([
    meta.get(statsKey(corpus)),
    ...asked.map((k) => terms.where('k').equals(k).count()),
  ]);
  // Bounded like the in-memory search: the rarest MAX_QUERY_TERMS terms.
  const dfOf = new Map(asked.map((k, i) => [k, askedDfs[i] ?? 0]));
  const keys = rarestTerms(asked, (k) => dfOf.get(k) ?? 0);
  const dfs = keys.map((k) => dfOf.get(k) ?? 0);
  const stats = (statsRow?.value as CorpusStats | undefined) ?? { docs: 0, length: 0 };
  const docs = Math.max(stats.docs, 1);
  const avgLength = stats.length > 0 ? stats.length / docs : 1;
  const all: WeightedTerm[] = keys.map((key, i) => {
    const df = dfs[i] ?? 0;
    const idf = Math.log(1 + (docs - df + 0.5) / (df + 0.5));
    return { key, df, idf, bound: idf * (K1 + 1) };
  });
  // The most a document could score: every query term, including those no document has (they count against relevance).
  const bound = all.reduce((sum, t) => sum + t.bound, 0);
  const weighted = all.filter((t) => t.df > 0).sort((a, b) => b.bound - a.bound);
  /** BM25 contribution of one term to one document (0 when the document lacks it). */
  const contribution = (t: WeightedTerm, entry: TermsEntry): number => {
    const at = entry.keys.indexOf(t.key);
    if (at < 0) return 0;
    const f = entry.counts[at]!;
    return (t.idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * entry.length) / avgLength));
  };
  const rows = new Map<string, TermsEntry>();
  const scores = new Map<string, number>();
  const { filter } = options;
  const depth = options.depth ?? Infinity;
  let read = 0;
  for (; read < weighted.length; read++) {
    if (filter === undefined && scores.size >= depth) {
      const rest = weighted.slice(read).reduce((sum, t) => sum + t.bound, 0);
      if (rest < kthLargest([...scores.values()], depth)) break;
    }
    const term = weighted[read]!;
    for (const entry of await readEntries(terms, term.key)) {
      if (filter !== undefined && !filter(entry)) continue;
      rows.set(entry.docId, entry);
      scores.set(entry.docId, (scores.get(entry.docId) ?? 0) + contribution(term, entry));
    }
  }
  const skipped = weighted.slice(read);
  let total = scores.size;
  if (skipped.length > 0) {
    // Every document read so far gets the skipped terms' share from its own row: no further reads.
    for (const [d, row] of rows)
      scores.set(d, scores.get(d)! + skipped.reduce((sum, t) => sum + contribution(t, row), 0));
    total = await unionSize(terms, skipped, rows);
  }
  const hits = [...scores].map(([id, score]) => ({ id, score, relevance: bound > 0 ? Math.min(1, score / bound) : 0 }));
  hits.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  return { hits, total, bound };
}

function kthLargest(values: number[], k: number): number {
  if (values.length < k) return -Infinity;
  values.sort((a, b) => b - a);
  return values[k - 1]!;
}

/**
 * How many documents contain any query term: the largest skipped list counted
 * by the index alone, plus every other matching document that lacks its term.
 */
async function unionSize(terms: TermsTable, skipped: WeightedTerm[], seen: Map<string, TermsEntry>): Promise<number> {
  const largest = skipped.reduce((a, b) => (b.df > a.df ? b : a));
  const others = new Map(seen);
  for (const t of skipped) {
    if (t === largest) continue;
    for (const entry of await readEntries(terms, t.key)) others.set(entry.docId, entry);
  }
  let outside = 0;
  for (const entry of others.values()) if (!entry.keys.includes(largest.key)) outside++;
  return largest.df + outside;
}

/** The terms entries of every document holding `key`. */
async function readEntries(terms: TermsTable, key: string): Promise<TermsEntry[]> {
  return (await terms.where('k').equals(key).toArray()).map(readTermsRow);
}
