/**
 * `npx tsx bench/eval/tune.ts`: the measurements behind the constants of
 * lib/search/fusion.ts (KEYWORD_WEIGHT) and the default relevance threshold of
 * PersistentMemory, on the TUNING splits only of both generated benchmarks
 * (paraphrase: keyword search weak; conversation: keyword search strong). The
 * held-out splits are never looked at here. Per question it reads engram's
 * vector similarities (every memory of the user) and keyword hits once, then
 * ranks them with each fusion candidate: noisy-OR over keyword weights (what
 * lib/search/fusion.ts does), a score-normalised weighted sum, and weighted
 * reciprocal rank fusion. A candidate qualifies when its recall@5 and
 * recall@10 are at least those of vector-only and keyword-only on both splits;
 * of the qualifying noisy-OR weights, the one with the best mean MRR (the
 * middle one on a tie) is the weight to use. Then, for that fusion, how a
 * relevance threshold trades answers kept against memories returned for facts
 * never told.
 */
import { fuse, hybridRelevance, KEYWORD_WEIGHT } from '../../lib/search/fusion.js';
import { printTable, writeResult, type Row } from '../util/report.js';
import { generateConversations } from './conversation-dataset.js';
import { generateDataset, type EvalDataset, type EvalSet, type Question } from './dataset.js';
import { answerable, loadSplit, type LoadedSplit } from './harness.js';
import { firstHit, scoresOf, type Scores } from './metrics.js';

interface Sides {
  question: Question;
  evidence: Set<string>;
  /** Similarity of every memory of the user, best first. */
  vector: { id: string; score: number }[];
  /** Keyword hits, best first, with BM25 score and relevance. */
  keyword: { id: string; score: number; relevance: number }[];
}

const POOL = 40;

async function sidesOf(split: LoadedSplit, question: Question): Promise<Sides> {
  const scope = { userId: question.userId };
  const vector = (await split.engram.search(question.text, { ...scope, mode: 'vector', limit: 1000 })).results.map((r) => ({ id: r.id, score: r.similarity ?? r.score }));
  const keyword = (await split.engram.search(question.text, { ...scope, mode: 'keyword', limit: POOL })).results.map((r) => ({ id: r.id, score: r.keywordScore ?? 0, relevance: r.keywordRelevance ?? r.score }));
  return { question, evidence: new Set(question.evidence.map((t) => split.memoryOf.get(t)!)), vector, keyword };
}

type Fusion = (s: Sides) => string[];

/** What lib/search/fusion.ts does, with another keyword weight. */
const noisyOr =
  (weight: number): Fusion =>
  (s) => {
    const similarityOf = new Map(s.vector.map((h) => [h.id, h.score]));
    return fuse(s.vector.slice(0, POOL), s.keyword, { weight, similarityOf }).map((h) => h.id);
  };

/** (1 − w) × similarity + w × keyword relevance. */
const weightedSum =
  (weight: number): Fusion =>
  (s) => {
    const kw = new Map(s.keyword.map((h) => [h.id, h.relevance]));
    const ids = new Set([...s.vector.slice(0, POOL).map((h) => h.id), ...kw.keys()]);
    const sim = new Map(s.vector.map((h) => [h.id, h.score]));
    return [...ids].map((id) => ({ id, v: (1 - weight) * Math.max(0, sim.get(id) ?? 0) + weight * (kw.get(id) ?? 0) })).sort((a, b) => b.v - a.v).map((h) => h.id);
  };

/** Σ w_list / (k + rank). */
const rrf =
  (keywordWeight: number, k: number): Fusion =>
  (s) => {
    const score = new Map<string, number>();
    s.vector.slice(0, POOL).forEach((h, i) => score.set(h.id, (score.get(h.id) ?? 0) + 1 / (k + i + 1)));
    s.keyword.forEach((h, i) => score.set(h.id, (score.get(h.id) ?? 0) + keywordWeight / (k + i + 1)));
    return [...score].sort((a, b) => b[1] - a[1]).map(([id]) => id);
  };

const SETS: [EvalSet, () => EvalDataset][] = [
  ['paraphrase', () => generateDataset('tuning')],
  ['conversation', () => generateConversations('tuning')],
];
const WEIGHTS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1];

/** Every question's sides, of the answerable and of the never-told questions, per set. */
const measured: { set: EvalSet; sides: Sides[]; absent: Sides[] }[] = [];
for (const [set, generate] of SETS) {
  const dataset = generate();
  const split = await loadSplit(dataset);
  const sides: Sides[] = [];
  for (const q of answerable(dataset.questions)) sides.push(await sidesOf(split, q));
  const absent: Sides[] = [];
  for (const q of dataset.questions.filter((x) => x.kind === 'absent')) absent.push(await sidesOf(split, q));
  measured.push({ set, sides, absent });
  await split.engram.close();
}

