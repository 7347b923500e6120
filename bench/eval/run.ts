/**
 * `npm run eval`: retrieval quality on long multi-session conversations, per
 * embedding model. Three sets, each with a tuning and a held-out half:
 *
 * - `locomo`: LoCoMo's real conversations (bench/eval/locomo.ts; read from
 *   `--locomo DIR` or LOCOMO, never bundled: how to get it is printed when absent);
 * - `paraphrase` (bench/eval/dataset.ts, generated): personal facts asked about
 *   in other words; keyword search weak;
 * - `conversation` (bench/eval/conversation-dataset.ts, generated): two friends'
 *   LoCoMo-style chats, questions reuse the events' words; keyword search strong.
 *
 * For each model, set and half it prints recall@5, recall@10 and MRR of a
 * plain BM25 baseline and of engram's keyword, vector and hybrid search, and
 * writes bench/results/eval.json (goals judged on the held-out halves).
 *
 *   npm run eval -- --locomo ~/data/locomo/data     # all sets, every model present
 *   npm run eval -- --model glove,e5-small          # some models (glove, e5-small, bge-small, minilm; default all)
 *   npm run eval -- --split held-out --set locomo   # one half, one set
 *   npm run eval -- --users 3                       # smaller generated sets (smoke run)
 */
import 'fake-indexeddb/auto'; // before Dexie is imported: it takes IndexedDB from the global at load
import { option } from '../util/args.js';
import { printTable, writeResult, type Row } from '../util/report.js';
import { DEFAULT_CONVERSATION_SHAPE, generateConversations } from './conversation-dataset.js';
import { DEFAULT_SHAPE, generateDataset, type EvalDataset, type EvalSet, type EvalSplit } from './dataset.js';
import { answerable, loadSplit, METHODS, rankAll, type Method } from './harness.js';
import {
  adversarialQuestions,
  countedQuestions,
  loadLocomo,
  locomoDir,
  LOCOMO_HELP,
  type LocomoAudit,
} from './locomo.js';
import { scoresOf, type Scores } from './metrics.js';
import { evalModels, type EvalModel } from './models.js';

const splitArg = option('split') ?? 'both';
if (!['tuning', 'held-out', 'both'].includes(splitArg))
  throw new RangeError(`--split must be tuning, held-out or both, not ${splitArg}`);
const splits: EvalSplit[] = splitArg === 'both' ? ['tuning', 'held-out'] : [splitArg as EvalSplit];
const ALL_SETS: EvalSet[] = ['locomo', 'paraphrase', 'conversation'];
const setArg = option('set') ?? 'all';
if (![...ALL_SETS, 'all'].includes(setArg))
  throw new RangeError(`--set must be locomo, paraphrase, conversation or all, not ${setArg}`);
const dir = locomoDir(option('locomo'));
if (dir === undefined) console.log(`LoCoMo: no data given, the real-conversation set is skipped.\n${LOCOMO_HELP}\n`);
const sets = (setArg === 'all' ? ALL_SETS : [setArg as EvalSet]).filter((s) => s !== 'locomo' || dir !== undefined);
const users = option('users') === undefined ? undefined : Number(option('users'));
const shape = { ...DEFAULT_SHAPE, ...(users === undefined ? {} : { users }) };
const conversationShape = { ...DEFAULT_CONVERSATION_SHAPE, ...(users === undefined ? {} : { conversations: users }) };
const models = evalModels(option('model'));

const audits = new Map<EvalSplit, LocomoAudit>();
const generate = (set: EvalSet, split: EvalSplit): EvalDataset => {
  if (set === 'paraphrase') return generateDataset(split, shape);
  if (set === 'conversation') return generateConversations(split, conversationShape);
  const { dataset, audit } = loadLocomo(dir!, split);
  audits.set(split, audit);
  return dataset;
};

const fixed = (v: number): string => v.toFixed(3);

interface SplitResult {
  model: EvalModel['name'];
  set: EvalSet;
  split: EvalSplit;
  users: number;
  turns: number;
  memories: number;
  questions: number;
  merges: number;
  wrongMerges: number;
  loadSeconds: number;
  scores: Record<Method, Scores>;
}

const results: SplitResult[] = [];
const rows: Row[] = [];
const adversarialRows: Row[] = [];
for (const model of models) {
  for (const [set, split] of sets.flatMap((set) => splits.map((split): [EvalSet, EvalSplit] => [set, split]))) {
    const dataset = generate(set, split);
    const loaded = await loadSplit(dataset, model.create);
    const turns = dataset.users.reduce((n, u) => n + u.sessions.reduce((m, s) => m + s.turns.length, 0), 0);
    // Generated sets: questions with evidence (never-told facts are for thresholds); LoCoMo: categories 1–4.
    const counted = set === 'locomo' ? countedQuestions(dataset.questions) : answerable(dataset.questions);
    const ranks = await rankAll(loaded, counted);
    const scores = Object.fromEntries(METHODS.map((m) => [m, scoresOf(ranks[m])])) as Record<Method, Scores>;
    for (const wrong of loaded.merges.wrong.slice(0, 5))
      console.log(
        `wrong merge (${model.name}): "${wrong.turn.text}" (${wrong.turn.meaning}) into "${wrong.standing.text}" (${wrong.standing.meaning})`,
      );
    results.push({
      model: model.name,
      set,
      split,
      users: dataset.users.length,
      turns,
      memories: loaded.turnOf.size,
      questions: scores.hybrid.questions,
      merges: loaded.merges.total,
      wrongMerges: loaded.merges.wrong.length,
      loadSeconds: Number((loaded.loadMs / 1000).toFixed(1)),
      scores,
    });
    for (const m of METHODS) {
      const s = scores[m];
      rows.push({
        model: model.name,
        set,
        split,
        method: m,
        'recall@5': fixed(s.recallAt5),
        'recall@10': fixed(s.recallAt10),
        MRR: fixed(s.mrr),
        questions: s.questions,
      });
    }
    if (set === 'locomo') {
      const adversarial = await rankAll(loaded, adversarialQuestions(dataset.questions));
      for (const m of METHODS) {
        const s = scoresOf(adversarial[m]);
        adversarialRows.push({
          model: model.name,
          split,
          method: m,
          'recall@5': fixed(s.recallAt5),
          'recall@10': fixed(s.recallAt10),
          MRR: fixed(s.mrr),
          questions: s.questions,
        });
      }
    }
    await loaded.engram.close();
  }
}

