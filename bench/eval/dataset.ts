/**
 * A generated benchmark of long multi-session conversations: each simulated
 * user talks to an assistant over many sessions, tells personal facts among
 * small talk, restates some of them later in other words, changes some (moves,
 * new job), and is finally asked about them with questions that paraphrase.
 * Every question carries its evidence: the turns that state the answer.
 * Deterministic for a seed (bench/util/rng.ts).
 */
import { mulberry32, pick, randomInt, type Rng } from '../util/rng.js';
import { acknowledgement, assistantReply, greeting, OTHER_PEOPLE, sentence, userChatter } from './chatter.js';
import { HELD_OUT_FACTS, TUNING_FACTS, type FactTemplate } from './facts.js';

/** One turn of a conversation. */
export interface Turn {
  /** Unique in the dataset: `${user}/s${session}/t${index}`. */
  id: string;
  role: 'user' | 'assistant';
  text: string;
  /** Same label, same meaning: two turns may be merged as duplicates only when their labels are equal. */
  meaning: string;
}

/** One session: consecutive turns of one conversation. */
export interface Session {
  index: number;
  turns: Turn[];
}

/** A question with the turns that answer it. */
export interface Question {
  id: string;
  userId: string;
  text: string;
  /** Turn ids; a search finds the answer when any of them is in its top k. */
  evidence: string[];
  /**
   * What is asked: the fact's current value, its value before a change, or a
   * fact this user never told (`absent`: no evidence; for measuring thresholds,
   * not counted in recall); `recorded`: a question of a recorded benchmark
   * (LoCoMo, bench/eval/locomo.ts), whose `factId` names its category.
   */
  kind: 'current' | 'before' | 'absent' | 'recorded';
  factId: string;
}

/** One simulated user's history. */
export interface UserHistory {
  userId: string;
  sessions: Session[];
}

/** A whole split. */
export interface EvalDataset {
  /** Which benchmark: paraphrased questions about personal facts (this file) or two friends' conversations (conversation-dataset.ts). */
  set: EvalSet;
  split: EvalSplit;
  seed: number;
  users: UserHistory[];
  questions: Question[];
}

/** Which facts and seed a split uses. */
export type EvalSplit = 'tuning' | 'held-out';

/**
 * The benchmarks: generated `paraphrase` (keyword search weak) and
 * `conversation` (keyword search strong), and the recorded `locomo` (real
 * conversations, read from the user's disk: bench/eval/locomo.ts).
 */
export type EvalSet = 'paraphrase' | 'conversation' | 'locomo';

/** Sizes of a generated split. */
export interface DatasetShape {
  users: number;
  sessions: number;
  /** Facts per user (at most the size of the split's library). */
  facts: number;
  /** Small-talk exchanges per session, inclusive range. */
  chatter: [number, number];
}

/** The default shape: about 2,500 turns and 150 questions per split. */
export const DEFAULT_SHAPE: DatasetShape = { users: 8, sessions: 20, facts: 14, chatter: [3, 6] };

/** Seeds per split; held-out users never share a seed with tuning users. */
export const SPLIT_SEEDS: Record<EvalSplit, number> = { tuning: 1101, 'held-out': 7919 };

interface Mention {
  session: number;
  /** The text said. */
  text: string;
  meaning: string;
  /** Values this turn states: the value (and the old one for a change). */
  states: { value: string; role: 'current' | 'old' }[];
}

interface PlannedFact {
  template: FactTemplate;
  first: string;
  changed?: string;
  mentions: Mention[];
}

function fill(text: string, values: Record<string, string>): string {
  return sentence(text.replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? `{${k}}`));
}

