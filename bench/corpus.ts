/**
 * A seeded synthetic conversation log for search benchmarks. Common words follow
 * a Zipf law over a fixed vocabulary; every thread also has a few topic words of
 * its own (names, places, projects), so the vocabulary grows with the log as it
 * does in real conversations (Heaps' law). Queries are what a person searching
 * their history types: a distinctive word of a past message and a common word
 * from that same message.
 */
import { mulberry32, type Rng } from './util/rng.js';

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ren',
  'to',
  'sa',
  'vel',
  'du',
  'pri',
  'no',
  'ga',
  'zet',
  'shu',
  'bra',
  'el',
  'qui',
  'tor',
  'an',
  'fi',
  'mo',
];

function word(rng: Rng, parts: number): string {
  let w = '';
  for (let i = 0; i < parts; i++) w += SYLLABLES[Math.floor(rng() * SYLLABLES.length)]!;
  return w;
}

/** One generated message. */
export interface CorpusMessage {
  threadId: string;
  content: string;
}

/** Common words: the 3000 most frequent. Topic words are drawn from the ranks after {@link RARE_FROM}. */
const COMMON_WORDS = 3000;
const RARE_FROM = 5000;

/**
 * Generates `count` messages in threads of 50, deterministic for `seed`.
 * Without `vocabulary` the words are made up from syllables (enough for keyword
 * search). With one (real words, most frequent first, e.g. the embedding
 * model's own vocabulary), the common words are its first 3000 and the topic
 * words come from its rarer part, so that an embedding model knows them: made-up
 * words are unknown to a word-vector model, and every message would embed to
 * the same vector.
 */
export function conversationCorpus(
  count: number,
  seed = 7,
  vocabulary?: readonly string[],
): { messages: CorpusMessage[]; queries: (n: number) => string[] } {
  const rng = mulberry32(seed);
  if (vocabulary !== undefined && vocabulary.length < RARE_FROM * 2)
    throw new RangeError(`a vocabulary needs at least ${RARE_FROM * 2} words`);
  const common = Array.from({ length: COMMON_WORDS }, (_, i) => vocabulary?.[i] ?? `${word(rng, 2)}${i.toString(36)}`);
  const commonSet = new Set(common);
  const topicWord = (t: number): string =>
    vocabulary === undefined
      ? `${word(rng, 3)}${t.toString(36)}`
      : vocabulary[RARE_FROM + Math.floor(rng() * (vocabulary.length - RARE_FROM))]!;
  // Zipf(1.0) cumulative weights for the common vocabulary.
  const weights = common.map((_, i) => 1 / (i + 1));
  const cumulative: number[] = [];
  let sum = 0;
  for (const w of weights) cumulative.push((sum += w));
  const pickCommon = (): string => {
    const x = rng() * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return common[lo]!;
  };
  const messages: CorpusMessage[] = [];
  const topicsOf: string[][] = [];
  for (let i = 0; i < count; i++) {
    const t = Math.floor(i / 50);
    if (topicsOf[t] === undefined) topicsOf[t] = Array.from({ length: 8 }, () => topicWord(t));
    const topics = topicsOf[t];
    const len = 8 + Math.floor(rng() * 14);
    const words: string[] = [];
    for (let j = 0; j < len; j++) words.push(rng() < 0.12 ? topics[Math.floor(rng() * topics.length)]! : pickCommon());
    messages.push({ threadId: `thread-${t}`, content: `${words.join(' ')}.` });
  }
  const queries = (n: number): string[] => {
    const q = mulberry32(seed + 1);
    const out: string[] = [];
    while (out.length < n) {
      const m = messages[Math.floor(q() * messages.length)]!;
      const words = m.content.slice(0, -1).split(' ');
      const topic = words.find((w) => !commonSet.has(w));
      if (topic === undefined) continue;
      const other = words[Math.floor(q() * words.length)]!;
      out.push(other === topic ? topic : `${topic} ${other}`);
    }
    return out;
  };
  return { messages, queries };
}
