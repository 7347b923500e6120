/**
 * `npx tsx bench/eval/tune.ts [--locomo DIR] [--model glove|e5-small|bge-small|minilm|all] [--sides DIR]`:
 * the measurements behind lib/search/retrieval-profile.ts, per embedding model, on the TUNING
 * halves only: LoCoMo conversations 26, 30, 41, 42, 43 (real, when --locomo gives the data;
 * categories 1–4 as in bench/eval/run.ts) and the generated `paraphrase` and `conversation` tuning
 * splits. The held-out halves are never read here. Each question's two sides are measured once
 * (bench/eval/tune-sides.ts; `--sides DIR` keeps them outside the repository for another run).
 *
 * Every candidate is ranked by lib/search/fusion.ts `fuse`, the code path search uses: the best 40
 * of each side (lib/engine/memories/memory-search.ts at limit 10), each side scaled (`absolute` or
 * `per-query`), then the weighted noisy-OR.
 *
 * 1. vector mode's query form: the one with the best mean recall (@5 and @10) over the sets;
 * 2. hybrid: scale × query form × vector weight × keyword weight. The shortfall of a candidate is
 *    the sum, over sets and k, of what its recall lacks to the better of keyword mode and vector
 *    mode (share of questions; 0 where it is at or above); the least shortfall wins, then the best
 *    mean recall, then the best mean MRR. The scale is chosen by leave-one-conversation-out
 *    cross-validation on LoCoMo's tuning conversations: for each one left out, the rule picks a
 *    point on the four others (and the generated sets) and is scored on the one left out; the
 *    scale whose picks lose least to the better input out of fold (then recall most) wins, and the
 *    rule then picks its point on all five. A scale that only fits the conversations it was chosen
 *    on loses there (the noisy-OR of raw scores did for MiniLM: ahead on the tuning half, behind
 *    keyword on the held-out one);
 *    2b. where the scale is `per-query`, a vector gate (lib/search/fusion.ts `VectorGate`: the vector
 *    side is worth less when the query's best similarity hardly stands out from its pool): each gate
 *    of a grid on the chosen fusion (and on the library's, when they differ) that keeps the library's
 *    recall threshold (95% of the answers found in the top 5 kept on every set), the least loss to
 *    the ungated fusion (per set and k) then the best mean recall wins; kept only when
 *    leave-one-conversation-out puts the gate's picks ahead of no gate;
 * 3. the default threshold: the highest relevance (steps of 0.05) that keeps at least 95% of the
 *    answers hybrid finds in the top 5 on every set (a recall threshold should seldom drop an
 *    answer search found; with 90% the offline model's threshold cut the demo's "What do I like?"
 *    from "I love jazz and cycling");
 * 4. where the chosen scale is `per-query`, the cosine cut of the evidence rule (hasEvidence,
 *    lib/search/retrieval-profile.ts: a keyword match or a cosine at minSimilarity): the highest
 *    cut (steps of 0.05, and the profile's own) that, with the threshold, still keeps at least 95%
 *    of those answers on every set. Its other purpose, recalling nothing for a question never
 *    told, has no labelled set here: the cut only must not cost recall.
 */
import 'fake-indexeddb/auto'; // before Dexie is imported: it takes IndexedDB from the global at load
import { fuse, type FusionScale, type FusionWeights, type VectorGate } from '../../lib/search/fusion.js';
import { hasEvidence, retrievalProfile, type QueryForm } from '../../lib/search/retrieval-profile.js';
import { option } from '../util/args.js';
import { printTable, writeResult, type Row } from '../util/report.js';
import { generateConversations } from './conversation-dataset.js';
import { generateDataset, type EvalDataset } from './dataset.js';
import { loadLocomo, locomoDir, LOCOMO_HELP } from './locomo.js';
import { firstHit, scoresOf, type Scores } from './metrics.js';
import { evalModels } from './models.js';
import { FORMS, recording, sidesOf, type Sides } from './tune-sides.js';

/** The best of each side that hybrid fuses (lib/engine/memories/memory-search.ts: max(limit × 4, 40) at limit 10). */
const POOL = 40;
const SCALES: readonly FusionScale[] = ['absolute', 'per-query'];
const VECTOR_WEIGHTS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
const KEYWORD_WEIGHTS = [0.2, 0.4, 0.6, 0.8, 1];
// Up to 0.95: a model whose cosines sit high for any text (e5: about 0.7 for unrelated sentences) needs a high one.
const THRESHOLDS = Array.from({ length: 19 }, (_, i) => Number((0.05 * (i + 1)).toFixed(2)));