function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(rng, i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Picks a statement form not used yet for this fact when one is left. */
function freshForm(rng: Rng, forms: readonly string[], used: Set<string>): string {
  const left = forms.filter((f) => !used.has(f));
  const form = pick(rng, left.length > 0 ? left : forms);
  used.add(form);
  return form;
}

/** When and how a user mentions one fact: first telling, restatements, maybe one change. */
function planFact(rng: Rng, template: FactTemplate, sessions: number): PlannedFact {
  const first = pick(rng, template.values);
  const used = new Set<string>();
  const start = randomInt(rng, Math.max(1, Math.floor(sessions * 0.6)));
  const mentions: Mention[] = [
    {
      session: start,
      text: fill(freshForm(rng, template.state, used), { v: first }),
      meaning: `${template.id}=${first}`,
      states: [{ value: first, role: 'current' }],
    },
  ];
  let value = first;
  let changed: string | undefined;
  let at = start;
  const changeAt =
    template.change !== undefined && rng() < 0.45
      ? start + 1 + randomInt(rng, Math.max(1, sessions - start - 2))
      : undefined;
  const restatements = randomInt(rng, 3); // 0, 1 or 2
  const slots = new Set<number>();
  for (let r = 0; r < restatements; r++) {
    const s = at + 1 + randomInt(rng, Math.max(1, sessions - at - 1));
    if (s < sessions) slots.add(s);
  }
  if (changeAt !== undefined && changeAt < sessions) slots.add(changeAt);
  for (const s of [...slots].sort((a, b) => a - b)) {
    at = s;
    if (s === changeAt && changed === undefined) {
      const next = pick(
        rng,
        template.values.filter((v) => v !== value),
      );
      mentions.push({
        session: s,
        text: fill(pick(rng, template.change!), { v: next, old: value }),
        meaning: `${template.id}:${value}->${next}`,
        states: [
          { value: next, role: 'current' },
          { value, role: 'old' },
        ],
      });
      changed = next;
      value = next;
      used.clear();
    } else {
      mentions.push({
        session: s,
        text: fill(freshForm(rng, template.state, used), { v: value }),
        meaning: `${template.id}=${value}`,
        states: [{ value, role: 'current' }],
      });
    }
  }
  return { template, first, ...(changed === undefined ? {} : { changed }), mentions };
}

const CONTRACTED: readonly [RegExp, string][] = [
  [/\bI'm\b/g, 'I am'],
  [/\bI've\b/g, 'I have'],
  [/\bcan't\b/g, 'cannot'],
  [/\bdon't\b/g, 'do not'],
  [/\bit's\b/g, 'it is'],
  [/\bI'll\b/g, 'I will'],
];
const EXPANDED: readonly [RegExp, string][] = [
  [/\bI am\b/g, "I'm"],
  [/\bI have\b/g, "I've"],
  [/\bdo not\b/g, "don't"],
];

/**
 * The same sentence said again a little differently, as people repeat
 * themselves: contractions the other way, other punctuation, a filler word.
 */
export function surfaceVariant(rng: Rng, text: string): string {
  let out = text;
  for (const [pattern, replacement] of rng() < 0.5 ? CONTRACTED : EXPANDED) out = out.replace(pattern, replacement);
  const r = rng();
  if (r < 0.3) out = out.replace(/[.!]$/, '') + '!';
  else if (r < 0.5) out = out.replace(/[.!]$/, '');
  else if (r < 0.7) out = `Oh, ${out.charAt(0) === 'I' ? out : out.charAt(0).toLowerCase() + out.slice(1)}`;
  return out === text ? `${text.replace(/[.!]$/, '')}!!` : out;
}

/** A near miss: the same kind of fact about someone else, with another value. */
function nearMiss(rng: Rng, fact: PlannedFact): { text: string; meaning: string } | undefined {
  const forms = fact.template.others;
  if (forms === undefined) return undefined;
  const value = pick(rng, fact.template.values);
  const who = pick(rng, OTHER_PEOPLE);
  return { text: fill(pick(rng, forms), { v: value, who }), meaning: `other:${fact.template.id}:${who}=${value}` };
}

/** Generates one user's sessions and questions. */
function generateUser(
  rng: Rng,
  absentRng: Rng,
  userId: string,
  library: readonly FactTemplate[],
  shape: DatasetShape,
): { history: UserHistory; questions: Question[] } {
  const order = shuffled(rng, library);
  const facts = order.slice(0, Math.min(shape.facts, library.length)).map((t) => planFact(rng, t, shape.sessions));
  const untold = order.slice(facts.length);
  // Some restatements repeat an earlier telling almost word for word (own generator, so the rest stays as it was).
  for (const fact of facts) {
    fact.mentions.forEach((m, i) => {
      const earlier = fact.mentions.slice(0, i).filter((e) => e.meaning === m.meaning);
      if (earlier.length > 0 && absentRng() < 0.4) m.text = surfaceVariant(absentRng, pick(absentRng, earlier).text);
    });
  }
  const sessions: Session[] = [];
  /** Turn ids of each mention, by fact id and mention index. */
  const mentionTurn = new Map<Mention, string>();
  for (let s = 0; s < shape.sessions; s++) {
    const turns: Turn[] = [];
    const add = (role: Turn['role'], text: string, meaning: string): string => {
      const id = `${userId}/s${s}/t${turns.length}`;
      turns.push({ id, role, text, meaning });
      return id;
    };
    const [hello, reply] = greeting(rng);
    add('user', hello.text, hello.meaning);
    add('assistant', reply.text, reply.meaning);
    // The session's items: fact mentions, near misses and small talk, in random order.
    type Item = { mention: Mention } | { other: { text: string; meaning: string } } | { chatter: true };
    const items: Item[] = facts.flatMap((f) =>
      f.mentions.filter((m) => m.session === s).map((mention) => ({ mention })),
    );
    const [lo, hi] = shape.chatter;
    const small = lo + randomInt(rng, hi - lo + 1);
    for (let i = 0; i < small; i++) items.push({ chatter: true });
    if (rng() < 0.5) {
      const miss = nearMiss(rng, pick(rng, facts));
      if (miss !== undefined) items.push({ other: miss });
    }
    for (const item of shuffled(rng, items)) {
      if ('mention' in item) {
        mentionTurn.set(item.mention, add('user', item.mention.text, item.mention.meaning));
        const ack = acknowledgement(rng);
        add('assistant', ack.text, ack.meaning);
      } else if ('other' in item) {
        add('user', item.other.text, item.other.meaning);
        const ack = acknowledgement(rng);
        add('assistant', ack.text, ack.meaning);
      } else {
        const line = userChatter(rng);
        add('user', line.text, line.meaning);
        const answer = assistantReply(rng, line.kind);
        add('assistant', answer.text, answer.meaning);
      }
    }
    sessions.push({ index: s, turns });
  }
  const questions: Question[] = [];
  for (const fact of facts) {
    const current = fact.changed ?? fact.first;
    const evidence = fact.mentions
      .filter((m) => m.states.some((st) => st.value === current && st.role === 'current'))
      .map((m) => mentionTurn.get(m)!);
    questions.push({
      id: `${userId}/q${questions.length}`,
      userId,
      text: pick(rng, fact.template.ask),
      evidence,
      kind: 'current',
      factId: fact.template.id,
    });
    if (fact.changed !== undefined && fact.template.askBefore !== undefined && rng() < 0.7) {
      const before = fact.mentions
        .filter((m) => m.states.some((st) => st.value === fact.first))
        .map((m) => mentionTurn.get(m)!);
      questions.push({
        id: `${userId}/q${questions.length}`,
        userId,
        text: pick(rng, fact.template.askBefore),
        evidence: before,
        kind: 'before',
        factId: fact.template.id,
      });
    }
  }
  // Questions about facts this user never told: what a threshold must turn away (own generator, so the rest stays as it was).
  for (const template of untold) {
    questions.push({
      id: `${userId}/q${questions.length}`,
      userId,
      text: pick(absentRng, template.ask),
      evidence: [],
      kind: 'absent',
      factId: template.id,
    });
  }
  return { history: { userId, sessions }, questions };
}

/**
 * Generates a split: the tuning split draws facts from `TUNING_FACTS`, the
 * held-out split from `HELD_OUT_FACTS`, each with its own seed.
 * @example
 * const { users, questions } = generateDataset('held-out')
 */
export function generateDataset(
  split: EvalSplit,
  shape: DatasetShape = DEFAULT_SHAPE,
  seed = SPLIT_SEEDS[split],
): EvalDataset {
  const rng = mulberry32(seed);
  const absentRng = mulberry32(seed ^ 0x5bd1e995);
  const library = split === 'tuning' ? TUNING_FACTS : HELD_OUT_FACTS;
  const users: UserHistory[] = [];
  const questions: Question[] = [];
  for (let u = 0; u < shape.users; u++) {
    const { history, questions: asked } = generateUser(rng, absentRng, `${split}-user-${u}`, library, shape);
    users.push(history);
    questions.push(...asked);
  }
  return { set: 'paraphrase', split, seed, users, questions };
}

/** Every turn of a dataset, in order. */
export function allTurns(dataset: EvalDataset): Turn[] {
  return dataset.users.flatMap((u) => u.sessions.flatMap((s) => s.turns));
}
