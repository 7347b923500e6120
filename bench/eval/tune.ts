/**
 * `npx tsx bench/eval/tune.ts`: the measurements behind the constants of
 * lib/search/fusion.ts (KEYWORD_WEIGHT) and the default relevance threshold of
 * PersistentMemory, on the TUNING split only (the held-out split is never
 * looked at here). Per question it reads engram's vector similarities (every
 * memory of the user) and keyword hits once, then ranks them with each fusion
 * candidate: noisy-OR over several keyword weights (what lib/search/fusion.ts
 * does), a score-normalised weighted sum, and weighted reciprocal rank fusion.
 * Then, for the chosen fusion, how a relevance threshold trades answers kept
 * against memories returned for facts the user never told.
 */
import { fuse, hybridRelevance, KEYWORD_WEIGHT } from '../../lib/search/fusion.js';
import { printTable, writeResult, type Row } from '../util/report.js';
import { generateDataset, type Question } from './dataset.js';
import { answerable, loadSplit, type LoadedSplit } from './harness.js';
import { firstHit, scoresOf } from './metrics.js';

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

const dataset = generateDataset('tuning');
const split = await loadSplit(dataset);
const sides: Sides[] = [];
for (const q of answerable(dataset.questions)) sides.push(await sidesOf(split, q));

const candidates: [string, Fusion][] = [
  ['vector only', (s) => s.vector.map((h) => h.id)],
  ['keyword only', (s) => s.keyword.map((h) => h.id)],
  ...[0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1].map((w): [string, Fusion] => [`noisy-OR, keyword weight ${w}`, noisyOr(w)]),
  ...[0.1, 0.2, 0.3, 0.5].map((w): [string, Fusion] => [`weighted sum, keyword weight ${w}`, weightedSum(w)]),
  ...[
    [1, 60],
    [0.5, 60],
    [0.5, 5],
    [0.3, 5],
  ].map(([w, k]): [string, Fusion] => [`RRF k=${k}, keyword weight ${w}`, rrf(w!, k!)]),
];
const fusionRows: Row[] = candidates.map(([name, f]) => {
  const s = scoresOf(sides.map((x) => firstHit(f(x).slice(0, 10), x.evidence)));
  return { fusion: name, 'recall@5': s.recallAt5.toFixed(3), 'recall@10': s.recallAt10.toFixed(3), MRR: s.mrr.toFixed(3) };
});
printTable(`fusion candidates (tuning split, ${sides.length} questions)`, fusionRows);

// Threshold: relevance of the first evidence hit in the top 5 (answerable questions)
// against the top relevance returned for facts never told (absent questions).
const absent = dataset.questions.filter((q) => q.kind === 'absent');
const top5 = (s: Sides): { id: string; relevance: number }[] => {
  const sim = new Map(s.vector.map((h) => [h.id, h.score]));
  const kw = new Map(s.keyword.map((h) => [h.id, h.relevance]));
  return noisyOr(KEYWORD_WEIGHT)(s)
    .slice(0, 5)
    .map((id) => ({ id, relevance: hybridRelevance(sim.get(id), kw.get(id)) }));
};
const evidenceScores = sides.flatMap((s) => top5(s).filter((h) => s.evidence.has(h.id)).slice(0, 1).map((h) => h.relevance));
const absentTop: number[] = [];
for (const q of absent) absentTop.push(top5(await sidesOf(split, q))[0]?.relevance ?? 0);
const thresholdRows: Row[] = [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6].map((t) => ({
  threshold: t,
  'answers kept (evidence in top 5 at or above)': `${evidenceScores.filter((v) => v >= t).length} / ${evidenceScores.length}`,
  'share kept': (evidenceScores.filter((v) => v >= t).length / Math.max(1, evidenceScores.length)).toFixed(3),
  'never-told questions still answered': `${absentTop.filter((v) => v >= t).length} / ${absentTop.length}`,
}));
printTable(`relevance threshold, hybrid (keyword weight ${KEYWORD_WEIGHT}; tuning split)`, thresholdRows);
await split.engram.close();
writeResult('eval-tuning', { fusion: fusionRows, threshold: thresholdRows, keywordWeight: KEYWORD_WEIGHT });
