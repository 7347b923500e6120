/**
 * `npm run eval`: retrieval quality on two generated benchmarks of long
 * multi-session conversations: `paraphrase` (bench/eval/dataset.ts: personal
 * facts asked about in other words; keyword search weak) and `conversation`
 * (bench/eval/conversation-dataset.ts: two friends' LoCoMo-style chats, questions
 * reuse the events' words; keyword search strong). For the tuning and the
 * held-out split of each it prints recall@5, recall@10 and MRR of a plain BM25
 * baseline and of engram's keyword, vector and hybrid search, and writes
 * bench/results/eval.json (goals judged on the held-out splits).
 *
 *   npm run eval                            # both sets, both splits
 *   npm run eval -- --split held-out        # one split
 *   npm run eval -- --set conversation      # one set
 *   npm run eval -- --users 3               # smaller (smoke run; users or conversations per split)
 */
import { option } from '../util/args.js';
import { printTable, writeResult, type Row } from '../util/report.js';
import { DEFAULT_CONVERSATION_SHAPE, generateConversations } from './conversation-dataset.js';
import { DEFAULT_SHAPE, generateDataset, type EvalDataset, type EvalSet, type EvalSplit } from './dataset.js';
import { answerable, loadSplit, METHODS, rankAll, type Method } from './harness.js';
import { scoresOf, type Scores } from './metrics.js';

const splitArg = option('split') ?? 'both';
if (!['tuning', 'held-out', 'both'].includes(splitArg)) throw new RangeError(`--split must be tuning, held-out or both, not ${splitArg}`);
const splits: EvalSplit[] = splitArg === 'both' ? ['tuning', 'held-out'] : [splitArg as EvalSplit];
const setArg = option('set') ?? 'both';
if (!['paraphrase', 'conversation', 'both'].includes(setArg)) throw new RangeError(`--set must be paraphrase, conversation or both, not ${setArg}`);
const sets: EvalSet[] = setArg === 'both' ? ['paraphrase', 'conversation'] : [setArg as EvalSet];
const users = option('users') === undefined ? undefined : Number(option('users'));
const shape = { ...DEFAULT_SHAPE, ...(users === undefined ? {} : { users }) };
const conversationShape = { ...DEFAULT_CONVERSATION_SHAPE, ...(users === undefined ? {} : { conversations: users }) };
const generate = (set: EvalSet, split: EvalSplit): EvalDataset => (set === 'paraphrase' ? generateDataset(split, shape) : generateConversations(split, conversationShape));

const fixed = (v: number): string => v.toFixed(3);

interface SplitResult {
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
for (const [set, split] of sets.flatMap((set) => splits.map((split): [EvalSet, EvalSplit] => [set, split]))) {
  const dataset = generate(set, split);
  const loaded = await loadSplit(dataset);
  const turns = dataset.users.reduce((n, u) => n + u.sessions.reduce((m, s) => m + s.turns.length, 0), 0);
  const ranks = await rankAll(loaded);
  const scores = Object.fromEntries(METHODS.map((m) => [m, scoresOf(ranks[m])])) as Record<Method, Scores>;
  for (const wrong of loaded.merges.wrong.slice(0, 5)) console.log(`wrong merge: "${wrong.turn.text}" (${wrong.turn.meaning}) into "${wrong.standing.text}" (${wrong.standing.meaning})`);
  results.push({
    set,
    split,
    users: dataset.users.length,
    turns,
    memories: loaded.turnOf.size,
    questions: answerable(dataset.questions).length,
    merges: loaded.merges.total,
    wrongMerges: loaded.merges.wrong.length,
    loadSeconds: Number((loaded.loadMs / 1000).toFixed(1)),
    scores,
  });
  for (const m of METHODS) {
    const s = scores[m];
    rows.push({ set, split, method: m, 'recall@5': fixed(s.recallAt5), 'recall@10': fixed(s.recallAt10), MRR: fixed(s.mrr), questions: s.questions });
  }
  await loaded.engram.close();
}

printTable('retrieval quality (generated multi-session conversations, offline GloVe model)', rows);
printTable(
  'stores',
  results.map((r) => ({ set: r.set, split: r.split, users: r.users, turns: r.turns, memories: r.memories, 'merged (NONE)': r.merges, 'wrong merges': r.wrongMerges, 'load s': r.loadSeconds })),
);

const goals = results
  .filter((r) => r.split === 'held-out')
  .flatMap((heldOut) => {
    const name = `${heldOut.set} held-out`;
    return [
      { goal: `${name} hybrid recall@10`, target: '>= 0.72', measured: heldOut.scores.hybrid.recallAt10 },
      { goal: `${name} hybrid recall@5`, target: '>= 0.64', measured: heldOut.scores.hybrid.recallAt5 },
      { goal: `${name} hybrid recall@10 − max(keyword, vector)`, target: '>= 0', measured: heldOut.scores.hybrid.recallAt10 - Math.max(heldOut.scores.keyword.recallAt10, heldOut.scores.vector.recallAt10) },
      { goal: `${name} hybrid recall@5 − max(keyword, vector)`, target: '>= 0', measured: heldOut.scores.hybrid.recallAt5 - Math.max(heldOut.scores.keyword.recallAt5, heldOut.scores.vector.recallAt5) },
      { goal: `${name} wrong merges by add()`, target: '<= 0', measured: heldOut.wrongMerges },
    ];
  });
writeResult('eval', {
  options: { paraphrase: shape, conversation: conversationShape },
  results: rows,
  stores: results.map((r) => ({ set: r.set, split: r.split, users: r.users, turns: r.turns, memories: r.memories, questions: r.questions, merges: r.merges, wrongMerges: r.wrongMerges, loadSeconds: r.loadSeconds })),
  goals,
});
