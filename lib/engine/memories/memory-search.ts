/**
 * Memory search: vector similarity (HNSW, or an exact scan of a scope, both from the index's memory),
 * BM25 keywords, or both fused into one relevance in [0, 1] (lib/search/fusion.ts).
 * Filters are applied inside both searches, so scoped results never leak and k
 * hits come back when k exist. How the query is embedded in each mode, and
 * the weights of the fusion, are the embedding model's (lib/search/retrieval-profile.ts);
 * the keyword side uses the store's analyzer.
 *
 * A search does not wait for the indexes' queues in the common case: it ranks from the in-memory
 * indexes as they stand, then reads where the change log stands and the best rows in one read
 * (lib/store/head-with-rows.ts, which opens an encrypted store's rows). When the log stood where
 * both indexes are (nothing written since they last caught up, the usual case), the ranking was the
 * store's; otherwise the indexes catch up from that read and the search ranks again
 * (searchAfterCatchUp).
 */
import { ExactIndex } from '../../vector/exact-index.js';
import { vectorDefect } from '../../vector/vector-checks.js';
import type { CompiledFilter } from '../../search/filters.js';
import {
  combine,
  fuse,
  fusionScaling,
  gatedWeights,
  vectorRelevance,
  type FusedHit,
  type FusionWeights,
} from '../../search/fusion.js';
import {
  hasEvidence,
  retrievalProfile,
  type QueryForm,
  type RetrievalProfile,
} from '../../search/retrieval-profile.js';
import type { LogHead } from '../../store/change-log.js';
import {
  readMemories,
  startHeadWithRows,
  type HeadWithRows,
  type ReadHeadWithRows,
  type ReadRows,
} from '../../store/head-with-rows.js';
import { MEMORY_CORPUS } from '../../store/keyword-terms.js';
import type { MemoryRow } from '../../store/rows.js';
import { currentVector } from '../../store/current-vector.js';
import type { EngineStore } from '../engine-store.js';
import { keywordState, type KeywordState } from '../keywords/keyword-state.js';
import { matchingRows } from './memories.js';
import type { SemanticIndex } from '../vectors/semantic-index.js';
import type { VectorState } from '../vectors/vector-state.js';

/** How results are found. */
export type SearchMode = 'hybrid' | 'vector' | 'keyword';
export const SEARCH_MODES: readonly SearchMode[] = ['hybrid', 'vector', 'keyword'];

/** Rows read beyond the results asked for, in case some fail the filter on a second look. */
const ROW_SPARE = 4;

/**
 * A ranked memory. `score` is its relevance in [0, 1] in every mode: the
 * cosine similarity (vector), BM25 over the query's bound (keyword), or their
 * fusion (hybrid); the per-mode scores come along where computed.
 */
export interface ScoredMemory {
  row: MemoryRow;
  score: number;
  similarity?: number;
  keywordScore?: number;
  keywordRelevance?: number;
}

/** Options of {@link searchMemories}. */
export interface MemorySearchOptions {
  filter: CompiledFilter;
  limit: number;
  mode: SearchMode;
  /** Minimum relevance (`score`, in [0, 1]) of a result, in every mode (hybrid: with evidence, hasEvidence). */
  threshold?: number;
  signal?: AbortSignal;
}

/** One search under way: what every step reads. */
interface SearchRun {
  core: EngineStore;
  state: VectorState;
  /** The keyword index, except in vector mode. */
  keywords: KeywordState | undefined;
  query: string;
  options: MemorySearchOptions;
  /** The embedding model's search settings (its fusion weights and scale, its evidence rule). */
  profile: RetrievalProfile;
  /** The query's embedding, except in keyword mode; started first, it runs while the rest is prepared. */
  embedding: Promise<Float32Array> | undefined;
  /** How deep each side ranks. */
  pool: number;
}

