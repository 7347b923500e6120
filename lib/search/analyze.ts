/**
 * Text analysis shared by the keyword index and the embedder: one pure
 * function module, no I/O, no state.
 *
 * - {@link normalizeText}: Unicode compatibility form, one apostrophe, and
 *   (English) contractions expanded: "I'm" → "I am", "don't" → "do not". The
 *   embedder is given this text, so "I'm allergic" and "I am allergic" embed alike.
 * - {@link Analyzer.document}: the terms a document is indexed under: words
 *   folded (lower case, no diacritics), stopwords dropped, stemmed.
 * - {@link Analyzer.query}: the same, and the words that only make a sentence a
 *   question ("did", "how", "tell", "remember"…) dropped too.
 * - {@link Analyzer.queryText}: what a query is embedded as: its content words
 *   only. A mean-pooled word-vector model otherwise matches a question with
 *   other questions ("What can I not eat?" with "What can you recommend?")
 *   rather than with the statement that answers it; measured in bench/eval.
 *
 * Stemmers and stopword lists come from @orama/stemmers and @orama/stopwords:
 * maintained with the Orama search engine, typed ES modules, one subpath per
 * language (so a bundle carries only the languages it loads), no dependencies,
 * Apache-2.0. English is the Porter stemmer and the Snowball stopword list;
 * other languages load on demand with {@link loadAnalyzer}.
 *
 * Any change to what this module produces must bump {@link ANALYZER_VERSION}:
 * the store records the analyzer id and rebuilds its keyword index when it changes.
 */
import { stemmer as englishStemmer } from '@orama/stemmers/english';
import { stopwords as englishStopwords } from '@orama/stopwords/english';
import { ValidationError } from '../errors.js';

/** Bumped whenever the terms produced for a text change. */
export const ANALYZER_VERSION = 1;

/** The languages an analyzer can be loaded for. */
export const ANALYZER_LANGUAGES = [
  'english',
  'danish',
  'dutch',
  'finnish',
  'french',
  'german',
  'italian',
  'norwegian',
  'portuguese',
  'russian',
  'spanish',
  'swedish',
  'turkish',
] as const;
export type AnalyzerLanguage = (typeof ANALYZER_LANGUAGES)[number];

/** A text's indexable terms with their counts, and its length in terms. */
export interface AnalyzedDocument {
  terms: Map<string, number>;
  length: number;
}

/** How texts become terms, for one language. */
export interface Analyzer {
  /** Recorded in the store; another id means the keyword index is rebuilt. @example 'english/1' */
  readonly id: string;
  readonly language: AnalyzerLanguage;
  /** The text given to the embedder (contractions expanded for English). */
  normalize(text: string): string;
  /** The terms a document is indexed under, with counts. */
  document(text: string): AnalyzedDocument;
  /** The distinct terms of a query, in order of first appearance. */
  query(text: string): string[];
  /**
   * The text a query is embedded as: the normalized query's words without
   * stopwords and question words, unstemmed, in order; the normalized query
   * when no word is left ("Who am I?").
   */
  queryText(text: string): string;
  /**
   * A text reduced to what two sayings of one fact share: normalized, folded
   * words in order, without articles and filler words ("oh", "just",
   * "really"). Equal for "I'm allergic to peanuts." and "Oh, I am allergic
   * to peanuts!"; different as soon as a content word, a pronoun, a negation,
   * a number or a tense differs. The near-duplicate check of add() requires it.
   */
  comparable(text: string): string;
}

/** Ids of each language's analyzer: `<language>/<version>`. */
export function analyzerId(language: AnalyzerLanguage): string {
  return `${language}/${ANALYZER_VERSION}`;
}

/** The id of the default (English) analyzer. */
export const ANALYZER_ID = analyzerId('english');

