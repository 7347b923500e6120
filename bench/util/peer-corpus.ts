/**
 * The one corpus every system of bench/peers indexes: seeded 384-d unit
 * vectors with a short text each, and queries (a unit vector near the data and
 * the words a person would type). Built the same in the page (to insert and
 * query) and in Node (the exact top-10, ground truth), so the embedding is
 * never timed and every system sees identical input.
 */
import { conversationCorpus } from '../corpus.js';
import { clusteredVectors } from './vectors.js';

/** Dimensions of every vector in the comparison (a MiniLM-class sentence model's). */
export const PEER_DIMS = 384;

/** What every system indexes and is asked. Document i is `vectors[i]` with `texts[i]`; hits are reported as i. */
export interface PeerCorpus {
  vectors: Float32Array[];
  texts: string[];
  queryVectors: Float32Array[];
  queryTexts: string[];
}

/** `v` scaled to length 1 (cosine, inner product and L2 then rank alike). */
export function unit(v: Float32Array): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  const scale = 1 / Math.sqrt(norm);
  return v.map((x) => x * scale);
}

/**
 * The corpus of `n` documents and `queries` queries, deterministic.
 * Each text ends in a token of its own (`m<i>`), so that a system returning
 * texts (engram) maps every hit back to exactly one document.
 * With `documents: false` only the queries are built (a page that opens a persisted store holds no corpus).
 */
export function peerCorpus(n: number, queries: number, documents = true): PeerCorpus {
  const clusters = Math.max(8, Math.round(Math.sqrt(n)));
  const words = conversationCorpus(n, 7);
  return {
    vectors: documents
      ? clusteredVectors({ count: n, dimensions: PEER_DIMS, clusters, seed: 21, centreSeed: 20 }).map(unit)
      : [],
    texts: documents ? words.messages.map((m, i) => `${m.content.slice(0, -1)} m${i}`) : [],
    queryVectors: clusteredVectors({ count: queries, dimensions: PEER_DIMS, clusters, seed: 22, centreSeed: 20 }).map(
      unit,
    ),
    queryTexts: distinct(words.queries(queries * 2), queries),
  };
}

/**
 * The first `count` distinct entries of `texts`: a query's text keys its vector (engram embeds
 * the text, and may reuse the vector of a text it embedded before), so no two queries share one.
 */
function distinct(texts: readonly string[], count: number): string[] {
  const out = [...new Set(texts)].slice(0, count);
  if (out.length < count) throw new RangeError(`only ${out.length} distinct query texts, ${count} wanted`);
  return out;
}

/** The document index a text of {@link peerCorpus} belongs to (its last token), or -1. */
export function documentOfText(text: string): number {
  const match = / m(\d+)$/.exec(text);
  return match === null ? -1 : Number(match[1]);
}