/** Each side's ranking of one search, as the indexes stood when it was computed. */
interface Sides {
  vectorRanked: { id: string; score: number }[];
  keywordRanked: { id: string; score: number; relevance: number }[];
}

/** Where an index stands in the change log: what it reflects. */
interface IndexPosition {
  seq: number;
  generation: number | undefined;
  /** The model of the vector index when the search ranks by it: the store's must still be it. */
  embedderId?: string;
}

/** Searches live memories that pass the filter. */
export async function searchMemories(
  core: EngineStore,
  semantic: SemanticIndex,
  query: string,
  options: MemorySearchOptions,
): Promise<ScoredMemory[]> {
  const { state, embedder } = await semantic.ready();
  const ended = state.beginSearch();
  try {
    const read = startHeadWithRows(core.db);
    return await search(startSearch(core, semantic, state, embedder.id, query, options), read);
  } finally {
    ended();
  }
}

/** The search from the indexes as they stand when the log has not moved past them, else the catch-up path. */
async function search(started: Promise<SearchRun>, read: ReadHeadWithRows): Promise<ScoredMemory[]> {
  const run = await started;
  const { core, options } = run;
  // A metadata condition needs whole rows to choose the scope, read in their own transaction: the
  // indexes catch up first, and the rows are read after the ranking.
  if (options.filter.needsMetadata) return searchAfterCatchUp(run, headOf(read([])));
  const queryVector = await run.embedding;
  // Nothing is awaited from here to the ranking: the scope, the positions and the ranking are all
  // of the indexes as they stand now.
  const now = core.now();
  const allowed = options.filter.empty ? undefined : run.state.scopes.matching(options.filter, now);
  const at = positionsOf(run);
  if (allowed?.size === 0) {
    const { head } = await read([], at[0]!.seq);
    return upToDate(head, at) ? [] : searchAfterCatchUp(run, Promise.resolve(head));
  }
  const ranked = await order(run, rankSides(run, allowed, queryVector), queryVector);
  const { head, rows } = await read(firstIds(run, ranked), at[0]!.seq);
  // The head was read after the ranking (or before it), the rows with it or after: at or past the
  // head, the indexes held everything the store did then, and the rows are as new or newer (each
  // is checked against the filter again).
  if (!upToDate(head, at)) return searchAfterCatchUp(run, Promise.resolve(head));
  return collectResults(run, ranked, rowsById(rows), now);
}

/** The log head of a search's reads. */
async function headOf(reading: Promise<HeadWithRows>): Promise<LogHead> {
  return (await reading).head;
}

/** Starts embedding the query, loads the keyword index (except in vector mode) and sets the search's depths. */
async function startSearch(
  core: EngineStore,
  semantic: SemanticIndex,
  state: VectorState,
  embedderId: string,
  query: string,
  options: MemorySearchOptions,
): Promise<SearchRun> {
  const { mode, limit } = options;
  const profile = retrievalProfile(embedderId);
  const form = mode === 'vector' ? profile.vectorQuery : profile.hybridQuery;
  // The query is embedded (in the embedder's worker) while the keyword index is made ready.
  const embedding = embedQuery(core, semantic, query, { options, form });
  // Loaded on first use (Engram.open() starts it in the background).
  const keywords = mode === 'vector' ? undefined : await keywordState(core);
  return {
    core,
    state,
    keywords,
    query,
    options,
    profile,
    embedding,
    pool: Math.max(limit * 4, 40),
  };
}

/** The query's embedding in `form`, started now (undefined in keyword mode); a failure surfaces where it is awaited. */
function embedQuery(
  core: EngineStore,
  semantic: SemanticIndex,
  query: string,
  { options, form }: { options: MemorySearchOptions; form: QueryForm },
): Promise<Float32Array> | undefined {
  const embedding =
    options.mode === 'keyword'
      ? undefined
      : semantic
          .embed([form === 'question' ? query : core.analyzer.queryText(query)], options.signal, 'query')
          .then((e) => e.vectors[0]!);
  embedding?.catch(() => undefined); // awaited later; a failure surfaces there
  return embedding;
}