// The vector gate's grid (step 2b): the pool depth its margin is taken at, the margin, the weight below it.
const GATES: readonly VectorGate[] = [2, 5, 10, 20, 40].flatMap((depth) =>
  [0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2].flatMap((margin) =>
    [0, 0.2, 0.4, 0.6].map((weight) => ({ depth, margin, weight })),
  ),
);

interface Candidate {
  scale: FusionScale;
  form: QueryForm;
  v: number;
  k: number;
  gate?: VectorGate;
}
const weightsOf = (c: Candidate): FusionWeights => ({
  vector: c.v,
  keyword: c.k,
  scale: c.scale,
  ...(c.gate === undefined ? {} : { gate: c.gate }),
});
const nameOf = (c: Candidate): string =>
  `${c.scale}, ${c.form}, v=${c.v} w=${c.k}${c.gate === undefined ? '' : `, gate ${c.gate.depth}/${c.gate.margin}/${c.gate.weight}`}`;

/** The fused order of one question under `c`, as search ranks it. */
const fused = (c: Candidate, s: Sides): ReturnType<typeof fuse> =>
  fuse(s.vector[c.form].slice(0, POOL), s.keyword.slice(0, POOL), {
    weights: weightsOf(c),
    similarityOf: new Map(s.vector[c.form].map((h) => [h.id, h.score])),
  });

/** 1-based rank of the first evidence in the top 10 (99 when none). */
const rankOf = (ids: readonly string[], evidence: ReadonlySet<string>): number =>
  firstHit(ids.slice(0, 10), evidence) ?? 99;

const fixed = (v: number): string => v.toFixed(3);
const dir = locomoDir(option('locomo'));
if (dir === undefined) console.log(`No LoCoMo data: tuning on the generated sets only.\n${LOCOMO_HELP}`);
const sets: [string, () => EvalDataset][] = [
  ...(dir === undefined ? [] : [['locomo', () => loadLocomo(dir, 'tuning').dataset] as [string, () => EvalDataset]]),
  ['paraphrase', () => generateDataset('tuning')],
  ['conversation', () => generateConversations('tuning')],
];
const sidesDir = option('sides');

