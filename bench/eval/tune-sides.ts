/**
 * What bench/eval/tune.ts measures once per model and set, before any fusion is tried: per
 * question, the cosine similarity of every memory of its scope with the query embedded in each
 * form, engram's keyword hits, the evidence and the scope (a conversation, for leave-one-out).
 * `--sides DIR` keeps them in a folder outside the repository (they are derived from LoCoMo's
 * text ids and must not be committed), so that fusions can be tried again without embedding.
 */
import 'fake-indexeddb/auto'; // before Dexie is imported: it takes IndexedDB from the global at load
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Embedder } from '../../lib/index.js';
import { ENGLISH_ANALYZER } from '../../lib/search/analyze.js';
import { retrievalProfile, textToEmbed, type QueryForm } from '../../lib/search/retrieval-profile.js';
import type { EvalDataset } from './dataset.js';
import { answerable, loadSplit } from './harness.js';
import { countedQuestions } from './locomo.js';

/** Keyword hits kept per question (the deepest candidate list tried). */
export const KEYWORD_DEPTH = 100;
export const FORMS: readonly QueryForm[] = ['content-words', 'question'];

/** One question's two sides. */
export interface Sides {
  /** The question's scope (a conversation or a user): the unit left out in cross-validation. */
  group: string;
  evidence: Set<string>;
  /** Similarity of every memory of the scope, best first, per query form. */
  vector: Record<QueryForm, { id: string; score: number }[]>;
  /** Engram's keyword hits, best first. */
  keyword: { id: string; score: number; relevance: number }[];
}

/** An embedder that remembers the vector of every text it embedded (engram's memories). */
export function recording(inner: Embedder): Embedder & { seen: Map<string, Float32Array> } {
  const seen = new Map<string, Float32Array>();
  return {
    id: inner.id,
    dimensions: inner.dimensions,
    seen,
    async embed(texts, options) {
      const vectors = await inner.embed(texts, options);
      texts.forEach((t, i) => seen.set(t, vectors[i]!));
      return vectors;
    },
    dispose: () => Promise.resolve(),
  };
}

const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

/** Stores `dataset` in an Engram with `embedder` and reads every counted question's sides. */
export async function measureSides(
  dataset: EvalDataset,
  embedder: Embedder & { seen: Map<string, Float32Array> },
): Promise<Sides[]> {
  const split = await loadSplit(dataset, () => Promise.resolve(embedder));
  const profile = retrievalProfile(embedder.id);
  const scopeOf = new Map(
    dataset.users.flatMap((u) => u.sessions.flatMap((s) => s.turns.map((t) => [t.id, u.userId] as const))),
  );
  const memories = new Map<string, { id: string; vector: Float32Array }[]>();
  for (const [id, turn] of split.turnOf) {
    const vector = embedder.seen.get(textToEmbed(profile, 'passage', ENGLISH_ANALYZER.normalize(turn.text)));
    if (vector === undefined) throw new RangeError(`no vector recorded for memory ${id}`);
    const scope = scopeOf.get(turn.id)!;
    memories.set(scope, [...(memories.get(scope) ?? []), { id, vector }]);
  }
  const questions = dataset.set === 'locomo' ? countedQuestions(dataset.questions) : answerable(dataset.questions);
  // As lib/engine/semantic-index.ts embeds a query: normalized, then marked as a query.
  const asQuery = (text: string): string => textToEmbed(profile, 'query', ENGLISH_ANALYZER.normalize(text));
  const queries: Record<QueryForm, Float32Array[]> = {
    'content-words': await embedder.embed(questions.map((q) => asQuery(ENGLISH_ANALYZER.queryText(q.text)))),
    question: await embedder.embed(questions.map((q) => asQuery(q.text))),
  };
  const sides: Sides[] = [];
  for (const [i, q] of questions.entries()) {
    const scope = memories.get(q.userId) ?? [];
    const ranked = (form: QueryForm): { id: string; score: number }[] =>
      scope.map((m) => ({ id: m.id, score: dot(m.vector, queries[form][i]!) })).sort((a, b) => b.score - a.score);
    const { results } = await split.engram.search(q.text, { userId: q.userId, mode: 'keyword', limit: KEYWORD_DEPTH });
    sides.push({
      group: q.userId,
      evidence: new Set(q.evidence.map((t) => split.memoryOf.get(t)!)),
      vector: { 'content-words': ranked('content-words'), question: ranked('question') },
      keyword: results.map((r) => ({ id: r.id, score: r.keywordScore ?? 0, relevance: r.keywordRelevance ?? r.score })),
    });
  }
  await split.engram.close();
  return sides;
}

/** Sides as JSON (the evidence as a list). */
interface StoredSides extends Omit<Sides, 'evidence'> {
  evidence: string[];
}

/**
 * The sides of `set` for `model`: read from `dir` when kept there, else measured with `embedder()`
 * (made once, on first need) and kept in `dir` when given.
 */
export async function sidesOf(
  dir: string | undefined,
  model: string,
  set: string,
  dataset: () => EvalDataset,
  embedder: () => Promise<Embedder & { seen: Map<string, Float32Array> }>,
): Promise<Sides[]> {
  const file = dir === undefined ? undefined : join(dir, `${model}-${set}.json`);
  if (file !== undefined && existsSync(file)) {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as StoredSides[];
    return stored.map((s) => ({ ...s, evidence: new Set(s.evidence) }));
  }
  const sides = await measureSides(dataset(), await embedder());
  if (file !== undefined) {
    mkdirSync(dir!, { recursive: true });
    writeFileSync(file, JSON.stringify(sides.map((s): StoredSides => ({ ...s, evidence: [...s.evidence] }))));
  }
  return sides;
}
