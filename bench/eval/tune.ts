/**
 * `npx tsx bench/eval/tune.ts [--locomo DIR] [--model glove|e5-small|bge-small|minilm|all]`: the
 * measurements behind lib/search/retrieval-profile.ts, per embedding model,
 * on the TUNING halves only: LoCoMo conversations 26, 30, 41, 42, 43 (real,
 * when --locomo gives the data; categories 1–4 as in bench/eval/run.ts) and
 * the generated `paraphrase` and `conversation` tuning splits. The held-out
 * halves are never read here.
 *
 * Per question it reads, once: the cosine similarity of every memory of the
 * scope with the query embedded in each form (content words, the question),
 * from the same embedder instance engram stored the memories with, and
 * engram's keyword hits. Then, exactly as lib/engine/memories/memory-search.ts ranks
 * (40 best of each side, lib/search/fusion.ts `fuse`), each candidate:
 *
 * 1. vector mode's query form: the one with the best mean recall (@5 and @10) over the sets;
 * 2. hybrid: query form × vector weight × keyword weight of the noisy-OR. The
 *    shortfall of a candidate is the sum, over sets and k, of what its recall
 *    lacks to the better of keyword mode and vector mode (share of questions; 0
 *    where it is at or above); the least shortfall wins, then the best mean
 *    recall, then the best mean MRR.
 *    Printed beside it for comparison: the chosen noisy-OR with 100 of each side instead of 40,
 *    weighted reciprocal rank fusion (40 and 100 deep), a convex combination of the keyword
 *    relevance and the similarity rescaled above a floor, and the ceiling of any fusion that
 *    only reorders the two sides' best (evidence in either side's top k);
 * 3. the default threshold: the highest relevance (steps of 0.05) that keeps at
 *    least 95% of the answers hybrid finds in the top 5 on every set (a recall
 *    threshold should seldom drop an answer search found; with 90% the offline
 *    model's threshold cut the demo's "What do I like?" from "I love jazz and cycling").
 */
import 'fake-indexeddb/auto'; // before Dexie is imported: it takes IndexedDB from the global at load
import type { Embedder } from '../../lib/index.js';
import { ENGLISH_ANALYZER } from '../../lib/search/analyze.js';
import { fuse } from '../../lib/search/fusion.js';
import { retrievalProfile, textToEmbed, type QueryForm } from '../../lib/search/retrieval-profile.js';
import { option } from '../util/args.js';
import { printTable, writeResult, type Row } from '../util/report.js';
import { generateConversations } from './conversation-dataset.js';
import { generateDataset, type EvalDataset } from './dataset.js';
import { answerable, loadSplit } from './harness.js';
import { countedQuestions, loadLocomo, locomoDir, LOCOMO_HELP } from './locomo.js';
import { firstHit, scoresOf, type Scores } from './metrics.js';
import { evalModels } from './models.js';

/** The best of each side that hybrid fuses (lib/engine/memories/memory-search.ts: max(limit × 4, 40) at limit 10). */
const POOL = 40;
/** A deeper candidate list of each side, measured against POOL (it would cost memory-search more rows and postings). */
const DEEP = 100;
const FORMS: readonly QueryForm[] = ['content-words', 'question'];
const VECTOR_WEIGHTS = [0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
const KEYWORD_WEIGHTS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
// Up to 0.95: a model whose cosines sit high for any text (e5: about 0.7 for unrelated sentences) needs a high one.
const THRESHOLDS = Array.from({ length: 19 }, (_, i) => Number((0.05 * (i + 1)).toFixed(2)));

interface Sides {
  evidence: Set<string>;
  /** Similarity of every memory of the scope, best first, per query form. */
  vector: Record<QueryForm, { id: string; score: number }[]>;
  /** Engram's keyword hits, best first. */
  keyword: { id: string; score: number; relevance: number }[];
}

/** An embedder that remembers the vector of every text it embedded (engram's memories). */
function recording(inner: Embedder): Embedder & { seen: Map<string, Float32Array> } {
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

async function measure(
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
    const { results } = await split.engram.search(q.text, { userId: q.userId, mode: 'keyword', limit: DEEP });
    sides.push({
      evidence: new Set(q.evidence.map((t) => split.memoryOf.get(t)!)),
      vector: { 'content-words': ranked('content-words'), question: ranked('question') },
      keyword: results.map((r) => ({ id: r.id, score: r.keywordScore ?? 0, relevance: r.keywordRelevance ?? r.score })),
    });
  }
  await split.engram.close();
  return sides;
}

type Ranking = (s: Sides) => string[];
const noisyOr =
  (form: QueryForm, vector: number, keyword: number, pool = POOL): Ranking =>
  (s) =>
    fuse(s.vector[form].slice(0, pool), s.keyword.slice(0, pool), {
      weights: { vector, keyword },
      similarityOf: new Map(s.vector[form].map((h) => [h.id, h.score])),
    }).map((h) => h.id);
const byScore = (score: Map<string, number>): string[] =>
  [...score].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([id]) => id);