printTable('retrieval quality (LoCoMo: categories 1–4; generated multi-session conversations)', rows);
if (adversarialRows.length > 0)
  printTable(
    "LoCoMo category 5 (adversarial: evidence is the other speaker's turn; not in the figures above)",
    adversarialRows,
  );
const storeRows = results.map((r) => ({
  model: r.model,
  set: r.set,
  split: r.split,
  users: r.users,
  turns: r.turns,
  memories: r.memories,
  questions: r.questions,
  merges: r.merges,
  wrongMerges: r.wrongMerges,
  loadSeconds: r.loadSeconds,
}));
printTable('stores', storeRows);
for (const [split, audit] of audits) {
  console.log(
    `LoCoMo ${split}: ${audit.questions} questions in the release, ${audit.withoutEvidence} without an evidence turn that exists (not loaded); labels naming no turn: ${audit.unknownLabels.join(', ') || 'none'}`,
  );
}

type Goal = { goal: string; target: string; measured: number };
const heldOut = (model: EvalModel['name'], set: EvalSet): SplitResult | undefined =>
  results.find((r) => r.model === model && r.set === set && r.split === 'held-out');
const goals: Goal[] = [];
for (const set of ['paraphrase', 'conversation'] as const) {
  const r = heldOut('glove', set);
  if (r === undefined) continue;
  const name = `${set} held-out`;
  goals.push(
    { goal: `${name} hybrid recall@10`, target: '>= 0.72', measured: r.scores.hybrid.recallAt10 },
    { goal: `${name} hybrid recall@5`, target: '>= 0.64', measured: r.scores.hybrid.recallAt5 },
    {
      goal: `${name} hybrid recall@10 − max(keyword, vector)`,
      target: '>= 0',
      measured: r.scores.hybrid.recallAt10 - Math.max(r.scores.keyword.recallAt10, r.scores.vector.recallAt10),
    },
    {
      goal: `${name} hybrid recall@5 − max(keyword, vector)`,
      target: '>= 0',
      measured: r.scores.hybrid.recallAt5 - Math.max(r.scores.keyword.recallAt5, r.scores.vector.recallAt5),
    },
    { goal: `${name} wrong merges by add()`, target: '<= 0', measured: r.wrongMerges },
  );
}
const gloveLocomo = heldOut('glove', 'locomo');
if (gloveLocomo !== undefined) {
  const s = gloveLocomo.scores;
  goals.push(
    {
      goal: 'LoCoMo held-out, offline model: hybrid recall@5 − keyword',
      target: '>= 0',
      measured: s.hybrid.recallAt5 - s.keyword.recallAt5,
    },
    {
      goal: 'LoCoMo held-out, offline model: hybrid recall@10 − keyword',
      target: '>= 0',
      measured: s.hybrid.recallAt10 - s.keyword.recallAt10,
    },
    {
      goal: 'LoCoMo held-out, offline model: hybrid recall@5 − vector',
      target: '>= 0',
      measured: s.hybrid.recallAt5 - s.vector.recallAt5,
    },
    {
      goal: 'LoCoMo held-out, offline model: hybrid recall@10 − vector',
      target: '>= 0',
      measured: s.hybrid.recallAt10 - s.vector.recallAt10,
    },
  );
}
// The sentence-model goals (set for MiniLM in issue 22), for every sentence model measured.
for (const model of models.filter((m) => m.name !== 'glove')) {
  const r = heldOut(model.name, 'locomo');
  if (r === undefined) continue;
  const s = r.scores;
  goals.push(
    { goal: `LoCoMo held-out, ${model.name}: hybrid recall@10`, target: '>= 0.80', measured: s.hybrid.recallAt10 },
    { goal: `LoCoMo held-out, ${model.name}: hybrid recall@5`, target: '>= 0.70', measured: s.hybrid.recallAt5 },
    {
      goal: `LoCoMo held-out, ${model.name}: vector recall@10 − keyword`,
      target: '>= 0',
      measured: s.vector.recallAt10 - s.keyword.recallAt10,
    },
  );
}
writeResult('eval', {
  options: {
    paraphrase: shape,
    conversation: conversationShape,
    locomo: dir === undefined ? null : 'given (not recorded: a local path)',
    models: models.map((m) => m.id),
  },
  results: rows,
  adversarial: adversarialRows,
  stores: storeRows,
  goals,
});
