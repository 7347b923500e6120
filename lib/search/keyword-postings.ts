/**
 * The keyword index of one corpus held in memory: a postings list per term
 * (document numbers and counts in typed arrays), each document's length and
 * filter fields, and the corpus statistics. Built from the terms rows (already
 * analyzed by the store's analyzer), so it indexes exactly what the IndexedDB
 * keyword index holds and ranks with the same BM25 (see keyword-search.ts); a
 * search walks the postings of the query's terms with a dense score
 * accumulator, filters each document once inside the walk, and keeps the best
 * `depth` in a bounded heap; a scope small against those postings is scored
 * document by document instead, by binary search in each term's postings. It is a cache: `snapshot()`/`restore()` make it
 * cheap to reload, and the engine rebuilds it from the rows whenever in doubt.
 */
import { IndexError } from '../errors.js';
import type { CorpusStats, MessageTermsFields, TermsEntry } from '../store/keyword-terms.js';
import type { Role } from '../store/rows.js';

const K1 = 1.2;
const B = 0.75;

/** A ranked document of {@link KeywordPostings.search}. */
export interface PostingsHit {
  id: string;
  score: number;
}

/** Options of {@link KeywordPostings.search}. */
export interface PostingsSearchOptions {
  /**
   * How many of the best hits to return (start + count of the page asked for).
   * @default Infinity
   */
  depth?: number;
  /** Keeps only documents it accepts; called at most once per document and search. */
  accept?: (id: string, fields: MessageTermsFields) => boolean;
  /**
   * Skip documents that can no longer reach the best `depth` (MaxScore): once
   * the terms left could not lift a document none of the earlier terms matched
   * above the `depth`-th best score so far, only documents already matched are
   * scored, looked up in the rest of the postings. The hits are the same; the
   * `total` then counts only the documents scored.
   * @default false
   */
  prune?: boolean;
  /**
   * Only documents with these ids can match (a scope). A scope small against
   * the postings to walk is scored document by document instead, each term's
   * count found by binary search in its postings: see {@link scopeLookupWins}.
   * Either way the hits, their scores and order are the same, and `total` is
   * the unpruned walk's (every match in the scope).
   */
  within?: ReadonlySet<string>;
  /**
   * How a `within` scope is scored: by the cheaper way (`'cost'`), always by
   * walking the postings, or always by looking its documents up (tests and
   * benchmarks compare the two).
   * @default 'cost'
   */
  scopeStrategy?: 'cost' | 'walk' | 'lookup';
}

/** The result of a search: the best `depth` hits, how many documents matched, the query's score bound. */
export interface PostingsResult {
  hits: PostingsHit[];
  total: number;
  /** The most a document could score on this query (every query term's bound). */
  bound: number;
}

/** A compact, structured-clone friendly copy of the postings (no deleted documents). */
export interface PostingsSnapshot {
  version: 1;
  stats: CorpusStats;
  ids: string[];
  lengths: Int32Array;
  /** Distinct field values; `fieldCodes` holds 4 codes per document (thread, agent, user, role), -1 when absent. */
  fieldValues: string[];
  fieldCodes: Int32Array;
  terms: string[];
  /** Postings of term i are `docs`/`counts` from offsets[i] to offsets[i + 1]. */
  offsets: Int32Array;
  docs: Int32Array;
  counts: Int32Array;
}

/** A query term with live postings: its number, idf, and the most it adds to a document (idf × (K1 + 1)). */
interface WeightedTerm {
  term: number;
  idf: number;
  bound: number;
}

/** A query as search() scores it: its terms with postings, best bound first, and the corpus's average length. */
interface WeightedQuery {
  terms: WeightedTerm[];
  /** The most a document could score (every key's bound, a key without postings included). */
  bound: number;
  avgLength: number;
}

/** What a walk has seen: every document it filtered (scratch to reset) and those it accepted. */
interface Seen {
  touched: number[];
  accepted: number[];
}

const FIELDS = 4;
const NONE = -1;
/**
 * What one walked posting costs against one step of a binary search: the walk
 * filters each newly seen document (the scope's id set, its fields) and adds
 * its gain, a search step is a compare. Set below the measured ratio so the
 * lookup is chosen only when clearly cheaper (the measurement:
 * bench/results/REPORT.md, "Measurements cited by the code").
 */