/**
 * The slower path: both indexes catch up with the log (from `head`, read once for both), then
 * the search ranks and reads its rows (the rows may be newer than the ranking; each is checked
 * against the filter again).
 */
async function searchAfterCatchUp(run: SearchRun, head: Promise<LogHead>): Promise<ScoredMemory[]> {
  const { core, state, keywords, options } = run;
  head.catch(() => undefined); // awaited by the catch-ups; a failure surfaces there
  const [queryVector] = await Promise.all([run.embedding, keywords?.catchUp(head), state.catchUp({}, head)]);
  // Another instance re-embedded the store (the catch-up saw its record): this index's model is not the store's.
  if (options.mode !== 'keyword') state.assertCurrent();
  const now = core.now();
  // Which memories may be returned: from the in-memory scope table, or (for metadata
  // conditions, which need whole rows) from the rows of the scope.
  const allowed = options.filter.empty
    ? undefined
    : options.filter.needsMetadata
      ? new Set((await matchingRows(core, options.filter)).map((r) => r.id))
      : state.scopes.matching(options.filter, now);
  if (allowed?.size === 0) return [];
  const ranked = await order(run, rankSides(run, allowed, queryVector), queryVector);
  return collectResults(run, ranked, rowsById(await readMemories(core.db, firstIds(run, ranked))), now);
}

/** The positions of the indexes a search reads (the keyword one in vector mode is not read). */
function positionsOf(run: SearchRun): IndexPosition[] {
  const positions: IndexPosition[] = [{ seq: run.state.seq, generation: run.state.generation }];
  if (run.options.mode !== 'keyword') positions[0]!.embedderId = run.state.embedderId;
  if (run.keywords !== undefined) positions.push({ seq: run.keywords.seq, generation: run.keywords.generation });
  return positions;
}

/**
 * Whether the log stood, when `head` was read, where every index stood when the search ranked
 * (`at`): nothing logged after them, none compacted away before them, the same store generation and
 * (for a ranking by vector) the same recorded model.
 * Then the ranking is the store's as the rows read with `head` show it.
 */
function upToDate(head: LogHead, at: readonly IndexPosition[]): boolean {
  return at.every(
    (p) =>
      p.generation === head.generation &&
      head.last <= p.seq &&
      head.floor <= p.seq &&
      (p.embedderId === undefined || head.embedderId === undefined || p.embedderId === head.embedderId),
  );
}

/** The rows a search has read, by id: each opened (a store encrypted at rest) when the results reach it. */
type RowsById = Map<string, () => MemoryRow | undefined>;

/** `rows` by id, into `into` (a new map when none). */
function rowsById(rows: ReadRows, into: RowsById = new Map()): RowsById {
  rows.ids.forEach((id, i) => into.set(id, () => rows.get(i)));
  return into;
}

/**
 * Each side's best from the in-memory indexes as they stand (synchronous: the indexes do not move
 * under it), and the rows to read first: each side's best `limit` (and `spare` more), among which
 * the fused order's best are.
 */
function rankSides(
  run: SearchRun,
  allowed: ReadonlySet<string> | undefined,
  queryVector: Float32Array | undefined,
): Sides {
  const keywordRanked = rankKeywords(run, allowed);
  // A scope is searched from the index's memory, never by reading its vectors: an exact scan of
  // its members or a filtered graph walk, whichever the measured costs say is cheaper.
  const vectorRanked =
    queryVector === undefined
      ? []
      : allowed === undefined
        ? run.state.index.search(queryVector, run.pool)
        : run.state.index.searchIn(queryVector, run.pool, allowed);
  return { vectorRanked, keywordRanked };
}

