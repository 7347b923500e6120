/**
 * LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of
 * LLM Agents", ACL 2024; https://github.com/snap-research/locomo, data/locomo10.zip,
 * CC BY-NC 4.0) as an eval set: ten real-length conversations between two
 * people over up to 35 dated sessions, with questions whose answers are
 * labelled with the turns that hold them. The data is read from the user's
 * disk for evaluation only; it is never committed or shipped.
 *
 * Turn level: each turn is one memory, `Speaker: text` (the image a speaker
 * shares is left out: its caption is machine-made, not said). One conversation
 * is one scope (`userId: locomo-<id>`). Conversations 26, 30, 41, 42 and 43 are
 * the tuning half, on which every choice is made; 44, 47, 48, 49 and 50 are
 * held out and only printed.
 *
 * Questions: every question with at least one evidence turn that exists. A few
 * evidence labels are mistyped in the release (`D8:6; D9:17`, `D:11:26`,
 * `D30:05`): they are read as the turn ids they plainly mean; a label that
 * names no turn (`D`, or a turn past the session's end) is dropped, and a
 * question left with none is not loaded. Categories 1–4 (single-hop,
 * multi-hop, temporal and open-domain questions) are the figures that count ({@link countedQuestions}),
 * as in the issue that set the goals. Category 5 is LoCoMo's adversarial one:
 * the question puts to one speaker what the other said ("What did Caroline
 * realize after her charity race?" when Melanie ran it), the right answer is
 * that it was not mentioned, and the release gives no answer for it, only an
 * adversarial one; its evidence is the other speaker's turn. Finding that turn
 * is useful but is not answering the question, so category 5 is printed on its
 * own, never mixed into the figures a choice or a goal is made on.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { plainTokens } from './bm25.js';
import type { EvalDataset, EvalSplit, Question, Session, Turn } from './dataset.js';

/** Conversation ids of each half, in the release's order. */
export const LOCOMO_SPLITS: Record<EvalSplit, readonly string[]> = {
  tuning: ['26', '30', '41', '42', '43'],
  'held-out': ['44', '47', '48', '49', '50'],
};

/** Where to get the data, printed when it is missing. */
export const LOCOMO_HELP = [
  'LoCoMo is not bundled (CC BY-NC 4.0: evaluation only). To include it:',
  '  download https://github.com/snap-research/locomo/raw/main/data/locomo10.zip (or clone the repository),',
  '  unzip it, and pass the folder that holds locomo10.json:',
  '    npm run eval -- --locomo /path/to/locomo/data      (or LOCOMO=/path/to/locomo/data npm run eval)',
  "  A folder of per-conversation files (26.json … 50.json, each one sample's conversation and qa) works too.",
].join('\n');

/** One turn as LoCoMo writes it. */
interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
}

/** One conversation: the `conversation` object of a locomo10.json sample, or a per-conversation file (which holds `qa` too). */
interface RawConversation {
  speaker_a: string;
  speaker_b: string;
  [session: string]: unknown;
}

interface RawQuestion {
  question: string;
  evidence?: unknown;
  category?: number;
}

/** A conversation and its questions, by id ('26'). */
type Conversations = Map<string, { conversation: RawConversation; qa: RawQuestion[] }>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads every conversation of the folder: locomo10.json (the release) or `<id>.json` files. */
function readConversations(dir: string): Conversations {
  const out: Conversations = new Map();
  const release = join(dir, 'locomo10.json');
  if (existsSync(release)) {
    const samples: unknown = JSON.parse(readFileSync(release, 'utf8'));
    if (!Array.isArray(samples)) throw new TypeError(`${release}: expected an array of samples`);
    for (const sample of samples) {
      if (!isRecord(sample) || !isRecord(sample['conversation']) || !Array.isArray(sample['qa']))
        throw new TypeError(`${release}: a sample lacks conversation or qa`);
      const id = String(sample['sample_id']).replace(/^conv-/, '');
      out.set(id, { conversation: sample['conversation'] as RawConversation, qa: sample['qa'] as RawQuestion[] });
    }
    return out;
  }
  for (const file of readdirSync(dir).filter((f) => /^\d+\.json$/.test(f))) {
    const raw: unknown = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    if (!isRecord(raw) || !Array.isArray(raw['qa']))
      throw new TypeError(`${join(dir, file)}: expected a conversation with qa`);
    out.set(file.replace(/\.json$/, ''), { conversation: raw as RawConversation, qa: raw['qa'] as RawQuestion[] });
  }
  return out;
}