const WALK_STEP_COST = 8;

/**
 * Whether scoring a scope of `scopeSize` documents by binary search in each of
 * the query terms' postings (`postingLengths`) costs less than walking those
 * postings whole: per scope document one id lookup and one search per term,
 * against WALK_STEP_COST per posting. A scope of a few documents in a large
 * corpus (one user of many) is looked up; a large scope or rare terms are walked.
 * @example
 * scopeLookupWins(100, [20_000, 5_000]) // true: 100 × (1 + 14.3 + 12.3) ≪ 8 × 25,000
 */
export function scopeLookupWins(scopeSize: number, postingLengths: readonly number[]): boolean {
  let walk = 0;
  let lookup = 1;
  for (const n of postingLengths) {
    walk += n;
    lookup += Math.log2(n + 2);
  }
  return scopeSize * lookup < WALK_STEP_COST * walk;
}

/** A typed array of at least `size` slots holding `from`'s first `used` values. */
function grown(from: Int32Array<ArrayBuffer>, used: number, size: number): Int32Array<ArrayBuffer> {
  if (size <= from.length) return from;
  const next = new Int32Array(Math.max(size, from.length * 2, 16));
  next.set(from.subarray(0, used));
  return next;
}

/** In-memory BM25 postings of one corpus; see the file comment. */
export class KeywordPostings {
  /** Document count and total length of the corpus, as the store keeps them in `meta`. */
  stats: CorpusStats = { docs: 0, length: 0 };
  // Documents, by number. A deleted document keeps its number (alive 0) until compaction.
  #ids: string[] = [];
  #numberOf = new Map<string, number>();
  #alive = new Uint8Array(0);
  #lengths = new Int32Array(0);
  #fieldCodes = new Int32Array(0);
  #termStart = new Int32Array(0);
  #termCount = new Int32Array(0);
  /** Each document's term numbers, back to back (for removal). */
  #docTerms = new Int32Array(0);
  #docTermsUsed = 0;
  #dead = 0;
  // Field values, interned.
  #fieldValues: string[] = [];
  #fieldCode = new Map<string, number>();
  // Terms, by number.
  #terms: string[] = [];
  #termNumber = new Map<string, number>();
  /** Each term's postings (deleted documents included until compaction): document numbers and counts. */
  #postDocs: number[][] = [];
  #postCounts: number[][] = [];
  /** Live documents holding each term. */
  #df: number[] = [];
  // Search scratch, reused: a score and a state (0 unseen, 1 accepted, 2 rejected) per document.
  #scores = new Float64Array(0);
  #state = new Uint8Array(0);

  /** Live documents. */
  get size(): number {
    return this.#numberOf.size;
  }

  /** Whether document `id` is indexed. */
  has(id: string): boolean {
    return this.#numberOf.has(id);
  }

  /** Live documents holding term `key` (its document frequency). */
  documentFrequency(key: string): number {
    const t = this.#termNumber.get(key);
    return t === undefined ? 0 : this.#df[t]!;
  }

  /** Indexes a document from its terms entry, replacing an earlier version of it. */
  upsert(entry: TermsEntry): void {
    this.remove(entry.docId);
    const doc = this.#newDoc(entry);
    const n = entry.keys.length;
    this.#docTerms = grown(this.#docTerms, this.#docTermsUsed, this.#docTermsUsed + n);
    this.#termStart[doc] = this.#docTermsUsed;
    this.#termCount[doc] = n;
    for (let i = 0; i < n; i++) {
      const t = this.#term(entry.keys[i]!);
      this.#docTerms[this.#docTermsUsed++] = t;
      this.#postDocs[t]!.push(doc);
      this.#postCounts[t]!.push(entry.counts[i]!);
      this.#df[t]!++;
    }
  }