/**
 * The rows read first: the order's best `limit`, nothing spare. Each row read is an IndexedDB
 * request whose cost on the page's thread is of the order of the whole ranking's (bench/results/REPORT.md,
 * "Measurements cited by the code"), so the rows are read once the order is known, not each
 * side's best before it (about three times as many in hybrid mode); a row missing or failing
 * the filter on a second look is rare, and then the next ones are read (collectResults).
 */
function firstIds(run: SearchRun, ranked: readonly FusedHit[]): string[] {
  return ranked.slice(0, run.options.limit).map((h) => h.id);
}

/** The search's order: the two sides fused (hybrid) or the one side's, above the threshold. */
async function order(run: SearchRun, sides: Sides, queryVector: Float32Array | undefined): Promise<FusedHit[]> {
  const { mode, threshold } = run.options;
  let ranked: FusedHit[];
  if (mode === 'hybrid') ranked = await fuseSides(run, sides, queryVector);
  else if (mode === 'vector')
    ranked = sides.vectorRanked.map((h) => ({ id: h.id, relevance: vectorRelevance(h.score), similarity: h.score }));
  else
    ranked = sides.keywordRanked.map((h) => ({
      id: h.id,
      relevance: h.relevance,
      keywordScore: h.score,
      keywordRelevance: h.relevance,
    }));
  if (threshold === undefined) return ranked;
  // A per-query hybrid relevance is relative to the query's best: above the threshold, a result also needs evidence.
  if (mode === 'hybrid') return ranked.filter((h) => h.relevance >= threshold && hasEvidence(h, run.profile));
  return ranked.filter((h) => h.relevance >= threshold);
}

/**
 * The keyword side's best, from the in-memory postings (lib/engine/keywords/keyword-state.ts): a
 * scope is filtered inside the walk of the query terms' postings or, when small against them (one
 * user of many), its memories alone are scored by binary search in those postings; the ranking is
 * the same either way. Empty in vector mode.
 */
function rankKeywords(
  run: SearchRun,
  allowed: ReadonlySet<string> | undefined,
): { id: string; score: number; relevance: number }[] {
  if (run.keywords === undefined) return [];
  return run.keywords.searchCaughtUp(MEMORY_CORPUS, run.query, {
    depth: run.pool,
    prune: true,
    ...(allowed === undefined ? {} : { within: allowed }),
  }).hits;
}

/**
 * Hybrid: both sides fused. Keyword hits the vector pool missed get their true similarity when they
 * could still be returned: the pool is the best by similarity, so such a hit's similarity is at most
 * the pool's lowest, and its relevance at most that fused with its keyword relevance (each side
 * scaled as the model's fusion scales it, lib/search/fusion.ts). One that cannot reach the
 * `limit`-th relevance of the pool's hits is left at the keyword side's.
 */
async function fuseSides(run: SearchRun, sides: Sides, queryVector: Float32Array | undefined): Promise<FusedHit[]> {
  const { profile, state } = run;
  const { vectorRanked, keywordRanked } = sides;
  const weights: FusionWeights = gatedWeights(vectorRanked, {
    vector: profile.vectorWeight,
    keyword: profile.keywordWeight,
    scale: profile.fusionScale,
    ...(profile.vectorGate === undefined ? {} : { gate: profile.vectorGate }),
  });
  const missing = keywordContenders(run, sides, weights);
  // From the index's own copies (no store read); only ids it does not hold are read from the store.
  const similarityOf =
    queryVector !== undefined && missing.length > 0
      ? state.index.similarities(queryVector, missing)
      : new Map<string, number>();
  const unheld = missing.filter((id) => !similarityOf.has(id));
  if (queryVector !== undefined && unheld.length > 0)
    for (const [id, s] of await storedScores(run.core, run.state.embedderId, queryVector, unheld))
      similarityOf.set(id, s);
  return fuse(vectorRanked, keywordRanked, { weights, similarityOf });
}

/**
 * The keyword hits outside the vector pool that could still reach the `limit`-th relevance of the pool's
 * hits, taking for each the pool's lowest similarity (its highest possible).
 */