/** The folder given by `--locomo DIR` or LOCOMO, when it holds the data; undefined otherwise. */
export function locomoDir(given: string | undefined): string | undefined {
  if (given === undefined || given === 'true') return undefined;
  const dir = resolve(given);
  if (!existsSync(dir)) throw new RangeError(`--locomo ${given}: no such folder\n${LOCOMO_HELP}`);
  const ids = [...LOCOMO_SPLITS.tuning, ...LOCOMO_SPLITS['held-out']];
  if (!existsSync(join(dir, 'locomo10.json')) && !ids.every((id) => existsSync(join(dir, `${id}.json`)))) {
    throw new RangeError(`--locomo ${given}: holds neither locomo10.json nor 26.json … 50.json\n${LOCOMO_HELP}`);
  }
  return dir;
}

/** Evidence labels as turn ids: `D8:6; D9:17` → two, `D:11:26` → `D11:26`, `D30:05` → `D30:5`. */
export function evidenceIds(labels: unknown): { ids: string[]; unreadable: string[] } {
  const parts = Array.isArray(labels)
    ? labels.flatMap((l) => (typeof l === 'string' ? l.split(/[;,\s]+/).filter((p) => p !== '') : [String(l)]))
    : [];
  const ids: string[] = [];
  const unreadable: string[] = [];
  for (const part of parts) {
    const m = /^D:?(\d+):0*(\d+)$/.exec(part);
    if (m === null) unreadable.push(part);
    else ids.push(`D${m[1]}:${m[2]}`);
  }
  return { ids, unreadable };
}

/** Session numbers of a conversation, in order. */
function sessionNumbers(conversation: RawConversation): number[] {
  return Object.keys(conversation)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

/** The LoCoMo category a loaded question came from (1–5). */
export function categoryOf(question: Question): number {
  return Number(question.factId.replace('category-', ''));
}

/** The questions the figures are made of: categories 1–4 (see the file's comment on category 5). */
export function countedQuestions(questions: readonly Question[]): Question[] {
  return questions.filter((q) => categoryOf(q) >= 1 && categoryOf(q) <= 4);
}

/** The adversarial questions (category 5), printed apart. */
export function adversarialQuestions(questions: readonly Question[]): Question[] {
  return questions.filter((q) => categoryOf(q) === 5);
}

/** Counts of what the loader dropped, for the report. */
export interface LocomoAudit {
  /** Questions of the half in the release. */
  questions: number;
  /** Questions with no evidence turn that exists (not counted). */
  withoutEvidence: number;
  /** Evidence labels that name no turn (dropped). */
  unknownLabels: string[];
}

/**
 * One half of LoCoMo as an {@link EvalDataset}: turn ids `<conversation>/<dia_id>`,
 * the `meaning` of a turn its own words, lower case, without punctuation (so a
 * merge by add() counts as right only between turns of the same words said by
 * the same speaker).
 */
export function loadLocomo(dir: string, split: EvalSplit): { dataset: EvalDataset; audit: LocomoAudit } {
  const all = readConversations(dir);
  const users: EvalDataset['users'] = [];
  const questions: Question[] = [];
  const audit: LocomoAudit = { questions: 0, withoutEvidence: 0, unknownLabels: [] };
  for (const id of LOCOMO_SPLITS[split]) {
    const entry = all.get(id);
    if (entry === undefined) throw new RangeError(`LoCoMo conversation ${id} is missing from ${dir}\n${LOCOMO_HELP}`);
    const userId = `locomo-${id}`;
    const sessions: Session[] = [];
    const known = new Set<string>();
    for (const n of sessionNumbers(entry.conversation)) {
      const raw = entry.conversation[`session_${n}`];
      if (!Array.isArray(raw) || raw.length === 0) continue;
      const turns: Turn[] = (raw as RawTurn[]).map((t) => {
        const text = `${t.speaker}: ${t.text}`;
        known.add(t.dia_id);
        return { id: `${id}/${t.dia_id}`, role: 'user', text, meaning: plainTokens(text).join(' ') };
      });
      sessions.push({ index: n, turns });
    }
    users.push({ userId, sessions });
    entry.qa.forEach((q, i) => {
      audit.questions += 1;
      const { ids, unreadable } = evidenceIds(q.evidence);
      for (const e of [...unreadable, ...ids.filter((e) => !known.has(e))]) audit.unknownLabels.push(`${id}/${e}`);
      const evidence = [...new Set(ids.filter((e) => known.has(e)))].map((e) => `${id}/${e}`);
      if (evidence.length === 0) {
        audit.withoutEvidence += 1;
        return;
      }
      questions.push({
        id: `${userId}/q${i}`,
        userId,
        text: q.question,
        evidence,
        kind: 'recorded',
        factId: `category-${q.category ?? 'none'}`,
      });
    });
  }
  return { dataset: { set: 'locomo', split, seed: 0, users, questions }, audit };
}