const rrf =
  (form: QueryForm, keywordWeight: number, k: number, pool = POOL): Ranking =>
  (s) => {
    const score = new Map<string, number>();
    s.vector[form].slice(0, pool).forEach((h, i) => score.set(h.id, (score.get(h.id) ?? 0) + 1 / (k + i + 1)));
    s.keyword.slice(0, pool).forEach((h, i) => score.set(h.id, (score.get(h.id) ?? 0) + keywordWeight / (k + i + 1)));
    return byScore(score);
  };
/**
 * A convex combination α × s' + (1 − α) × keyword relevance, with the similarity rescaled above a
 * floor the model's cosines sit at for unrelated text, s' = clamp((s − floor) / (1 − floor)).
 */
const convex =
  (form: QueryForm, alpha: number, floor: number): Ranking =>
  (s) => {
    const similarity = new Map(s.vector[form].map((h) => [h.id, h.score]));
    const score = new Map<string, number>();
    const rescaled = (x: number): number => Math.min(1, Math.max(0, (x - floor) / (1 - floor)));
    for (const h of s.vector[form].slice(0, POOL)) score.set(h.id, alpha * rescaled(h.score));
    for (const h of s.keyword.slice(0, POOL))
      score.set(h.id, alpha * rescaled(similarity.get(h.id) ?? 0) + (1 - alpha) * h.relevance);
    return byScore(score);
  };
/**
 * Not a ranking: the share of questions with evidence in keyword's top k or vector's top k (up to 2k
 * results), k = 5 and 10: what a fusion that only reorders the two sides' best would find at most with twice the room.
 */
const unionOfTops = (sides: readonly Sides[], form: QueryForm): Scores => {
  const within = (k: number): number =>
    sides.filter((s) => [...s.vector[form].slice(0, k), ...s.keyword.slice(0, k)].some((h) => s.evidence.has(h.id)))
      .length / Math.max(1, sides.length);
  return { recallAt5: within(5), recallAt10: within(10), mrr: Number.NaN, questions: sides.length };
};

const fixed = (v: number): string => v.toFixed(3);
const dir = locomoDir(option('locomo'));
if (dir === undefined) console.log(`No LoCoMo data: tuning on the generated sets only.\n${LOCOMO_HELP}`);
const sets: [string, () => EvalDataset][] = [
  ...(dir === undefined ? [] : [['locomo', () => loadLocomo(dir, 'tuning').dataset] as [string, () => EvalDataset]]),
  ['paraphrase', () => generateDataset('tuning')],
  ['conversation', () => generateConversations('tuning')],
];