  /** Numbers the entry's document anew (the next number), alive, with its length and fields; returns its number. */
  #newDoc(entry: TermsEntry): number {
    const doc = this.#ids.length;
    this.#ids.push(entry.docId);
    this.#numberOf.set(entry.docId, doc);
    this.#ensureDocs(doc + 1);
    this.#alive[doc] = 1;
    this.#lengths[doc] = entry.length;
    const codes = [entry.threadId, entry.agentId, entry.userId, entry.role];
    for (let i = 0; i < FIELDS; i++) this.#fieldCodes[doc * FIELDS + i] = this.#code(codes[i]);
    return doc;
  }

  /** Drops document `id` (no-op when absent). */
  remove(id: string): void {
    const doc = this.#numberOf.get(id);
    if (doc === undefined) return;
    this.#numberOf.delete(id);
    this.#alive[doc] = 0;
    const start = this.#termStart[doc]!;
    for (let i = 0; i < this.#termCount[doc]!; i++) this.#df[this.#docTerms[start + i]!]!--;
    this.#dead++;
    // Deleted entries cost walk time and memory: rewrite once they are a third of the documents.
    if (this.#dead > 1024 && this.#dead * 3 > this.#ids.length) this.#load(this.snapshot());
  }

  /** Removes every document and zeroes the statistics. */
  clear(): void {
    this.#load(new KeywordPostings().snapshot());
  }

  /**
   * BM25 over the postings of `keys` (the query's indexed terms): documents
   * holding at least one, accepted by `accept`, best first, ties in id order.
   * Scores equal keywordSearch's over the same rows and statistics.
   * @example
   * const { hits, total } = postings.search(['m:paris', 'm:trip'], { depth: 10 })
   */
  search(keys: readonly string[], options: PostingsSearchOptions = {}): PostingsResult {
    const query = this.#weigh(keys);
    const { within } = options;
    if (within !== undefined && this.#scoresByLookup(within, query, options.scopeStrategy ?? 'cost')) {
      return this.#lookUp(within, query, options);
    }
    const touched = this.#walk(query, acceptWithin(within, options.accept), options);
    return this.#collect(touched, options.depth ?? Infinity, query.bound);
  }

  /**
   * The query's terms that have live postings, with their idf and the most each
   * can add to a document, best bound first; `bound` sums every key's (a key
   * without postings included, as keywordSearch's does).
   */
  #weigh(keys: readonly string[]): WeightedQuery {
    const docs = Math.max(this.stats.docs, 1);
    const terms: WeightedTerm[] = [];
    let bound = 0;
    for (const key of keys) {
      const t = this.#termNumber.get(key);
      const df = t === undefined ? 0 : this.#df[t]!;
      const idf = Math.log(1 + (docs - df + 0.5) / (df + 0.5));
      bound += idf * (K1 + 1);
      if (t !== undefined && df > 0) terms.push({ term: t, idf, bound: idf * (K1 + 1) });
    }
    terms.sort((a, b) => b.bound - a.bound);
    return { terms, bound, avgLength: this.stats.length > 0 ? this.stats.length / docs : 1 };
  }

  /** A term's BM25 contribution to document `d` holding it `f` times (as keywordSearch computes it). */
  #gain(idf: number, f: number, d: number, avgLength: number): number {
    return (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * this.#lengths[d]!) / avgLength));
  }

  /** Whether a `within` scope is scored by looking its documents up rather than by walking the postings. */
  #scoresByLookup(
    within: ReadonlySet<string>,
    query: WeightedQuery,
    strategy: NonNullable<PostingsSearchOptions['scopeStrategy']>,
  ): boolean {
    if (strategy !== 'cost') return strategy === 'lookup';
    return scopeLookupWins(
      within.size,
      query.terms.map((w) => this.#postDocs[w.term]!.length),
    );
  }

  /**
   * Walks each term's postings, best bound first, adding its gain to every live
   * document `accept` takes (asked once per document); with `prune`, once the
   * terms left could not lift an unmatched document into the best `depth`
   * (MaxScore), a term scores only the documents already matched. Returns every
   * document it filtered, whose scratch score and state {@link #collect} reads and resets.
   */
  #walk(query: WeightedQuery, accept: PostingsSearchOptions['accept'], options: PostingsSearchOptions): number[] {
    const depth = options.depth ?? Infinity;
    const seen: Seen = { touched: [], accepted: [] };
    const rest = remainingBounds(query.terms);
    for (let j = 0; j < query.terms.length; j++) {
      const term = query.terms[j]!;
      const pruned =
        options.prune === true &&
        seen.accepted.length >= depth &&
        rest[j]! < kthLargest(this.#scores, seen.accepted, depth);
      if (pruned) this.#scoreMatched(term, query.avgLength, seen.accepted);
      else this.#walkPostings(term, query.avgLength, accept, seen);
    }
    return seen.touched;
  }

  /**
   * One term's postings walked whole: each live document seen for the first time
   * is filtered once (state 1 accepted, 2 rejected, and noted as touched), and
   * every accepted one gains the term's score.
   */
  #walkPostings(w: WeightedTerm, avgLength: number, accept: PostingsSearchOptions['accept'], seen: Seen): void {
    const postDocs = this.#postDocs[w.term]!;
    const postCounts = this.#postCounts[w.term]!;
    const scores = this.#scores;
    const state = this.#state;
    for (let i = 0; i < postDocs.length; i++) {
      const d = postDocs[i]!;
      if (this.#alive[d] === 0) continue;
      let s = state[d]!;
      if (s === 0) {
        s = accept === undefined || accept(this.#ids[d]!, this.#fieldsOf(d)) ? 1 : 2;
        state[d] = s;
        seen.touched.push(d);
        if (s === 1) seen.accepted.push(d);
      }
      if (s !== 1) continue;
      scores[d] = scores[d]! + this.#gain(w.idf, postCounts[i]!, d, avgLength);
    }
  }

  /**
   * One term scored for the documents already matched only (no unmatched one can
   * make the best `depth` now): each looked up in the (document-ordered) postings
   * when that beats walking them.
   */
  #scoreMatched(w: WeightedTerm, avgLength: number, accepted: readonly number[]): void {
    const postDocs = this.#postDocs[w.term]!;
    const postCounts = this.#postCounts[w.term]!;
    const scores = this.#scores;
    if (accepted.length * Math.log2(postDocs.length + 2) < postDocs.length) {
      for (const d of accepted) {
        const i = indexOf(postDocs, d);
        if (i >= 0) scores[d] = scores[d]! + this.#gain(w.idf, postCounts[i]!, d, avgLength);
      }
      return;
    }
    for (let i = 0; i < postDocs.length; i++) {
      const d = postDocs[i]!;
      if (this.#state[d] === 1 && this.#alive[d] === 1) {
        scores[d] = scores[d]! + this.#gain(w.idf, postCounts[i]!, d, avgLength);
      }
    }
  }

  /** The best `depth` of the accepted documents a walk touched and how many there were; resets their scratch. */
  #collect(touched: readonly number[], depth: number, bound: number): PostingsResult {
    const top = new TopHits(depth);
    let total = 0;
    for (const d of touched) {
      if (this.#state[d] === 1) {
        total++;
        top.offer(this.#ids[d]!, this.#scores[d]!);
      }
      this.#state[d] = 0;
      this.#scores[d] = 0;
    }
    return { hits: top.sorted(), total, bound };
  }

  /**
   * search() over the documents of `within` alone: each live one's count of every
   * term found by binary search in the term's postings, which hold document numbers
   * ascending (a document gets a new, highest number on every upsert, and a snapshot
   * renumbers in order), so the live number of an updated document is found, never
   * an older one's. A document's gains are added in the walk's term order, from 0, so
   * its score is the walk's to the last bit; the heap's order (score, then id) does
   * not depend on the order documents are offered in.
   */
  #lookUp(within: ReadonlySet<string>, query: WeightedQuery, options: PostingsSearchOptions): PostingsResult {
    const { accept } = options;
    const top = new TopHits(options.depth ?? Infinity);
    let total = 0;
    for (const id of within) {
      const d = this.#numberOf.get(id);
      if (d === undefined) continue;
      const score = this.#scoreOf(d, query);
      if (score === undefined || (accept !== undefined && !accept(id, this.#fieldsOf(d)))) continue;
      total++;
      top.offer(id, score);
    }
    return { hits: top.sorted(), total, bound: query.bound };
  }

  /** Document d's score, its gains added in the query's term order from 0; undefined when it holds none of the terms. */
  #scoreOf(d: number, query: WeightedQuery): number | undefined {
    let score = 0;
    let matched = false;
    for (const { term, idf } of query.terms) {
      const i = indexOf(this.#postDocs[term]!, d);
      if (i < 0) continue;
      score = score + this.#gain(idf, this.#postCounts[term]![i]!, d, query.avgLength);
      matched = true;
    }
    return matched ? score : undefined;
  }

  /** A compact copy without deleted documents; {@link KeywordPostings.restore} reads it back. */
  snapshot(): PostingsSnapshot {
    const { renumber, ids } = this.#liveNumbers();
    const { lengths, fieldCodes } = this.#liveFields(renumber, ids.length);
    const { terms, offsets, docs, counts } = this.#livePostings(renumber);
    const fieldValues = [...this.#fieldValues];
    return {
      version: 1,
      stats: { ...this.stats },
      ids,
      lengths,
      fieldValues,
      fieldCodes,
      terms,
      offsets,
      docs,
      counts,
    };
  }

  /** The live documents numbered anew from 0 in their order: `renumber[d]` is document d's new number, NONE when deleted. */
  #liveNumbers(): { renumber: Int32Array; ids: string[] } {
    const renumber = new Int32Array(this.#ids.length).fill(NONE);
    const ids: string[] = [];
    for (let d = 0; d < this.#ids.length; d++) {
      if (this.#alive[d] === 1) {
        renumber[d] = ids.length;
        ids.push(this.#ids[d]!);
      }
    }
    return { renumber, ids };
  }

  /** The lengths and field codes of the `count` live documents, at their new numbers. */
  #liveFields(renumber: Int32Array, count: number): Pick<PostingsSnapshot, 'lengths' | 'fieldCodes'> {
    const lengths = new Int32Array(count);
    const fieldCodes = new Int32Array(count * FIELDS);
    for (let d = 0; d < this.#ids.length; d++) {
      const to = renumber[d]!;
      if (to === NONE) continue;
      lengths[to] = this.#lengths[d]!;
      fieldCodes.set(this.#fieldCodes.subarray(d * FIELDS, d * FIELDS + FIELDS), to * FIELDS);
    }
    return { lengths, fieldCodes };
  }

  /**
   * The terms some live document holds, and their postings as one array each of documents
   * (new numbers) and counts, term `i`'s from `offsets[i]` to `offsets[i + 1]`. A term's
   * document frequency counts its live documents only, so their sum sizes the arrays.
   */
  #livePostings(renumber: Int32Array): Pick<PostingsSnapshot, 'terms' | 'offsets' | 'docs' | 'counts'> {
    const { terms, kept, entries } = this.#liveTerms();
    const offsets = new Int32Array(terms.length + 1);
    const docs = new Int32Array(entries);
    const counts = new Int32Array(entries);
    let at = 0;
    kept.forEach((t, i) => {
      offsets[i] = at;
      const postDocs = this.#postDocs[t]!;
      const postCounts = this.#postCounts[t]!;
      for (let j = 0; j < postDocs.length; j++) {
        const to = renumber[postDocs[j]!]!;
        if (to === NONE) continue;
        docs[at] = to;
        counts[at++] = postCounts[j]!;
      }
    });
    offsets[terms.length] = at;
    return { terms, offsets, docs, counts };
  }

  /** The terms some live document holds, their numbers here (`kept`), and their live postings counted (`entries`). */
  #liveTerms(): { terms: string[]; kept: number[]; entries: number } {
    const terms: string[] = [];
    const kept: number[] = [];
    let entries = 0;
    for (let t = 0; t < this.#terms.length; t++) {
      if (this.#df[t]! > 0) {
        terms.push(this.#terms[t]!);
        kept.push(t);
        entries += this.#df[t]!;
      }
    }
    return { terms, kept, entries };
  }

  /** The postings a snapshot was taken of. Throws IndexError on a malformed snapshot. */
  static restore(snapshot: PostingsSnapshot): KeywordPostings {
    const postings = new KeywordPostings();
    postings.#load(snapshot);
    return postings;
  }

  #load(s: PostingsSnapshot): void {
    const n = s.ids.length;
    if (!isWellFormed(s)) throw new IndexError('malformed keyword postings snapshot');
    this.stats = { docs: s.stats.docs, length: s.stats.length };
    this.#ids = [...s.ids];
    this.#numberOf = new Map(s.ids.map((id, d) => [id, d]));
    this.#alive = new Uint8Array(n).fill(1);
    this.#lengths = Int32Array.from(s.lengths);
    this.#fieldCodes = Int32Array.from(s.fieldCodes);
    this.#fieldValues = [...s.fieldValues];
    this.#fieldCode = new Map(s.fieldValues.map((v, i) => [v, i]));
    this.#terms = [...s.terms];
    this.#termNumber = new Map(s.terms.map((t, i) => [t, i]));
    this.#loadPostings(s);
    this.#dead = 0;
    this.#scores = new Float64Array(n);
    this.#state = new Uint8Array(n);
  }

  /**
   * The snapshot's postings per term, and from them each document's terms (`#docTerms`, document
   * d's from `#termStart[d]`): counted per document first, then filled in term order.
   */
  #loadPostings(s: PostingsSnapshot): void {
    this.#postDocs = [];
    this.#postCounts = [];
    this.#df = [];
    const at = this.#layOutDocTerms(s);
    this.#docTerms = new Int32Array(at);
    this.#docTermsUsed = at;
    const fill = Int32Array.from(this.#termStart);
    for (let t = 0; t < s.terms.length; t++) {
      const from = s.offsets[t]!;
      const to = s.offsets[t + 1]!;
      this.#postDocs.push(Array.from(s.docs.subarray(from, to)));
      this.#postCounts.push(Array.from(s.counts.subarray(from, to)));
      this.#df.push(to - from);
      for (let i = from; i < to; i++) this.#docTerms[fill[s.docs[i]!]!++] = t;
    }
  }

  /** Each document's term count (`#termCount`) and where its terms start (`#termStart`); returns their total. */
  #layOutDocTerms(s: PostingsSnapshot): number {
    const n = s.ids.length;
    this.#termCount = new Int32Array(n);
    for (const d of s.docs) {
      if (d < 0 || d >= n) throw new IndexError('malformed keyword postings snapshot');
      this.#termCount[d]!++;
    }
    this.#termStart = new Int32Array(n);
    let at = 0;
    for (let d = 0; d < n; d++) {
      this.#termStart[d] = at;
      at += this.#termCount[d]!;
    }
    return at;
  }

  #ensureDocs(size: number): void {
    if (size <= this.#alive.length) return;
    const capacity = Math.max(size, this.#alive.length * 2, 64);
    const alive = new Uint8Array(capacity);
    alive.set(this.#alive);
    this.#alive = alive;
    this.#lengths = grown(this.#lengths, this.#lengths.length, capacity);
    this.#termStart = grown(this.#termStart, this.#termStart.length, capacity);
    this.#termCount = grown(this.#termCount, this.#termCount.length, capacity);
    this.#fieldCodes = grown(this.#fieldCodes, this.#fieldCodes.length, capacity * FIELDS);
    const scores = new Float64Array(capacity);
    scores.set(this.#scores);
    this.#scores = scores;
    const state = new Uint8Array(capacity);
    state.set(this.#state);
    this.#state = state;
  }

  #term(key: string): number {
    let t = this.#termNumber.get(key);
    if (t === undefined) {
      t = this.#terms.length;
      this.#terms.push(key);
      this.#termNumber.set(key, t);
      this.#postDocs.push([]);
      this.#postCounts.push([]);
      this.#df.push(0);
    }
    return t;
  }

  #code(value: string | undefined): number {
    if (value === undefined) return NONE;
    let c = this.#fieldCode.get(value);
    if (c === undefined) {
      c = this.#fieldValues.length;
      this.#fieldValues.push(value);
      this.#fieldCode.set(value, c);
    }
    return c;
  }

  #fieldsOf(doc: number): MessageTermsFields {
    const at = doc * FIELDS;
    const value = (i: number): string | undefined => {
      const c = this.#fieldCodes[at + i]!;
      return c === NONE ? undefined : this.#fieldValues[c];
    };
    const fields: MessageTermsFields = {};
    const thread = value(0);
    const agent = value(1);
    const user = value(2);
    const role = value(3);
    if (thread !== undefined) fields.threadId = thread;
    if (agent !== undefined) fields.agentId = agent;
    if (user !== undefined) fields.userId = user;
    if (role !== undefined) fields.role = role as Role;
    return fields;
  }
}

/** A snapshot of version 1 whose arrays agree in length with its documents and terms. */
function isWellFormed(s: PostingsSnapshot): boolean {
  const n = s.ids.length;
  return (
    (s.version as number) === 1 &&
    s.lengths.length === n &&
    s.fieldCodes.length === n * FIELDS &&
    s.offsets.length === s.terms.length + 1 &&
    s.docs.length === s.counts.length
  );
}

/** `accept` narrowed to the documents of `within` (each asked of the set first), or `accept` alone. */
function acceptWithin(
  within: ReadonlySet<string> | undefined,
  accept: PostingsSearchOptions['accept'],
): PostingsSearchOptions['accept'] {
  if (within === undefined) return accept;
  return (id, fields) => within.has(id) && (accept === undefined || accept(id, fields));
}

/** What the terms from j on can add to a document at most, for each j (and 0 past the last). */
function remainingBounds(terms: readonly WeightedTerm[]): Float64Array {
  const rest = new Float64Array(terms.length + 1);
  for (let j = terms.length - 1; j >= 0; j--) rest[j] = rest[j + 1]! + terms[j]!.bound;
  return rest;
}

/** Position of `d` in the ascending `docs`, or -1. */
function indexOf(docs: readonly number[], d: number): number {
  let lo = 0;
  let hi = docs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const at = docs[mid]!;
    if (at === d) return mid;
    if (at < d) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The `k`-th largest of `scores` over `docs` (k ≤ docs.length), with a bounded min-heap. */
function kthLargest(scores: Float64Array, docs: readonly number[], k: number): number {
  const heap = new Float64Array(k);
  let size = 0;
  for (const d of docs) {
    const x = scores[d]!;
    if (size < k) {
      heap[size] = x;
      siftUp(heap, size++);
    } else if (x > heap[0]!) {
      heap[0] = x;
      siftDown(heap, k);
    }
  }
  return heap[0]!;
}

/** Restores the min-heap order after a value was placed at `i`, moving it up past larger parents. */
function siftUp(heap: Float64Array, i: number): void {
  while (i > 0 && heap[(i - 1) >> 1]! > heap[i]!) {
    const p = (i - 1) >> 1;
    [heap[i], heap[p]] = [heap[p]!, heap[i]!];
    i = p;
  }
}

/** Restores the order of the full min-heap of `k` values after its root was replaced, moving the root down past smaller children. */
function siftDown(heap: Float64Array, k: number): void {
  for (let i = 0; ;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < k && heap[l]! < heap[m]!) m = l;
    if (r < k && heap[r]! < heap[m]!) m = r;
    if (m === i) break;
    [heap[i], heap[m]] = [heap[m]!, heap[i]!];
    i = m;
  }
}

/** The best `depth` hits seen (score descending, then id ascending), kept in a bounded heap. */
class TopHits {
  readonly #depth: number;
  /** Worst hit at index 0 once full. */
  readonly #heap: PostingsHit[] = [];

  constructor(depth: number) {
    this.#depth = depth;
  }

  /** Whether `a` ranks below `b`. */
  static #worse(a: PostingsHit, b: PostingsHit): boolean {
    return a.score < b.score || (a.score === b.score && a.id > b.id);
  }

  offer(id: string, score: number): void {
    if (this.#depth <= 0) return;
    const heap = this.#heap;
    if (!Number.isFinite(this.#depth) || heap.length < this.#depth) {
      heap.push({ id, score });
      if (Number.isFinite(this.#depth)) this.#up(heap.length - 1);
      return;
    }
    // Most offers lose to the worst kept: decided before making an object (bench/memory-search).
    const worst = heap[0]!;
    if (score < worst.score || (score === worst.score && id > worst.id)) return;
    const hit = { id, score };
    if (!TopHits.#worse(worst, hit)) return;
    heap[0] = hit;
    this.#down(0);
  }

  sorted(): PostingsHit[] {
    return [...this.#heap].sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  }

  #up(i: number): void {
    const heap = this.#heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!TopHits.#worse(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  #down(i: number): void {
    const heap = this.#heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < heap.length && TopHits.#worse(heap[l]!, heap[worst]!)) worst = l;
      if (r < heap.length && TopHits.#worse(heap[r]!, heap[worst]!)) worst = r;
      if (worst === i) return;
      [heap[i], heap[worst]] = [heap[worst]!, heap[i]!];
      i = worst;
    }
  }
}