const candidates: [string, Fusion][] = [
  ['vector only', (s) => s.vector.map((h) => h.id)],
  ['keyword only', (s) => s.keyword.map((h) => h.id)],
  ...WEIGHTS.map((w): [string, Fusion] => [`noisy-OR, keyword weight ${w}`, noisyOr(w)]),
  ...[0.1, 0.15, 0.2, 0.25, 0.3, 0.5].map((w): [string, Fusion] => [`weighted sum, keyword weight ${w}`, weightedSum(w)]),
  ...[
    [1, 60],
    [0.5, 60],
    [0.3, 30],
    [1, 5],
    [0.5, 5],
    [0.3, 5],
  ].map(([w, k]): [string, Fusion] => [`RRF k=${k}, keyword weight ${w}`, rrf(w!, k!)]),
];
const scoresBy = (f: Fusion): Scores[] => measured.map(({ sides }) => scoresOf(sides.map((x) => firstHit(f(x).slice(0, 10), x.evidence))));
const inputs = { vector: scoresBy(candidates[0]![1]), keyword: scoresBy(candidates[1]![1]) };
/** The least, over both sets and both k, of the candidate's recall minus the better input's. */
const margin = (scores: Scores[]): number =>
  Math.min(
    ...scores.flatMap((s, i) => [
      s.recallAt5 - Math.max(inputs.vector[i]!.recallAt5, inputs.keyword[i]!.recallAt5),
      s.recallAt10 - Math.max(inputs.vector[i]!.recallAt10, inputs.keyword[i]!.recallAt10),
    ]),
  );
const fusionRows: Row[] = candidates.map(([name, f]) => {
  const scores = scoresBy(f);
  const row: Row = { fusion: name };
  measured.forEach(({ set }, i) => {
    const s = scores[i]!;
    row[`${set} r@5`] = s.recallAt5.toFixed(3);
    row[`${set} r@10`] = s.recallAt10.toFixed(3);
    row[`${set} MRR`] = s.mrr.toFixed(3);
  });
  row['margin over best input'] = margin(scores).toFixed(3);
  return row;
});
printTable(`fusion candidates (tuning splits: ${measured.map((m) => `${m.set} ${m.sides.length} questions`).join(', ')})`, fusionRows);

// The rule: noisy-OR weights that are never below the better input; the best mean MRR; the middle one on a tie.
const qualifying = WEIGHTS.map((w) => ({ w, scores: scoresBy(noisyOr(w)) }))
  .filter((c) => margin(c.scores) >= 0)
  .map((c) => ({ w: c.w, mrr: c.scores.reduce((sum, s) => sum + s.mrr, 0) / c.scores.length }));
const bestMrr = Math.max(...qualifying.map((c) => c.mrr));
// Mean MRRs within 0.001 of the best are a tie (less than a tenth of one question on either split).
const best = qualifying.filter((c) => c.mrr >= bestMrr - 0.001);
const chosen = best[Math.floor((best.length - 1) / 2)]?.w;
console.log(`noisy-OR weights never below the better input on both tuning splits: ${qualifying.map((c) => `${c.w} (mean MRR ${c.mrr.toFixed(4)})`).join(', ') || 'none'}`);
console.log(`chosen by the rule: ${chosen ?? 'none'}; lib/search/fusion.ts uses ${KEYWORD_WEIGHT}`);

// Threshold: relevance of the first evidence hit in the top 5 (answerable questions)
// against the top relevance returned for facts never told (absent questions).
const top5 = (s: Sides): { id: string; relevance: number }[] => {
  const sim = new Map(s.vector.map((h) => [h.id, h.score]));
  const kw = new Map(s.keyword.map((h) => [h.id, h.relevance]));
  return noisyOr(KEYWORD_WEIGHT)(s)
    .slice(0, 5)
    .map((id) => ({ id, relevance: hybridRelevance(sim.get(id), kw.get(id)) }));
};
const thresholdRows: Row[] = [];
for (const { set, sides, absent } of [...measured, { set: 'both' as const, sides: measured.flatMap((m) => m.sides), absent: measured.flatMap((m) => m.absent) }]) {
  const evidenceScores = sides.flatMap((s) => top5(s).filter((h) => s.evidence.has(h.id)).slice(0, 1).map((h) => h.relevance));
  const absentTop = absent.map((s) => top5(s)[0]?.relevance ?? 0);
  for (const t of [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7]) {
    thresholdRows.push({
      set,
      threshold: t,
      'answers kept (evidence in top 5 at or above)': `${evidenceScores.filter((v) => v >= t).length} / ${evidenceScores.length}`,
      'share kept': (evidenceScores.filter((v) => v >= t).length / Math.max(1, evidenceScores.length)).toFixed(3),
      'never-told questions still answered': `${absentTop.filter((v) => v >= t).length} / ${absentTop.length}`,
    });
  }
}
printTable(`relevance threshold, hybrid (noisy-OR, keyword weight ${KEYWORD_WEIGHT}; tuning splits)`, thresholdRows);
writeResult('eval-tuning', { fusion: fusionRows, qualifyingWeights: qualifying, chosenWeight: chosen ?? null, threshold: thresholdRows, keywordWeight: KEYWORD_WEIGHT });
