/**
 * What search learned about each embedding model, keyed by the embedder's id:
 * how a query is embedded in each mode, how hybrid weighs the model's cosine
 * similarity against keyword relevance, and the relevance below which a
 * memory does not count as recalled. Every value was chosen by
 * `npx tsx bench/eval/tune.ts` on the tuning halves only (LoCoMo conversations
 * 26, 30, 41, 42, 43 and the generated sets' tuning splits); the held-out
 * figures are in bench/results/REPORT.md, section eval.
 *
 * Why per model: a word-vector model (the offline GloVe one) gives every
 * sentence of a conversation a similarity of 0.5–0.8 with any question, so a
 * cosine of 0.7 means little and hybrid must lean on keywords; a sentence
 * model (all-MiniLM-L6-v2) separates meaning well and is weighed more; e5,
 * better still on real conversation, is weighed most (both scaled per query). A model trained with
 * marked queries and passages gets its marks here too.
 */
import type { FusionScale, VectorGate } from './fusion.js';

/**
 * How a query is embedded: `content-words`, its words without stopwords and
 * question words ("What does she like to eat?" → "like eat"; a mean-pooled
 * word-vector model otherwise matches questions with questions), or
 * `question`, the question as written (contractions expanded), which a
 * sentence model was trained on.
 */
export type QueryForm = 'content-words' | 'question';

/** Search settings for one embedding model. */
export interface RetrievalProfile {
  /** How the query is embedded in `vector` mode. */
  readonly vectorQuery: QueryForm;
  /** How the query is embedded for the vector side of `hybrid` mode. */
  readonly hybridQuery: QueryForm;
  /**
   * Hybrid relevance is 1 − (1 − vectorWeight × similarity) × (1 − keywordWeight × keyword relevance)
   * (lib/search/fusion.ts): what one unit of this model's similarity is worth against keywords.
   */
  readonly vectorWeight: number;
  readonly keywordWeight: number;
  /** How each side is scaled before the two are fused (lib/search/fusion.ts `FusionScale`). */
  readonly fusionScale: FusionScale;
  /**
   * When hybrid trusts the vector side less (lib/search/fusion.ts `VectorGate`): where a query's
   * best similarity hardly stands out from its pool. None: always {@link vectorWeight}.
   */
  readonly vectorGate?: VectorGate;
  /**
   * The default minimum relevance of a recalled memory (PersistentMemory.retrieve,
   * the agent's recall) in hybrid mode: the highest that keeps at least 95% of the
   * answers found in the top 5 on every tuning set. For the word-vector model it trims
   * noise rather than proves relevance: its similarities are high for anything.
   */
  readonly minRelevance: number;
  /**
   * The lowest cosine similarity of a match in `vector` mode (a meaning search lists
   * nothing below it). With `absolute` fusion it is the same cut as {@link minRelevance}
   * (hybrid scores a memory only the vector side finds as vectorWeight × cosine, so
   * minRelevance / vectorWeight); with `per-query` fusion hybrid's threshold is relative to the
   * query's best and says nothing about a cosine, so the model keeps its own.
   */
  readonly minSimilarity: number;
  /**
   * Put before a query's text when it is embedded, and {@link passagePrefix}
   * before a memory's: models trained on marked pairs (e5's "query: " and
   * "passage: ") embed unmarked text worse. Applied in one place, {@link textToEmbed}.
   */
  readonly queryPrefix: string;
  readonly passagePrefix: string;
}

/** What a text is embedded as: a search's query, or a stored memory. */
export type EmbeddingRole = 'query' | 'passage';

/**
 * The text the model is given for `text` in `role` under `profile` (its prefix, then the text).
 * @example
 * textToEmbed(retrievalProfile('Xenova/e5-small-v2'), 'query', 'where does she live') // 'query: where does she live'
 */
export function textToEmbed(profile: RetrievalProfile, role: EmbeddingRole, text: string): string {
  return `${role === 'query' ? profile.queryPrefix : profile.passagePrefix}${text}`;
}

/**
 * For an embedder this table does not know (a model of the user's choice, a
 * test embedder): the fusion and threshold measured before models had
 * profiles (noisy-OR with keyword weight 0.9, content-word queries, 0.35), which
 * keep hybrid never below the similarity.
 */
export const DEFAULT_RETRIEVAL_PROFILE: RetrievalProfile = Object.freeze({
  vectorQuery: 'content-words',
  hybridQuery: 'content-words',
  vectorWeight: 1,
  keywordWeight: 0.9,
  fusionScale: 'absolute',
  minRelevance: 0.35,
  minSimilarity: 0.35,
  queryPrefix: '',
  passagePrefix: '',
});