const chosen: Record<string, unknown> = {};
const tables: Record<string, Row[]> = {};
for (const model of evalModels(option('model'))) {
  let made: ReturnType<typeof recording> | undefined;
  let inner: Awaited<ReturnType<typeof model.create>> | undefined;
  const measured: { set: string; sides: Sides[] }[] = [];
  for (const [set, make] of sets)
    measured.push({
      set,
      sides: await sidesOf(
        sidesDir,
        model.name,
        set,
        make,
        async () => (made ??= recording((inner = await model.create()))),
      ),
    });
  await inner?.dispose();

  /** Questions of each set a score is taken over (all, or LoCoMo without or with only some conversations). */
  type Subset = (set: string, s: Sides) => boolean;
  const every: Subset = () => true;
  /** Ranks of every question of every set under a ranking. */
  const ranksOf = (f: (s: Sides) => readonly string[]): number[][] =>
    measured.map(({ sides }) => sides.map((s) => rankOf(f(s), s.evidence)));
  const scoresIn = (ranks: number[][], subset: Subset): Scores[] =>
    measured.map(({ set, sides }, i) =>
      scoresOf(ranks[i]!.filter((_, q) => subset(set, sides[q]!)).map((r) => (r === 99 ? undefined : r))),
    );
  const meanRecall = (scores: Scores[]): number =>
    scores.reduce((sum, s) => sum + s.recallAt5 + s.recallAt10, 0) / (2 * scores.length);
  const meanMrr = (scores: Scores[]): number => scores.reduce((sum, s) => sum + s.mrr, 0) / scores.length;

  // 1. vector mode's query form.
  const vectorRanks = Object.fromEntries(
    FORMS.map((form) => [form, ranksOf((s) => s.vector[form].map((h) => h.id))]),
  ) as Record<QueryForm, number[][]>;
  const vectorForm = FORMS.reduce((best, form) =>
    meanRecall(scoresIn(vectorRanks[form], every)) > meanRecall(scoresIn(vectorRanks[best], every)) ? form : best,
  );
  const keywordRanks = ranksOf((s) => s.keyword.map((h) => h.id));
  const shortfall = (ranks: number[][], subset: Subset): number => {
    const keyword = scoresIn(keywordRanks, subset);
    const vector = scoresIn(vectorRanks[vectorForm], subset);
    return scoresIn(ranks, subset).reduce(
      (sum, s, i) =>
        sum +
        Math.max(0, Math.max(keyword[i]!.recallAt5, vector[i]!.recallAt5) - s.recallAt5) +
        Math.max(0, Math.max(keyword[i]!.recallAt10, vector[i]!.recallAt10) - s.recallAt10),
      0,
    );
  };

  // 2. hybrid: every candidate ranked once.
  const candidates = SCALES.flatMap((scale) =>
    FORMS.flatMap((form) =>
      VECTOR_WEIGHTS.flatMap((v) => KEYWORD_WEIGHTS.map((k): Candidate => ({ scale, form, v, k }))),
    ),
  ).map((c) => ({ c, ranks: ranksOf((s) => fused(c, s).map((h) => h.id)) }));
  const pick = (among: typeof candidates, subset: Subset): (typeof candidates)[number] =>
    among.reduce((best, x) => {
      const [a, b] = [shortfall(x.ranks, subset), shortfall(best.ranks, subset)];
      if (a !== b) return a < b - 1e-12 ? x : best;
      const [ra, rb] = [meanRecall(scoresIn(x.ranks, subset)), meanRecall(scoresIn(best.ranks, subset))];
      if (ra !== rb) return ra > rb ? x : best;
      return meanMrr(scoresIn(x.ranks, subset)) > meanMrr(scoresIn(best.ranks, subset)) ? x : best;
    });
  // Leave one LoCoMo conversation out: the rule's pick on the rest, scored on the one left out.
  const locomo = measured.find((m) => m.set === 'locomo');
  const conversations = [...new Set(locomo?.sides.map((s) => s.group) ?? [])];
  const crossValidated = SCALES.map((scale) => {
    const among = candidates.filter((x) => x.c.scale === scale);
    const outOfFold = measured.map(({ sides }) => sides.map(() => 99));
    const picks: string[] = [];
    for (const left of conversations) {
      const best = pick(among, (set, s) => set !== 'locomo' || s.group !== left);
      picks.push(nameOf(best.c));
      const at = measured.indexOf(locomo!);
      locomo!.sides.forEach((s, q) => {
        if (s.group === left) outOfFold[at]![q] = best.ranks[at]![q]!;
      });
    }
    const only: Subset = (set) => set === 'locomo';
    const out = scoresIn(outOfFold, only)[measured.indexOf(locomo!)]!;
    return { scale, picks, out, shortfall: shortfall(outOfFold, only) };
  });
  const cvRows = crossValidated.map((x): Row => ({
    model: model.name,
    scale: x.scale,
    'out-of-fold r@5': fixed(x.out.recallAt5),
    'out-of-fold r@10': fixed(x.out.recallAt10),
    'out-of-fold MRR': fixed(x.out.mrr),
    shortfall: fixed(x.shortfall),
    'picks (one per conversation left out)': [...new Set(x.picks)].join('; '),
  }));
  if (locomo !== undefined)
    printTable(`${model.name}: leave-one-conversation-out on LoCoMo's tuning half, per scale`, cvRows);
  const scale =
    locomo === undefined
      ? 'absolute'
      : crossValidated.reduce((b, x) =>
          x.shortfall < b.shortfall - 1e-12 ||
          (Math.abs(x.shortfall - b.shortfall) < 1e-12 &&
            x.out.recallAt5 + x.out.recallAt10 > b.out.recallAt5 + b.out.recallAt10)
            ? x
            : b,
        ).scale;
  const ungated = pick(
    candidates.filter((x) => x.c.scale === scale),
    every,
  );

  // 2b. the vector gate (per-query scale only): each gate on a fusion, picked by its loss to the ungated
  // fusion (per set and k), then mean recall; kept when, left-one-conversation-out, it is ahead. Tried on the
  // chosen fusion and, when it differs, on the library's (the gate is then judged on the weights in use).
  type Ranked = (typeof candidates)[number];
  /** Per set, the share of the answers `c` finds in the top 5 whose relevance reaches `t`. */
  const keptAt = (c: Candidate, t: number): number[] =>
    measured.map(({ sides }) => {
      const found = sides
        .map((s) =>
          fused(c, s)
            .slice(0, 5)
            .find((h) => s.evidence.has(h.id)),
        )
        .filter((h) => h !== undefined);
      return found.filter((h) => h.relevance >= t).length / Math.max(1, found.length);
    });
  const current = retrievalProfile(model.id);
  const gateFor = (plainFusion: Ranked): Ranked => {
    if (plainFusion.c.scale !== 'per-query' || locomo === undefined) return plainFusion;
    // A gate caps the relevance of what only a gated vector side finds: it must not cost the recall
    // threshold (the library's, at least 95% of the answers found in the top 5 kept on every set).
    const gated = [
      plainFusion,
      ...GATES.filter((gate) =>
        keptAt({ ...plainFusion.c, gate }, current.minRelevance).every((share) => share >= 0.95),
      ).map((gate) => {
        const c = { ...plainFusion.c, gate };
        return { c, ranks: ranksOf((s) => fused(c, s).map((h) => h.id)) };
      }),
    ];
    const pickGate = (subset: Subset): Ranked => {
      const base = scoresIn(plainFusion.ranks, subset);
      const loss = (ranks: number[][]): number =>
        scoresIn(ranks, subset).reduce(
          (sum, x, i) =>
            sum + Math.max(0, base[i]!.recallAt5 - x.recallAt5) + Math.max(0, base[i]!.recallAt10 - x.recallAt10),
          0,
        );
      return gated.reduce((b, x) => {
        const [lx, lb] = [loss(x.ranks), loss(b.ranks)];
        if (Math.abs(lx - lb) > 1e-12) return lx < lb ? x : b;
        return meanRecall(scoresIn(x.ranks, subset)) > meanRecall(scoresIn(b.ranks, subset)) + 1e-12 ? x : b;
      });
    };
    const at = measured.indexOf(locomo);
    const outOfFold = measured.map(({ sides }) => sides.map(() => 99));
    const picks: string[] = [];
    for (const left of conversations) {
      const g = pickGate((set, s) => set !== 'locomo' || s.group !== left);
      picks.push(g.c.gate === undefined ? 'none' : `${g.c.gate.depth}/${g.c.gate.margin}/${g.c.gate.weight}`);
      locomo.sides.forEach((s, q) => {
        if (s.group === left) outOfFold[at]![q] = g.ranks[at]![q]!;
      });
    }
    const only: Subset = (set) => set === 'locomo';
    const out = scoresIn(outOfFold, only)[at]!;
    const plain = scoresIn(plainFusion.ranks, only)[at]!;
    const all = pickGate(every);
    const kept = out.recallAt5 + out.recallAt10 > plain.recallAt5 + plain.recallAt10 + 1e-12 ? all : plainFusion;
    const row = (gate: string, x: Scores, picked: string): Row => ({
      model: model.name,
      gate,
      'out-of-fold r@5': fixed(x.recallAt5),
      'out-of-fold r@10': fixed(x.recallAt10),
      'out-of-fold MRR': fixed(x.mrr),
      'picks (depth/margin/weight)': picked,
    });
    printTable(
      `${model.name}: vector gate on ${nameOf(plainFusion.c)}, leave-one-conversation-out on LoCoMo's tuning half; kept: ${nameOf(kept.c)}`,
      [row('none', plain, ''), row('picked per fold', out, picks.join('; '))],
    );
    return kept;
  };
  const best = gateFor(ungated);
  const others = SCALES.filter((s) => s !== scale).map((s) =>
    pick(
      candidates.filter((x) => x.c.scale === s),
      every,
    ),
  );
  const today: Candidate = {
    scale: current.fusionScale,
    form: current.hybridQuery,
    v: current.vectorWeight,
    k: current.keywordWeight,
    ...(current.vectorGate === undefined ? {} : { gate: current.vectorGate }),
  };
  const todayPlain: Candidate = { scale: today.scale, form: today.form, v: today.v, k: today.k };
  const sameFusion = (x: Candidate, y: Candidate): boolean =>
    x.scale === y.scale && x.form === y.form && x.v === y.v && x.k === y.k;
  const todayGated = sameFusion(todayPlain, ungated.c)
    ? undefined
    : gateFor({ c: todayPlain, ranks: ranksOf((s) => fused(todayPlain, s).map((h) => h.id)) });
  const rows: [string, number[][]][] = [
    ['keyword', keywordRanks],
    ...FORMS.map((form): [string, number[][]] => [
      `vector, ${form}${form === vectorForm ? ' (chosen)' : ''}`,
      vectorRanks[form],
    ]),
    [`hybrid ${nameOf(best.c)} (chosen)`, best.ranks],
    ...others.map((o): [string, number[][]] => [`hybrid ${nameOf(o.c)} (best of its scale)`, o.ranks]),
    [`hybrid ${nameOf(today)} (lib today)`, ranksOf((s) => fused(today, s).map((h) => h.id))],
    ...(todayGated === undefined || todayGated.c.gate === undefined
      ? []
      : [[`hybrid ${nameOf(todayGated.c)} (lib's fusion, its gate)`, todayGated.ranks] as [string, number[][]]]),
  ];
  const table = rows.map(([method, ranks]) => {
    const scores = scoresIn(ranks, every);
    const row: Row = { model: model.name, method };
    measured.forEach(({ set }, i) => {
      row[`${set} r@5`] = fixed(scores[i]!.recallAt5);
      row[`${set} r@10`] = fixed(scores[i]!.recallAt10);
      row[`${set} MRR`] = fixed(scores[i]!.mrr);
    });
    row['shortfall'] = method.startsWith('hybrid') ? fixed(shortfall(ranks, every)) : '';
    return row;
  });
  tables[model.name] = [...table, ...cvRows];
  printTable(
    `${model.name}: tuning halves (${measured.map((m) => `${m.set} ${m.sides.length} questions`).join(', ')})`,
    table,
  );

  // 3. the threshold for the chosen fusion.
  const keptShare = (t: number): number[] => keptAt(best.c, t);
  const thresholdRows = THRESHOLDS.map((t): Row => ({
    model: model.name,
    threshold: t,
    ...Object.fromEntries(measured.map(({ set }, i) => [`${set}: answers in top 5 kept`, fixed(keptShare(t)[i]!)])),
  }));
  printTable(`${model.name}: relevance threshold for hybrid (${nameOf(best.c)})`, thresholdRows);
  const minRelevance = [...THRESHOLDS].reverse().find((t) => keptShare(t).every((share) => share >= 0.95)) ?? 0;

  // 4. the evidence rule's cosine cut, where the fusion is per query.
  let minSimilarity: number | undefined;
  if (best.c.scale === 'per-query') {
    const cuts = [...new Set([...THRESHOLDS, current.minSimilarity])].sort((a, b) => a - b);
    const keptWith = (cut: number): number[] =>
      measured.map(({ sides }) => {
        const found = sides
          .map((s) =>
            fused(best.c, s)
              .slice(0, 5)
              .find((h) => s.evidence.has(h.id)),
          )
          .filter((h) => h !== undefined);
        const profile = { ...current, fusionScale: best.c.scale, minSimilarity: cut };
        const kept = found.filter((h) => h.relevance >= minRelevance && hasEvidence(h, profile));
        return kept.length / Math.max(1, found.length);
      });
    printTable(
      `${model.name}: evidence cosine cut for hybrid (${nameOf(best.c)}, threshold ${minRelevance})`,
      cuts.map((cut): Row => ({
        model: model.name,
        'cosine cut': fixed(cut),
        ...Object.fromEntries(
          measured.map(({ set }, i) => [`${set}: answers in top 5 kept`, fixed(keptWith(cut)[i]!)]),
        ),
      })),
    );
    minSimilarity = [...cuts].reverse().find((cut) => keptWith(cut).every((share) => share >= 0.95));
  }
  chosen[model.name] = {
    id: model.id,
    vectorQuery: vectorForm,
    hybridQuery: best.c.form,
    vectorWeight: best.c.v,
    keywordWeight: best.c.k,
    fusionScale: best.c.scale,
    ...(best.c.gate === undefined ? {} : { vectorGate: best.c.gate }),
    minRelevance,
    ...(minSimilarity === undefined ? {} : { minSimilarity }),
    libToday: current,
  };
  console.log(`${model.name} (${model.id}): chosen ${JSON.stringify(chosen[model.name])}`);
}
writeResult('eval-tuning', { sets: sets.map(([s]) => s), chosen, tables });
