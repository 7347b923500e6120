/**
 * Near-duplicate detection for add(), without a language model: a new text is
 * the same memory as a standing one of the same tier and scope when both
 * - their vectors are close (cosine ≥ {@link NEAR_DUPLICATE_SIMILARITY}), and
 * - their comparable texts are equal (the analyzer's `comparable`: contractions
 *   expanded, case, punctuation, articles and filler words ignored).
 * Similarity alone cannot tell facts apart on a word-vector model ("I am
 * allergic to peanuts" and "I am not allergic to peanuts" score 0.996, "I have
 * 2 cats" and "I have 3 cats" 1.0), so the text check is what keeps distinct
 * facts apart; the similarity keeps the text check from matching texts the
 * embedder reads differently.
 */
import { SCOPE_FIELDS } from '../search/filters.js';
import type { MemoryRow } from '../store/rows.js';
import type { EngineStore } from './engine-store.js';
import type { SemanticIndex } from './semantic-index.js';
import type { MemoryInput } from './memories.js';
import { statementOf } from './scope-table.js';

/** How add() recognises a memory it already has. */
export const DEDUPE_MODES = ['exact', 'near', 'off'] as const;
/** `'exact'`: the same text; `'near'`: also the same statement said slightly differently; `'off'`: none. */
export type DedupeMode = (typeof DEDUPE_MODES)[number];

/**
 * Least cosine similarity of two sayings of one statement. Measured on
 * bench/eval's tuning split: every pair of turns with equal comparable text
 * scored at least 0.77 ("Oh, I'm…" against "I am…" weighs the filler), while
 * 0.99 is reached by distinct facts, so the text check decides.
 */
export const NEAR_DUPLICATE_SIMILARITY = 0.75;

/** Cosine similarity of two vectors of any length (0 when either is all zeros). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** True when `row` is live, of the input's tier and of exactly its scope, and has no key. */
function sameSlot(row: MemoryRow, input: MemoryInput, now: number): boolean {
  if (row.deletedAt !== undefined || (row.expiresAt !== undefined && row.expiresAt <= now)) return false;
  if (row.key !== undefined || row.tier !== input.tier) return false;
  return SCOPE_FIELDS.every((k) => row[k] === input.scope[k]);
}

/**
 * For each input that is to be checked (`check[i]`, keyless inputs only), the
 * standing memory that says the same, if any, and the change-log position the
 * check saw. `vectors[i]` is the input's embedding (vectors are unit length).
 * The memories that may say the same are looked up by statement key in the
 * index's scope table (no graph search); only those close enough are read, and
 * their text is compared.
 */
export async function findNearDuplicates(
  core: EngineStore,
  semantic: SemanticIndex,
  inputs: readonly MemoryInput[],
  vectors: readonly (Float32Array | undefined)[],
  check: readonly boolean[],
): Promise<{ found: (MemoryRow | undefined)[]; seq: number }> {
  const out: (MemoryRow | undefined)[] = inputs.map(() => undefined);
  if (!check.some(Boolean)) return { found: out, seq: Infinity };
  const { state } = await semantic.ready();
  // No catch-up (two reads of the store): the index reflects this instance's writes once its
  // queue is idle, and the write transaction checks whatever was logged after `seq` (another tab).
  await state.idle();
  const seq = state.seq;
  const now = core.now();
  const { analyzer } = core;
  /** Close standing memories by input index, closest first. */
  const candidates = new Map<number, string[]>();
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!;
    const vector = vectors[i];
    if (!check[i] || input.key !== undefined || vector === undefined) continue;
    const same = state.scopes.withStatement(statementOf(analyzer, input)!);
    if (same.size === 0) continue;
    const close = [...state.index.similarities(vector, same)].filter(([, score]) => score >= NEAR_DUPLICATE_SIMILARITY).sort((a, b) => b[1] - a[1]);
    if (close.length > 0) candidates.set(i, close.map(([id]) => id));
  }
  if (candidates.size === 0) return { found: out, seq };
  // Every candidate row of the batch in one read, not one read per text (bench/ingest).
  const ids = [...new Set([...candidates.values()].flat())];
  const rows = new Map((await core.db.memories.bulkGet(ids)).flatMap((r) => (r === undefined ? [] : [[r.id, r] as const])));
  for (const [i, hitIds] of candidates) {
    const input = inputs[i]!;
    const comparable = analyzer.comparable(input.text);
    // The text itself is compared: equal statement keys could be a hash collision.
    out[i] = hitIds.map((id) => rows.get(id)).find((r): r is MemoryRow => r !== undefined && sameSlot(r, input, now) && analyzer.comparable(r.text) === comparable);
  }
  return { found: out, seq };
}

/** Whether two inputs of one batch say the same (same tier and scope, close vectors, equal comparable text). */
export function sameStatement(core: EngineStore, a: { row: MemoryRow; vector: Float32Array }, input: MemoryInput, vector: Float32Array, now: number): boolean {
  return sameSlot(a.row, input, now) && cosine(a.vector, vector) >= NEAR_DUPLICATE_SIMILARITY && core.analyzer.comparable(a.row.text) === core.analyzer.comparable(input.text);
}