/** Measured profiles, by the model name at the end of the embedder id, lower case. */
const PROFILES: ReadonlyMap<string, RetrievalProfile> = new Map<string, RetrievalProfile>([
  [
    // The offline GloVe model (engram's default embedder). Its threshold is not the tuned 0.05 (the
    // highest keeping 95% of found answers): that admits any memory of cosine 0.2, which for this
    // model is nearly every sentence (the demo recalled "I am allergic to peanuts" for "Where do I
    // live?" at 0.08). It stays the threshold measured before profiles, cosine 0.35, in this
    // fusion's scale for a memory only the vector side finds (0.25 × 0.35); a precision-aware
    // rule (questions about facts never told) is left to the next tuning round.
    'engram-glove-100d',
    Object.freeze({
      vectorQuery: 'content-words',
      hybridQuery: 'content-words',
      vectorWeight: 0.25,
      keywordWeight: 1,
      fusionScale: 'absolute',
      minRelevance: 0.0875,
      minSimilarity: 0.35,
      queryPrefix: '',
      passagePrefix: '',
    }),
  ],
  [
    // all-MiniLM-L6-v2, as Xenova/all-MiniLM-L6-v2 or sentence-transformers/all-MiniLM-L6-v2. Its cosines crowd
    // into a narrow band, and the noisy-OR of raw scores that won on the tuning half lost to keyword on the
    // held-out one: each side is scaled over its own list (leave-one-conversation-out chose it, bench/eval/tune.ts),
    // and the threshold is relative to the query's best.
    'all-minilm-l6-v2',
    Object.freeze({
      vectorQuery: 'question',
      hybridQuery: 'question',
      vectorWeight: 1,
      keywordWeight: 1,
      fusionScale: 'per-query',
      // Per-query scaling makes the pool's best 1 also where MiniLM sees nothing near the question (its whole
      // pool within a few hundredths): then its side is worth 0.2. Chosen on the tuning half with
      // leave-one-conversation-out (bench/eval/tune.ts, step 2b).
      vectorGate: Object.freeze({ depth: 40, margin: 0.15, weight: 0.2 }),
      minRelevance: 0.55,
      // The cosine cut hybrid's absolute fusion made before this round (0.15 at vector weight 0.6).
      minSimilarity: 0.25,
      queryPrefix: '',
      passagePrefix: '',
    }),
  ],
  [
    // e5-small-v2 (intfloat), as Xenova/e5-small-v2: trained with "query: " / "passage: " marks. Its cosines
    // sit high for any pair of sentences (about 0.7 unrelated) and, as MiniLM's, crowd into a band that moves
    // from query to query: each side is scaled over its own list (leave-one-conversation-out on LoCoMo's tuning
    // half chose it over the noisy-OR of raw scores, bench/eval/tune.ts), and the threshold is relative to the
    // query's best: 0.65 keeps at least 95% of the answers hybrid finds in the top 5 on every tuning set.
    'e5-small-v2',
    Object.freeze({
      vectorQuery: 'question',
      hybridQuery: 'question',
      vectorWeight: 1,
      keywordWeight: 0.8,
      fusionScale: 'per-query',
      minRelevance: 0.65,
      // The cosine cut hybrid's absolute fusion made before this round (0.7 at vector weight 0.9): with the
      // threshold it still keeps at least 95% of those answers on every tuning set; 0.8 does not (bench/eval/tune.ts, step 4).
      minSimilarity: 0.7 / 0.9,
      queryPrefix: 'query: ',
      passagePrefix: 'passage: ',
    }),
  ],
  [
    // bge-small-en-v1.5 (BAAI), as Xenova/bge-small-en-v1.5: its query instruction, no passage mark, [CLS]
    // pooling (the folder's config says so). Between MiniLM and e5 on LoCoMo's tuning half.
    'bge-small-en-v1.5',
    Object.freeze({
      vectorQuery: 'question',
      hybridQuery: 'question',
      vectorWeight: 0.8,
      keywordWeight: 0.8,
      fusionScale: 'absolute',
      minRelevance: 0.4,
      minSimilarity: 0.4 / 0.8,
      queryPrefix: 'Represent this sentence for searching relevant passages: ',
      passagePrefix: '',
    }),
  ],
]);

/**
 * The profile of an embedder, by the last segment of its id (so a hub id, a
 * local folder and a mirror's path agree), or {@link DEFAULT_RETRIEVAL_PROFILE}.
 * @example
 * retrievalProfile('Xenova/all-MiniLM-L6-v2').vectorQuery // 'question'
 */
export function retrievalProfile(embedderId: string): RetrievalProfile {
  const name =
    embedderId
      .split(/[\\/]/)
      .filter((s) => s !== '')
      .pop()
      ?.toLowerCase() ?? '';
  return PROFILES.get(name) ?? DEFAULT_RETRIEVAL_PROFILE;
}

/** What a hybrid result carries besides its fused relevance: the evidence of each side. */
export interface RecallEvidence {
  readonly similarity?: number;
  readonly keywordRelevance?: number;
}

/**
 * Whether a hybrid result's relevance means something on its own under `profile`: always where
 * the fusion is absolute; where it scales per query (the query's best is near 1 whether or not
 * anything fits), only when it matched the query's keywords or its cosine reaches
 * {@link RetrievalProfile.minSimilarity}. A hybrid search's `threshold` keeps only such results
 * (memory-search.ts), so a question about a fact never told recalls nothing.
 * @example
 * hasEvidence({ similarity: 0.1 }, retrievalProfile('Xenova/all-MiniLM-L6-v2')) // false
 */
export function hasEvidence(hit: RecallEvidence, profile: RetrievalProfile): boolean {
  if (profile.fusionScale === 'absolute') return true;
  return (hit.keywordRelevance ?? 0) > 0 || (hit.similarity ?? 0) >= profile.minSimilarity;
}

/**
 * Whether a hybrid search result counts as recalled (the recall of PersistentMemory.retrieve and
 * the agent's turn, which search with this threshold; the apps' recall marks): its relevance
 * reaches `threshold` (by default the profile's {@link RetrievalProfile.minRelevance}) and it
 * {@link hasEvidence}.
 * @example
 * isRecalled({ score: 1, similarity: 0.1 }, retrievalProfile('Xenova/all-MiniLM-L6-v2')) // false
 */
export function isRecalled(
  result: RecallEvidence & { readonly score: number },
  profile: RetrievalProfile,
  threshold: number = profile.minRelevance,
): boolean {
  return result.score >= threshold && hasEvidence(result, profile);
}