const chosen: Record<string, unknown> = {};
const tables: Record<string, Row[]> = {};
for (const model of evalModels(option('model'))) {
  const inner = await model.create();
  const embedder = recording(inner);
  const measured: { set: string; sides: Sides[] }[] = [];
  for (const [set, make] of sets) measured.push({ set, sides: await measure(make(), embedder) });
  await inner.dispose();
  const scoresBy = (f: Ranking): Scores[] =>
    measured.map(({ sides }) => scoresOf(sides.map((x) => firstHit(f(x).slice(0, 10), x.evidence))));
  const meanRecall = (scores: Scores[]): number =>
    scores.reduce((sum, s) => sum + s.recallAt5 + s.recallAt10, 0) / (2 * scores.length);
  const meanMrr = (scores: Scores[]): number => scores.reduce((sum, s) => sum + s.mrr, 0) / scores.length;

  // 1. vector mode's query form.
  const vectorScores = Object.fromEntries(
    FORMS.map((form) => [form, scoresBy((s) => s.vector[form].map((h) => h.id))]),
  ) as Record<QueryForm, Scores[]>;
  const vectorForm = FORMS.reduce((best, form) =>
    meanRecall(vectorScores[form]) > meanRecall(vectorScores[best]) ? form : best,
  );
  const keywordScores = scoresBy((s) => s.keyword.map((h) => h.id));
  const shortfall = (scores: Scores[]): number =>
    scores.reduce(
      (sum, s, i) =>
        sum +
        Math.max(0, Math.max(keywordScores[i]!.recallAt5, vectorScores[vectorForm][i]!.recallAt5) - s.recallAt5) +
        Math.max(0, Math.max(keywordScores[i]!.recallAt10, vectorScores[vectorForm][i]!.recallAt10) - s.recallAt10),
      0,
    );

  // 2. hybrid.
  const candidates = FORMS.flatMap((form) =>
    VECTOR_WEIGHTS.flatMap((v) => KEYWORD_WEIGHTS.map((k) => ({ form, v, k, scores: scoresBy(noisyOr(form, v, k)) }))),
  );
  candidates.sort(
    (a, b) =>
      shortfall(a.scores) - shortfall(b.scores) ||
      meanRecall(b.scores) - meanRecall(a.scores) ||
      meanMrr(b.scores) - meanMrr(a.scores),
  );
  const best = candidates[0]!;
  const rrfs = FORMS.flatMap((form) =>
    [0.3, 0.5, 0.7, 1, 1.5, 2, 3].flatMap((w) =>
      [1, 2, 5, 20, 60].map((k) => ({
        name: `RRF ${form}, keyword ${w}:1, k=${k}`,
        scores: scoresBy(rrf(form, w, k)),
        deep: () => scoresBy(rrf(form, w, k, DEEP)),
      })),
    ),
  );
  const byRule = (a: { scores: Scores[] }, b: { scores: Scores[] }): number =>
    shortfall(a.scores) - shortfall(b.scores) || meanRecall(b.scores) - meanRecall(a.scores);
  rrfs.sort(byRule);
  const convexes = FORMS.flatMap((form) =>
    [0, 0.5, 0.7, 0.8].flatMap((floor) =>
      [0.3, 0.5, 0.7, 0.8, 0.9].map((alpha) => ({
        name: `convex ${form}, α=${alpha}, similarity floor ${floor}`,
        scores: scoresBy(convex(form, alpha, floor)),
      })),
    ),
  );
  convexes.sort(byRule);
  const current = retrievalProfile(model.id);
  const rows: [string, Scores[]][] = [
    ['keyword', keywordScores],
    ...FORMS.map((form): [string, Scores[]] => [
      `vector, ${form}${form === vectorForm ? ' (chosen)' : ''}`,
      vectorScores[form],
    ]),
    [`hybrid noisy-OR ${best.form}, v=${best.v} k=${best.k} (chosen)`, best.scores],
    ...candidates
      .slice(1, 4)
      .map((c): [string, Scores[]] => [`hybrid noisy-OR ${c.form}, v=${c.v} k=${c.k}`, c.scores]),
    [
      `hybrid noisy-OR ${current.hybridQuery}, v=${current.vectorWeight} k=${current.keywordWeight} (lib today)`,
      scoresBy(noisyOr(current.hybridQuery, current.vectorWeight, current.keywordWeight)),
    ],
    [
      `hybrid noisy-OR ${best.form}, v=${best.v} k=${best.k}, ${DEEP} of each side`,
      scoresBy(noisyOr(best.form, best.v, best.k, DEEP)),
    ],
    ...rrfs.slice(0, 3).map((r): [string, Scores[]] => [`hybrid ${r.name}`, r.scores]),
    [`hybrid ${rrfs[0]!.name}, ${DEEP} of each side`, rrfs[0]!.deep()],
    ...convexes.slice(0, 2).map((r): [string, Scores[]] => [`hybrid ${r.name}`, r.scores]),
    [
      `ceiling: keyword top k ∪ vector top k, ${best.form} (up to 2k results)`,
      measured.map(({ sides }) => unionOfTops(sides, best.form)),
    ],
  ];
  const table = rows.map(([method, scores]) => {
    const row: Row = { model: model.name, method };
    measured.forEach(({ set }, i) => {
      row[`${set} r@5`] = fixed(scores[i]!.recallAt5);
      row[`${set} r@10`] = fixed(scores[i]!.recallAt10);
      row[`${set} MRR`] = fixed(scores[i]!.mrr);
    });
    row['shortfall'] = method.startsWith('hybrid') ? fixed(shortfall(scores)) : '';
    if (method.startsWith('ceiling')) for (const { set } of measured) row[`${set} MRR`] = '';
    return row;
  });
  tables[model.name] = table;
  printTable(
    `${model.name}: tuning halves (${measured.map((m) => `${m.set} ${m.sides.length} questions`).join(', ')})`,
    table,
  );

  // 3. the threshold for the chosen fusion.
  const weights = { vector: best.v, keyword: best.k };
  const keptShare = (t: number): number[] =>
    measured.map(({ sides }) => {
      const found = sides
        .map((s) =>
          fuse(s.vector[best.form].slice(0, POOL), s.keyword, {
            weights,
            similarityOf: new Map(s.vector[best.form].map((h) => [h.id, h.score])),
          })
            .slice(0, 5)
            .find((h) => s.evidence.has(h.id)),
        )
        .filter((h) => h !== undefined);
      return found.filter((h) => h.relevance >= t).length / Math.max(1, found.length);
    });
  const thresholdRows = THRESHOLDS.map((t): Row => ({
    model: model.name,
    threshold: t,
    ...Object.fromEntries(measured.map(({ set }, i) => [`${set}: answers in top 5 kept`, fixed(keptShare(t)[i]!)])),
  }));
  printTable(`${model.name}: relevance threshold for hybrid (${best.form}, v=${best.v}, k=${best.k})`, thresholdRows);
  const minRelevance = [...THRESHOLDS].reverse().find((t) => keptShare(t).every((share) => share >= 0.95)) ?? 0;
  chosen[model.name] = {
    id: model.id,
    vectorQuery: vectorForm,
    hybridQuery: best.form,
    vectorWeight: best.v,
    keywordWeight: best.k,
    minRelevance,
    libToday: current,
  };
  console.log(`${model.name} (${model.id}): chosen ${JSON.stringify(chosen[model.name])}`);
}
writeResult('eval-tuning', { sets: sets.map(([s]) => s), chosen, tables });