function keywordContenders(run: SearchRun, sides: Sides, weights: FusionWeights): string[] {
  const { pool } = run;
  const { limit } = run.options;
  const { vectorRanked, keywordRanked } = sides;
  const scaling = fusionScaling(vectorRanked, keywordRanked, weights);
  const pooled = new Set(vectorRanked.map((h) => h.id));
  const floor = vectorRanked.length >= pool ? vectorRanked[vectorRanked.length - 1]!.score : 1;
  const keywordOf = new Map(keywordRanked.map((h) => [h.id, h.relevance]));
  const pooledRelevance = vectorRanked
    .map((h) => combine(scaling.vector(h.score), scaling.keyword(keywordOf.get(h.id)), weights))
    .sort((a, b) => b - a);
  const bar = pooledRelevance.length >= limit ? pooledRelevance[limit - 1]! : -Infinity;
  return keywordRanked
    .filter((h) => !pooled.has(h.id) && combine(scaling.vector(floor), scaling.keyword(h.relevance), weights) >= bar)
    .map((h) => h.id);
}

/**
 * Exact cosine similarity of `query` with the stored vectors of `ids`, read from
 * the store: only for ids the index does not hold (a vector it skipped as damaged).
 */
async function storedScores(
  core: EngineStore,
  model: string,
  query: Float32Array,
  ids: readonly string[],
): Promise<Map<string, number>> {
  const rows = await core.db.vectors.bulkGet([...ids]);
  const index = ExactIndex.create({ dimensions: query.length });
  const usable: { id: string; vector: Float32Array }[] = [];
  rows.forEach((row, i) => {
    // The query's model is the store's as this search knows it (a switched row's staged vector counts).
    const v = currentVector(row, model);
    if (v === undefined) return;
    // A stored vector that cannot be scored (wrong length, NaN) is skipped and reported.
    const defect = vectorDefect(v.vector, query.length);
    if (defect !== undefined) core.reportDamaged({ table: 'vectors', key: ids[i]!, reason: defect });
    else usable.push({ id: ids[i]!, vector: v.vector });
  });
  index.addMany(usable);
  return new Map(index.search(query, Math.max(index.size, 1)).map((h) => [h.id, h.score]));
}

/**
 * The results: the ranked hits whose rows are there and pass the filter on a second look (e.g.
 * expired since), up to `limit`. `read` holds the rows read already; the next ones are read a few
 * more than missing at a time while results are missing.
 */
async function collectResults(
  run: SearchRun,
  ranked: readonly FusedHit[],
  read: RowsById,
  now: number,
): Promise<ScoredMemory[]> {
  const { filter, limit } = run.options;
  const out: ScoredMemory[] = [];
  let next = 0;
  for (let round = 0; out.length < limit && next < ranked.length; round++) {
    const chunk = ranked.slice(next, next + limit - out.length + (round === 0 ? 0 : ROW_SPARE));
    next += chunk.length;
    const unread = chunk.map((h) => h.id).filter((id) => !read.has(id));
    if (unread.length > 0) rowsById(await readMemories(run.core.db, unread), read);
    for (const hit of chunk) {
      if (out.length === limit) break;
      // Opened here (a store encrypted at rest): only the rows the results reach.
      const row = read.get(hit.id)?.();
      if (row === undefined || !filter.matches(row, now)) continue;
      out.push(scoredMemory(row, hit));
    }
  }
  return out;
}

/** A result: `row` with the relevance of its fused `hit` and whichever side's scores the hit has. */
function scoredMemory(row: MemoryRow, hit: FusedHit): ScoredMemory {
  const item: ScoredMemory = { row, score: hit.relevance };
  if (hit.similarity !== undefined) item.similarity = hit.similarity;
  if (hit.keywordScore !== undefined) item.keywordScore = hit.keywordScore;
  if (hit.keywordRelevance !== undefined) item.keywordRelevance = hit.keywordRelevance;
  return item;
}
