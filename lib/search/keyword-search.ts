/**
 * BM25 straight over the stored terms rows (one per document): what the
 * in-memory postings (keyword-postings.ts, which every search ranks with) must
 * rank alike, and the reference they are tested against. It reads every terms
 * row of the corpus by primary key: the rows keep no term index (schema v5
 * dropped it: no search reads IndexedDB by term, and each write paid an index
 * entry per distinct term).
 */
import { Dexie, type Table } from 'dexie';
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
/** The terms entries of every document holding each asked term (read once per search). */
type EntriesByTerm = ReadonlyMap<string, readonly TermsEntry[]>;

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
   * page asked for). Lets an unfiltered search skip scoring the documents of very
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

/** The query as keywordSearch scores it. */
interface WeighedQuery {
  /** The terms some document holds, best bound first. */
  weighted: WeightedTerm[];
  /** The most a document could score: every query term, including those no document has (they count against relevance). */
  bound: number;
  avgLength: number;
}

/** What reading the terms' rows found: each accepted document's row and score so far, and how many terms were read. */
interface Scored {
  rows: Map<string, TermsEntry>;
  scores: Map<string, number>;
  read: number;
}

/**
 * BM25 over the terms rows of the query's terms. Returns matching documents (at
 * least one query term, accepted by the filter), best first, ties in id order,
 * and how many matched in all. The first `depth` hits are exact; without a
 * filter, the documents of terms too common to reach the top `depth` are not
 * scored, only counted. `terms` is the table, or its rows read once (a test
 * comparing many queries over one store).
 * @example
 * const { hits, total } = await keywordSearch(db.terms, db.meta, 'm', 'paris trip', { depth: 10 })
 */
export async function keywordSearch(
  terms: TermsTable | readonly TermsRow[],
  meta: Table<MetaRow, string>,
  corpus: Corpus,
  query: string,
  options: KeywordSearchOptions = {},
): Promise<{ hits: KeywordHit[]; total: number; bound: number }> {
  const asked = [...new Set((options.analyzer ?? ENGLISH_ANALYZER).query(query).map((t) => termKey(corpus, t)))];
  if (asked.length === 0) return { hits: [], total: 0, bound: 0 };
  const [statsRow, byTerm] = await Promise.all([meta.get(statsKey(corpus)), entriesByTerm(terms, corpus, asked)]);
  const weighed = weigh(statsRow, byTerm, asked);
  const scored = scoreByTerm(byTerm, weighed.weighted, weighed.avgLength, options);
  const skipped = weighed.weighted.slice(scored.read);
  let total = scored.scores.size;
  if (skipped.length > 0) {
    addSkippedShares(scored, skipped, weighed.avgLength);
    total = unionSize(byTerm, skipped, scored.rows);
  }
  return { hits: rankedHits(scored.scores, weighed.bound), total, bound: weighed.bound };
}

/** Every document read so far gets the skipped terms' share from its own row: no further reads. */
function addSkippedShares(scored: Scored, skipped: readonly WeightedTerm[], avgLength: number): void {
  for (const [d, row] of scored.rows) {
    scored.scores.set(d, scored.scores.get(d)! + skipped.reduce((sum, t) => sum + contribution(t, row, avgLength), 0));
  }
}

/**
 * The asked terms weighed by the corpus statistics and each term's document count,
 * bounded like the in-memory search to the rarest MAX_QUERY_TERMS terms.
 */
function weigh(statsRow: MetaRow | undefined, byTerm: EntriesByTerm, asked: readonly string[]): WeighedQuery {
  const askedDfs = asked.map((k) => byTerm.get(k)?.length ?? 0);
  const dfOf = new Map(asked.map((k, i) => [k, askedDfs[i] ?? 0]));
  const keys = rarestTerms(asked, (k) => dfOf.get(k) ?? 0);
  const stats = (statsRow?.value as CorpusStats | undefined) ?? { docs: 0, length: 0 };
  const docs = Math.max(stats.docs, 1);
  const all: WeightedTerm[] = keys.map((key) => {
    const df = dfOf.get(key) ?? 0;
    const idf = Math.log(1 + (docs - df + 0.5) / (df + 0.5));
    return { key, df, idf, bound: idf * (K1 + 1) };
  });
  return {
    weighted: all.filter((t) => t.df > 0).sort((a, b) => b.bound - a.bound),
    bound: all.reduce((sum, t) => sum + t.bound, 0),
    avgLength: stats.length > 0 ? stats.length / docs : 1,
  };
}

/**
 * Goes through the documents of each term, best bound first, adding its contribution to every
 * document the filter accepts. Without a filter, once `depth` documents are scored
 * and the terms left could not lift another above the `depth`-th best (MaxScore),
 * it stops: those terms are skipped.
 */
function scoreByTerm(
  byTerm: EntriesByTerm,
  weighted: readonly WeightedTerm[],
  avgLength: number,
  { filter, depth = Infinity }: KeywordSearchOptions,
): Scored {
  const scored: Scored = { rows: new Map(), scores: new Map(), read: 0 };
  const { rows, scores } = scored;
  for (; scored.read < weighted.length; scored.read++) {
    if (filter === undefined && scores.size >= depth) {
      const rest = weighted.slice(scored.read).reduce((sum, t) => sum + t.bound, 0);
      if (rest < kthLargest([...scores.values()], depth)) break;
    }
    const term = weighted[scored.read]!;
    for (const entry of byTerm.get(term.key) ?? []) {
      if (filter !== undefined && !filter(entry)) continue;
      rows.set(entry.docId, entry);
      scores.set(entry.docId, (scores.get(entry.docId) ?? 0) + contribution(term, entry, avgLength));
    }
  }
  return scored;
}

/** BM25 contribution of one term to one document (0 when the document lacks it). */
function contribution(t: WeightedTerm, entry: TermsEntry, avgLength: number): number {
  const at = entry.keys.indexOf(t.key);
  if (at < 0) return 0;
  const f = entry.counts[at]!;
  return (t.idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * entry.length) / avgLength));
}

/** The scored documents best first, ties in id order, each with its relevance (score over `bound`). */
function rankedHits(scores: ReadonlyMap<string, number>, bound: number): KeywordHit[] {
  const hits = [...scores].map(([id, score]) => ({ id, score, relevance: bound > 0 ? Math.min(1, score / bound) : 0 }));
  return hits.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
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
function unionSize(byTerm: EntriesByTerm, skipped: WeightedTerm[], seen: Map<string, TermsEntry>): number {
  const largest = skipped.reduce((a, b) => (b.df > a.df ? b : a));
  const others = new Map(seen);
  for (const t of skipped) {
    if (t === largest) continue;
    for (const entry of byTerm.get(t.key) ?? []) others.set(entry.docId, entry);
  }
  let outside = 0;
  for (const entry of others.values()) if (!entry.keys.includes(largest.key)) outside++;
  return largest.df + outside;
}

/** For each of `keys`, the terms entries of every document of `corpus` holding it (one read of the corpus's rows). */
async function entriesByTerm(
  terms: TermsTable | readonly TermsRow[],
  corpus: Corpus,
  keys: readonly string[],
): Promise<EntriesByTerm> {
  const byTerm = new Map(keys.map((k) => [k, [] as TermsEntry[]]));
  const rows: readonly TermsRow[] =
    'where' in terms
      ? await terms.where(':id').between([corpus, Dexie.minKey], [corpus, Dexie.maxKey]).toArray()
      : terms.filter((row) => row.c === corpus);
  for (const row of rows) {
    const entry = readTermsRow(row);
    for (const key of entry.keys) byTerm.get(key)?.push(entry);
  }
  return byTerm;
}