const MAX_TERM_LENGTH = 64;
const WORD = /[\p{L}\p{N}]+/gu;
const APOSTROPHES = /[\u2018\u2019\u02bc\u00b4`]/g;

/**
 * Words that, in a question put to an assistant, only ask: they name no
 * content. Dropped from English queries on top of the stopword list (which
 * already has what, when, where, how, did, does…).
 */
const ENGLISH_QUESTION_WORDS: readonly string[] = [
  'tell',
  'told',
  'remember',
  'recall',
  'remind',
  'know',
  'please',
  'ever',
  'mention',
  'mentioned',
  'say',
  'said',
];

/** Words whose presence never changes what an English sentence states (see {@link Analyzer.comparable}). */
const ENGLISH_FILLERS: readonly string[] = [
  'a',
  'an',
  'the',
  'oh',
  'ah',
  'um',
  'uh',
  'just',
  'really',
  'actually',
  'basically',
  'honestly',
  'so',
  'okay',
  'ok',
  'hey',
  'btw',
];

/** English contractions, most specific first. `$1` keeps the case of the word's head. */
const ENGLISH_CONTRACTIONS: readonly [RegExp, string | ((m: string, ...g: string[]) => string)][] = [
  [/\b(w)on't\b/gi, (_, w) => `${w === 'W' ? 'W' : 'w'}ill not`],
  [/\b(c)an't\b/gi, (_, c) => `${c}an not`],
  [/\b(s)han't\b/gi, (_, s) => `${s}hall not`],
  [/\b(a)in't\b/gi, (_, a) => `${a === 'A' ? 'I' : 'i'}s not`],
  [/\b(y)'all\b/gi, (_, y) => `${y}ou all`],
  [/\b(l)et's\b/gi, (_, l) => `${l}et us`],
  [/\b(\p{L}+)n't\b/giu, '$1 not'],
  [/\b(i)'m\b/gi, '$1 am'],
  [/\b(\p{L}+)'re\b/giu, '$1 are'],
  [/\b(\p{L}+)'ve\b/giu, '$1 have'],
  [/\b(\p{L}+)'ll\b/giu, '$1 will'],
  [/\b(\p{L}+)'d\b/giu, '$1 would'],
  [
    /\b(it|that|what|where|who|there|here|he|she|how|when|why|everything|nothing|someone|somebody|everyone|this)'s\b/gi,
    '$1 is',
  ],
];

/** A trailing possessive: "Ana's" is indexed as "ana". */
const POSSESSIVE = /(\p{L})'s\b/gu;

function expandEnglish(text: string): string {
  // Every contraction has an apostrophe (unified to ' by then): most texts skip the patterns' scans.
  if (!text.includes("'")) return text;
  let out = text;
  for (const [pattern, replacement] of ENGLISH_CONTRACTIONS) {
    out = typeof replacement === 'string' ? out.replace(pattern, replacement) : out.replace(pattern, replacement);
  }
  return out;
}

/**
 * Lower-cased word tokens with diacritics removed and punctuation dropped.
 * Stopwords stay in.
 * @example
 * tokenize("Café, au-lait!") // ['cafe', 'au', 'lait']
 */
export function tokenize(text: string): string[] {
  const folded = text
    .replace(APOSTROPHES, "'")
    .replace(POSSESSIVE, '$1')
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  return folded.match(WORD)?.filter((t) => t.length <= MAX_TERM_LENGTH) ?? [];
}

/** Stems kept by {@link cachedStemmer} before it starts over: bounds its memory over a long-lived store. */
const STEM_CACHE_SIZE = 50_000;

/**
 * `stem` with its answers cached: a conversation repeats its words, and stemming is the costly
 * step of analysis. A number is its own stem.
 */
function cachedStemmer(stem: (word: string) => string): (token: string) => string {
  const stems = new Map<string, string>();
  return (token) => {
    let s = stems.get(token);
    if (s === undefined) {
      s = /^\p{N}+$/u.test(token) ? token : stem(token);
      if (stems.size >= STEM_CACHE_SIZE) stems.clear();
      stems.set(token, s);
    }
    return s;
  };
}

/** Builds an analyzer from a stemmer and stopword lists. */
function makeAnalyzer(
  language: AnalyzerLanguage,
  stem: (word: string) => string,
  stopwords: readonly string[],
  questionWords: readonly string[],
  fillers: readonly string[],
): Analyzer {
  const filler = new Set(fillers);
  const stop = new Set(stopwords.flatMap((w) => (tokenize(w).length === 1 ? tokenize(w) : [])));
  const queryStop = new Set([...stop, ...questionWords]);
  const expand = language === 'english' ? expandEnglish : (t: string): string => t;
  const stemOf = cachedStemmer(stem);
  const normalize = (text: string): string => expand(text.normalize('NFKC').replace(APOSTROPHES, "'"));
  const words = (text: string, skip: ReadonlySet<string>): string[] =>
    // A lone Latin letter ("a", "I", the "s" of "it's") carries no content.
    tokenize(normalize(text)).filter((token) => !skip.has(token) && !/^[a-z]$/.test(token));
  const terms = (text: string, skip: ReadonlySet<string>): string[] => words(text, skip).map(stemOf);
  return {
    id: analyzerId(language),
    language,
    normalize,
    document(text) {
      const counts = new Map<string, number>();
      const list = terms(text, stop);
      for (const t of list) counts.set(t, (counts.get(t) ?? 0) + 1);
      return { terms: counts, length: list.length };
    },
    query(text) {
      return [...new Set(terms(text, queryStop))];
    },
    queryText(text) {
      const content = words(text, queryStop);
      return content.length === 0 ? normalize(text) : content.join(' ');
    },
    comparable(text) {
      return tokenize(normalize(text))
        .filter((t) => !filler.has(t))
        .join(' ');
    },
  };
}

/** The default analyzer: English, Porter stemmer, Snowball stopwords plus question words for queries. */
export const ENGLISH_ANALYZER: Analyzer = makeAnalyzer(
  'english',
  englishStemmer,
  englishStopwords,
  ENGLISH_QUESTION_WORDS,
  ENGLISH_FILLERS,
);

/**
 * Expands contractions and unifies apostrophes (English); the embedder's input.
 * @example
 * normalizeText("I'm sure they don't") // 'I am sure they do not'
 */
export function normalizeText(text: string): string {
  return ENGLISH_ANALYZER.normalize(text);
}

/**
 * The indexed terms of a document (English).
 * @example
 * analyzeDocument("I'm allergic to peanuts").terms // Map { 'allerg' => 1, 'peanut' => 1 }
 */
export function analyzeDocument(text: string): AnalyzedDocument {
  return ENGLISH_ANALYZER.document(text);
}

/**
 * The terms of a query (English), question words dropped.
 * @example
 * analyzeQuery('What did I say about my allergies?') // ['allergi']
 */
export function analyzeQuery(text: string): string[] {
  return ENGLISH_ANALYZER.query(text);
}

/**
 * The text a query is embedded as (English): its content words.
 * @example
 * queryTextOf("What can't I eat?") // 'eat'
 */
export function queryTextOf(text: string): string {
  return ENGLISH_ANALYZER.queryText(text);
}

type Module<K extends string, T> = Promise<Record<K, T>>;
type Loader = () => Promise<
  [Awaited<Module<'stemmer', (w: string) => string>>, Awaited<Module<'stopwords', string[]>>]
>;

/** Each language's stemmer and stopwords, loaded on demand (literal specifiers, so bundlers split them). */
const LOADERS: Record<Exclude<AnalyzerLanguage, 'english'>, Loader> = {
  danish: () => Promise.all([import('@orama/stemmers/danish'), import('@orama/stopwords/danish')]),
  dutch: () => Promise.all([import('@orama/stemmers/dutch'), import('@orama/stopwords/dutch')]),
  finnish: () => Promise.all([import('@orama/stemmers/finnish'), import('@orama/stopwords/finnish')]),
  french: () => Promise.all([import('@orama/stemmers/french'), import('@orama/stopwords/french')]),
  german: () => Promise.all([import('@orama/stemmers/german'), import('@orama/stopwords/german')]),
  italian: () => Promise.all([import('@orama/stemmers/italian'), import('@orama/stopwords/italian')]),
  norwegian: () => Promise.all([import('@orama/stemmers/norwegian'), import('@orama/stopwords/norwegian')]),
  portuguese: () => Promise.all([import('@orama/stemmers/portuguese'), import('@orama/stopwords/portuguese')]),
  russian: () => Promise.all([import('@orama/stemmers/russian'), import('@orama/stopwords/russian')]),
  spanish: () => Promise.all([import('@orama/stemmers/spanish'), import('@orama/stopwords/spanish')]),
  swedish: () => Promise.all([import('@orama/stemmers/swedish'), import('@orama/stopwords/swedish')]),
  turkish: () => Promise.all([import('@orama/stemmers/turkish'), import('@orama/stopwords/turkish')]),
};

/**
 * The analyzer of a language (English is built in; others load their stemmer
 * and stopwords on first use).
 * @example
 * const analyzer = await loadAnalyzer('german')
 */
export async function loadAnalyzer(language: AnalyzerLanguage = 'english'): Promise<Analyzer> {
  if (language === 'english') return ENGLISH_ANALYZER;
  const loader = (LOADERS as Record<string, Loader | undefined>)[language];
  if (loader === undefined) throw new ValidationError('language', `must be one of ${ANALYZER_LANGUAGES.join(', ')}`);
  const [{ stemmer }, { stopwords }] = await loader();
  return makeAnalyzer(language, stemmer, stopwords, [], []);
}
