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
import { SCOPE_FIELDS } from '../../store/scope.js';
import { isLive, type MemoryRow } from '../../store/rows.js';
import type { EngineStore } from '../engine-store.js';
import type { SemanticIndex } from '../vectors/semantic-index.js';
import type { VectorIndex } from '../../vector/vector-index.js';
import type { MemoryInput } from './memories.js';
import { statementKey, type ScopeTable } from '../vectors/scope-table.js';

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

/**
 * Most log entries of this instance's own writes the index may not have applied
 * yet when add() takes its candidates; past it, add() waits for the index. The
 * write transaction reads these entries (small rows: table, id, operation).
 */
export const MAX_UNAPPLIED = 1024;

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
  if (!isLive(row, now)) return false;
  if (row.key !== undefined || row.tier !== input.tier) return false;
  return SCOPE_FIELDS.every((k) => row[k] === input.scope[k]);
}

/** What {@link nearCandidates} found, for {@link nearDuplicates}. */
export interface NearCandidates {
  /** Ids of standing memories of the input's statement key, by input index. */
  candidates: ReadonlyMap<number, readonly string[]>;
  /** The change-log position the scope table reflected. */
  seq: number;
  /** The model of the index's vectors (the store's, as this instance knows it). */
  embedderId: string;
  /** Similarity of `vector` to each of `ids` in the current index. */
  similarities: VectorIndex['similarities'];
  /**
   * False once this instance has found a damaged row (a live memory whose
   * vector the index could not take may then be missing from the table): the
   * exact check then looks every input up in the store instead.
   */
  complete: boolean;
}

/**
 * The standing memories that may say the same as each keyless input, or be
 * the same text: those of its statement key in the index's scope table (no
 * graph search, no vector, no read), and the change-log position the table
 * reflects. `comparables[i]` is input i's comparable text, undefined for a
 * keyed input. Every live memory with a usable vector is in that table (every
 * write path stores a live memory with its vector), so while no damaged row
 * was found, a keyless input none of them (nor anything logged after `seq`)
 * shares a statement with is neither an exact nor a near duplicate. Runs
 * before the write transaction; {@link nearDuplicate} decides inside it.
 *
 * It does not wait for the index's queue (the previous add's update, a
 * promotion to HNSW, a snapshot: what waiting there cost is in
 * bench/results/REPORT.md, "Measurements cited by the code"): the scope table and `seq` always agree, since the index
 * applies each write with its position in one step, and the write transaction
 * checks what was logged after `seq`, this instance's own writes from memory
 * (`core.ownMemory`). Only when the index lags this instance's writes by more
 * than {@link MAX_UNAPPLIED} log entries does it wait, so that check stays small.
 */
export async function nearCandidates(
  core: EngineStore,
  semantic: SemanticIndex,
  comparables: readonly (string | undefined)[],
): Promise<NearCandidates> {
  const { state } = await semantic.ready();
  // No catch-up either (reads of the store): another tab's writes are in the log after `seq` too.
  if (core.lastOwnSeq - state.seq > MAX_UNAPPLIED) await state.idle();
  const candidates = statementCandidates(state.scopes, comparables);
  // The index as it is when asked: it may be promoted or reloaded before the transaction.
  return {
    candidates,
    seq: state.seq,
    embedderId: state.embedderId,
    similarities: (vector, ids) => state.index.similarities(vector, ids),
    complete: core.damaged.length === 0,
  };
}

/** By input index: the standing memories of each keyless input's statement key (inputs with none left out). */
function statementCandidates(
  scopes: ScopeTable,
  comparables: readonly (string | undefined)[],
): Map<number, readonly string[]> {
  const candidates = new Map<number, readonly string[]>();
  comparables.forEach((comparable, i) => {
    if (comparable === undefined) return;
    const same = scopes.withStatement(statementKey(comparable));
    if (same.size > 0) candidates.set(i, [...same]);
  });
  return candidates;
}

/**
 * The standing memory among `candidates` (ids of the input's statement key)
 * that says the same as `input`, if any: close enough to its vector (`vector`,
 * unit length), of the same tier and scope, and of equal comparable text
 * (`comparable`). `rows` holds the candidates as the store has them now.
 */
export function nearDuplicate(
  core: EngineStore,
  near: NearCandidates,
  rows: ReadonlyMap<string, MemoryRow>,
  input: { input: MemoryInput; comparable: string | undefined; candidates: readonly string[] },
  vector: Float32Array | undefined,
  now: number,
): MemoryRow | undefined {
  const { comparable, candidates } = input;
  if (candidates.length === 0 || vector === undefined || comparable === undefined) return undefined;
  const close = [...near.similarities(vector, candidates)]
    .filter(([, score]) => score >= NEAR_DUPLICATE_SIMILARITY)
    .sort((a, b) => b[1] - a[1]);
  // The text itself is compared: equal statement keys could be a hash collision.
  return close
    .map(([id]) => rows.get(id))
    .find(
      (r): r is MemoryRow =>
        r !== undefined && sameSlot(r, input.input, now) && core.analyzer.comparable(r.text) === comparable,
    );
}

/**
 * Whether `a` (a memory logged meanwhile, or one of the batch's own) may say
 * the same as `input`: same tier and scope, equal comparable text. Only then
 * do their vectors decide ({@link sameStatement}).
 */
export function mayBeSame(
  a: { row: MemoryRow; comparable: string | undefined },
  input: MemoryInput,
  comparable: string,
  now: number,
): boolean {
  return a.comparable === comparable && sameSlot(a.row, input, now);
}

/** Whether two sayings that {@link mayBeSame} say the same: their vectors are close. */
export function sameStatement(a: Float32Array, b: Float32Array): boolean {
  return cosine(a, b) >= NEAR_DUPLICATE_SIMILARITY;
}
