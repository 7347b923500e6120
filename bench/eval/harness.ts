/**
 * Loads a generated split into a real Engram (fake-indexeddb in Node, the
 * default offline embedder), one memory per turn scoped to its user, and
 * ranks questions with engram's search modes and with the plain BM25 baseline.
 * Also audits add()'s duplicate handling: a turn stored as an existing memory
 * (`NONE`) must mean the same as the turn that memory came from.
 */
import 'fake-indexeddb/auto';
import { Engram, type Embedder, type SearchMode } from '../../lib/index.js';
import { Bm25 } from './bm25.js';
import type { EvalDataset, Question, Turn } from './dataset.js';
import { firstHit } from './metrics.js';

/** A split stored in an Engram, with the memory id each turn ended up as. */
export interface LoadedSplit {
  engram: Engram;
  dataset: EvalDataset;
  /** Turn id → memory id (a duplicate maps to the standing memory). */
  memoryOf: Map<string, string>;
  /** Memory id → the turn that created it. */
  turnOf: Map<string, Turn>;
  /** Turns that add() returned as an existing memory, and those whose meaning differed. */
  merges: { total: number; wrong: { turn: Turn; standing: Turn }[] };
  /** Milliseconds spent storing. */
  loadMs: number;
}

let stores = 0;

/**
 * Opens a fresh in-memory Engram and stores every turn of `dataset`, session by
 * session; with the default offline model unless `embedder` makes another.
 */
export async function loadSplit(dataset: EvalDataset, embedder?: () => Promise<Embedder>): Promise<LoadedSplit> {
  stores += 1;
  const name = `eval-${dataset.set}-${dataset.split}-${process.pid}-${stores}`;
  const engram = await Engram.open(embedder === undefined ? { name } : { name, embedder });
  const memoryOf = new Map<string, string>();
  const turnOf = new Map<string, Turn>();
  const merges: LoadedSplit['merges'] = { total: 0, wrong: [] };
  const started = performance.now();
  for (const user of dataset.users) {
    for (const session of user.sessions) {
      const { results } = await engram.add(
        session.turns.map((t) => ({ role: t.role, content: t.text })),
        { userId: user.userId, metadata: { session: session.index } },
      );
      session.turns.forEach((turn, i) => {
        const result = results[i];
        if (result === undefined) throw new RangeError(`add() returned no result for turn ${turn.id}`);
        memoryOf.set(turn.id, result.id);
        if (result.event === 'ADD') {
          turnOf.set(result.id, turn);
          return;
        }
        merges.total += 1;
        const standing = turnOf.get(result.id);
        if (standing === undefined || standing.meaning !== turn.meaning)
          merges.wrong.push({ turn, standing: standing ?? turn });
      });
    }
  }
  return { engram, dataset, memoryOf, turnOf, merges, loadMs: performance.now() - started };
}

/** The method names of the table, in order. */
export const METHODS = ['bm25-baseline', 'keyword', 'vector', 'hybrid'] as const;
export type Method = (typeof METHODS)[number];

/** First-hit ranks of every question for every method. */
export type RankTable = Record<Method, (number | undefined)[]>;

/** Memory ids of a search, best first. */
export async function engramRanking(
  split: LoadedSplit,
  question: Question,
  mode: SearchMode,
  limit = 10,
): Promise<string[]> {
  const { results } = await split.engram.search(question.text, { userId: question.userId, mode, limit });
  return results.map((r) => r.id);
}

/** The questions that have evidence (recall is measured on them). */
export function answerable(questions: readonly Question[]): Question[] {
  return questions.filter((q) => q.kind !== 'absent');
}

/** Ranks questions of the split (by default every answerable one) with BM25 and each engram mode. */
export async function rankAll(
  split: LoadedSplit,
  questions: readonly Question[] = answerable(split.dataset.questions),
): Promise<RankTable> {
  const table: RankTable = { 'bm25-baseline': [], keyword: [], vector: [], hybrid: [] };
  const baselines = new Map(split.dataset.users.map((u) => [u.userId, new Bm25(u.sessions.flatMap((s) => s.turns))]));
  for (const question of questions) {
    const evidenceTurns = new Set(question.evidence);
    table['bm25-baseline'].push(firstHit(baselines.get(question.userId)!.search(question.text, 10), evidenceTurns));
    const evidence = new Set(question.evidence.map((t) => split.memoryOf.get(t)!));
    for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
      table[mode].push(firstHit(await engramRanking(split, question, mode), evidence));
    }
  }
  return table;
}

/** Scores a threshold would see: of the first evidence hit in the top `k` (answerable questions), and of the top hit (never-told facts). */
export interface ThresholdSample {
  /** Score of each answerable question's first evidence hit within the top k (found ones only). */
  evidence: number[];
  /** How many answerable questions there were. */
  answerable: number;
  /** Score of the top hit of each question about a fact never told (0 when nothing came back). */
  absent: number[];
}

/** Collects {@link ThresholdSample} for one mode. */
export async function thresholdSample(split: LoadedSplit, mode: SearchMode, k = 5): Promise<ThresholdSample> {
  const sample: ThresholdSample = { evidence: [], answerable: 0, absent: [] };
  for (const question of split.dataset.questions) {
    const { results } = await split.engram.search(question.text, { userId: question.userId, mode, limit: k });
    if (question.kind === 'absent') {
      sample.absent.push(results[0]?.score ?? 0);
      continue;
    }
    sample.answerable += 1;
    const evidence = new Set(question.evidence.map((t) => split.memoryOf.get(t)!));
    const hit = results.find((r) => evidence.has(r.id));
    if (hit !== undefined) sample.evidence.push(hit.score);
  }
  return sample;
}
