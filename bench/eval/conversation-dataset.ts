/**
 * A second generated benchmark, modelled on LoCoMo-style long conversations
 * between two friends: over many dated sessions each speaker tells the other
 * about things that happened (a pottery class, a camping trip, a new job),
 * plans them beforehand, mentions them again later, and sometimes updates
 * them (moved again, switched jobs). Questions name the speaker and reuse the
 * event's words in question form ("Where did Caroline go camping?"); the
 * friend's replies and plans share those words without stating the answer.
 * Unlike the paraphrase split (dataset.ts), keyword search is strong here.
 * Deterministic for a seed; two halves with disjoint events, names and seeds.
 */
import { mulberry32, pick, randomInt, type Rng } from '../util/rng.js';
import { assistantReply, sentence, userChatter } from './chatter.js';
import {
  HELD_OUT_EVENTS,
  HELD_OUT_NAMES,
  TUNING_EVENTS,
  TUNING_NAMES,
  WHEN,
  type EventTemplate,
} from './conversation-events.js';
import type { EvalDataset, EvalSplit, Question, Session, Turn } from './dataset.js';

/** Sizes of a generated conversation split. */
export interface ConversationShape {
  /** Conversations (each one scope: two speakers). */
  conversations: number;
  sessions: number;
  /** Events each speaker lives through (both speakers' events are distinct). */
  eventsPerSpeaker: number;
  /** Small-talk exchanges per session, inclusive range. */
  chatter: [number, number];
}

/** The default shape (LoCoMo-like: about 28 sessions of some 15 turns per conversation): about 3,400 turns and 120 questions per split. */
export const DEFAULT_CONVERSATION_SHAPE: ConversationShape = {
  conversations: 8,
  sessions: 28,
  eventsPerSpeaker: 5,
  chatter: [3, 6],
};

/** Seeds per half (not shared with the paraphrase split). */
export const CONVERSATION_SEEDS: Record<EvalSplit, number> = { tuning: 4243, 'held-out': 9001 };

interface Mention {
  session: number;
  text: string;
  meaning: string;
  /** Values stated, by slot (`when` for the telling); `old` for a change's former value. */
  states: { slot: string; value: string; role: 'current' | 'old' }[];
  /** The friend answers a telling. */
  reply?: string;
}

interface PlannedEvent {
  template: EventTemplate;
  speaker: string;
  friend: string;
  /** Slot values now (after any change). */
  values: Record<string, string>;
  /** Slot values when it was told. */
  first: Record<string, string>;
  /** The value before the change, for the changed slot. */
  before?: { slot: string; value: string };
  mentions: Mention[];
}

const SPEAKER_CHATTER: readonly string[] = [
  'Hey {friend}! Long time no talk, how have you been?',
  'Hi! This week has been a blur.',
  'Sorry I went quiet, work has been crazy.',
  'Morning {friend}! Coffee in hand, ready to catch up.',
];
/** What people wrap a piece of news in (LoCoMo turns run to several sentences). */
const LEAD_INS: readonly string[] = [
  'Hey {friend}!',
  'Guess what?',
  'Oh, I meant to tell you.',
  'Things have been busy here.',
  'So much has happened since we talked.',
  'Okay, update time.',
];
const FOLLOW_UPS: readonly string[] = [
  'How has your week been?',
  'Anyway, what have you been up to?',
  'Work has been hectic too, but I am managing.',
  'I feel like life is finally slowing down a bit.',
  'It made me think about how lucky I am to have good people around.',
  'Honestly it was the highlight of my month.',
  'I will tell you more when we meet up.',
];
const FRIEND_GREETING: readonly string[] = [
  'Hey {name}! I was just thinking about you.',
  'So good to hear from you!',
  'Oh hey, perfect timing.',
  'Hi {name}! Tell me everything.',
];

function fill(text: string, values: Record<string, string>): string {
  return sentence(text.replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? `{${k}}`));
}

/** A value as someone else asks about it: "my sister" → "Ada's sister", "our backyard" → "the backyard". */
function asked(value: string, speaker: string): string {
  return value.replace(/^my /i, `${speaker}'s `).replace(/^our /i, 'the ');
}

function placeholders(text: string): string[] {
  return [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(rng, i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A mention said with the event's values at the time (`{old}` the changed slot's former value). */
function mention(
  session: number,
  form: string,
  event: PlannedEvent,
  values: Record<string, string>,
  when?: string,
  old?: string,
): Mention {
  const text = fill(form, {
    ...values,
    ...(when === undefined ? {} : { when }),
    ...(old === undefined ? {} : { old }),
    name: event.speaker,
    friend: event.friend,
  });
  const states: Mention['states'] = [];
  for (const slot of placeholders(form)) {
    if (slot === 'old' && event.template.change !== undefined && old !== undefined)
      states.push({ slot: event.template.change.slot, value: old, role: 'old' });
    else if (slot === 'when' && when !== undefined) states.push({ slot: 'when', value: when, role: 'current' });
    else if (values[slot] !== undefined) states.push({ slot, value: values[slot], role: 'current' });
  }
  return { session, text, meaning: `${event.speaker}:${event.template.id}:${text}`, states };
}

/** When and how a speaker mentions one event: a plan maybe, the telling, later mentions, maybe one change. */
function planEvent(rng: Rng, template: EventTemplate, speaker: string, friend: string, sessions: number): PlannedEvent {
  const values = Object.fromEntries(
    Object.entries(template.slots).map(([slot, options]) => [slot, pick(rng, options)]),
  );
  const event: PlannedEvent = { template, speaker, friend, values: { ...values }, first: { ...values }, mentions: [] };
  const tellAt = 1 + randomInt(rng, Math.max(1, Math.floor(sessions * 0.6)));
  if (rng() < 0.6) event.mentions.push(mention(randomInt(rng, tellAt), pick(rng, template.plan), event, values));
  const told = mention(tellAt, pick(rng, template.tell), event, values, pick(rng, WHEN));
  told.reply = fill(pick(rng, template.reply), { name: speaker, friend });
  event.mentions.push(told);
  const later = (): number => tellAt + 1 + randomInt(rng, Math.max(1, sessions - tellAt - 1));
  const changeAt = template.change !== undefined && rng() < 0.5 ? later() : undefined;
  const slots = [...new Set([later(), ...(rng() < 0.6 ? [later()] : [])])].filter(
    (s) => s < sessions && s !== changeAt,
  );
  const current = { ...values };
  for (const s of [...slots, ...(changeAt !== undefined && changeAt < sessions ? [changeAt] : [])].sort(
    (a, b) => a - b,
  )) {
    if (s === changeAt && template.change !== undefined) {
      const { slot, forms } = template.change;
      const old = current[slot]!;
      current[slot] = pick(
        rng,
        template.slots[slot]!.filter((v) => v !== old),
      );
      event.before = { slot, value: old };
      event.mentions.push(mention(s, pick(rng, forms), event, current, undefined, old));
      continue;
    }
    event.mentions.push(mention(s, pick(rng, template.again), event, current));
  }
  event.values = current;
  return event;
}

function generateConversation(
  rng: Rng,
  userId: string,
  library: readonly EventTemplate[],
  names: readonly string[],
  shape: ConversationShape,
): { history: { userId: string; sessions: Session[] }; questions: Question[] } {
  const [a, b] = shuffled(rng, names) as [string, string];
  const order = shuffled(rng, library);
  const per = Math.min(shape.eventsPerSpeaker, Math.floor(library.length / 2));
  const events = [
    ...order.slice(0, per).map((t) => planEvent(rng, t, a, b, shape.sessions)),
    ...order.slice(per, 2 * per).map((t) => planEvent(rng, t, b, a, shape.sessions)),
  ];
  const untold = order.slice(2 * per);
  const turnOf = new Map<Mention, string>();
  const sessions: Session[] = [];
  for (let s = 0; s < shape.sessions; s++) {
    const turns: Turn[] = [];
    const say = (speaker: string, text: string, meaning: string): string => {
      const id = `${userId}/s${s}/t${turns.length}`;
      turns.push({ id, role: speaker === a ? 'user' : 'assistant', text, meaning });
      return id;
    };
    const [opener, other] = rng() < 0.5 ? [a, b] : [b, a];
    const hello = fill(pick(rng, SPEAKER_CHATTER), { friend: other });
    say(opener, hello, `hello:${hello}`);
    const back = fill(pick(rng, FRIEND_GREETING), { name: opener });
    say(other, back, `hello:${back}`);
    type Item = { event: PlannedEvent; mention: Mention } | { chatter: string };
    const items: Item[] = events.flatMap((event) =>
      event.mentions.filter((m) => m.session === s).map((m) => ({ event, mention: m })),
    );
    const [lo, hi] = shape.chatter;
    const small = lo + randomInt(rng, hi - lo + 1);
    for (let i = 0; i < small; i++) items.push({ chatter: rng() < 0.5 ? a : b });
    for (const item of shuffled(rng, items)) {
      if ('event' in item) {
        // Half the turns wrap the news in a lead-in or a follow-up, as people do.
        const lead = rng() < 0.3 ? `${fill(pick(rng, LEAD_INS), { friend: item.event.friend })} ` : '';
        const follow = rng() < 0.3 ? ` ${pick(rng, FOLLOW_UPS)}` : '';
        const text = `${lead}${item.mention.text}${follow}`;
        turnOf.set(item.mention, say(item.event.speaker, text, `${item.mention.meaning}${lead}${follow}`));
        if (item.mention.reply !== undefined) say(item.event.friend, item.mention.reply, `reply:${item.mention.reply}`);
        continue;
      }
      const line = userChatter(rng);
      say(item.chatter, line.text, line.meaning);
      const answer = assistantReply(rng, line.kind);
      say(item.chatter === a ? b : a, answer.text, answer.meaning);
    }
    sessions.push({ index: s, turns });
  }

  const questions: Question[] = [];
  const ask = (text: string, evidence: string[], kind: Question['kind'], factId: string): void => {
    questions.push({ id: `${userId}/q${questions.length}`, userId, text, evidence, kind, factId });
  };
  for (const event of events) {
    const { template, speaker } = event;
    const stating = (slot: string, value: string): string[] =>
      event.mentions
        .filter((m) => turnOf.has(m) && m.states.some((st) => st.slot === slot && st.value === value))
        .map((m) => turnOf.get(m)!);
    const told = event.mentions.find((m) => m.states.some((st) => st.slot === 'when'));
    // One or two questions per event, about slots the conversation stated.
    for (const slot of shuffled(rng, Object.keys(template.ask)).slice(0, 1 + (rng() < 0.4 ? 1 : 0))) {
      const value = slot === 'when' ? told?.states.find((st) => st.slot === 'when')?.value : event.values[slot];
      const evidence = value === undefined ? [] : stating(slot, value);
      if (evidence.length === 0) continue;
      // The question may name the event's other values (as they were when it happened, for `when`), never the one asked.
      const context = Object.fromEntries(
        Object.entries(slot === 'when' ? event.first : event.values)
          .filter(([k]) => k !== slot)
          .map(([k, v]) => [k, asked(v, speaker)]),
      );
      ask(fill(pick(rng, template.ask[slot]!), { ...context, name: speaker }), evidence, 'current', template.id);
    }
    if (event.before !== undefined && template.askBefore !== undefined && rng() < 0.7) {
      const evidence = stating(event.before.slot, event.before.value);
      if (evidence.length > 0)
        ask(fill(pick(rng, template.askBefore), { name: speaker }), evidence, 'before', template.id);
    }
  }
  // Questions about events nobody in this conversation lived through (for thresholds; not in recall).
  for (const template of untold.slice(0, 3)) {
    const slot = pick(rng, Object.keys(template.ask));
    const context = Object.fromEntries(Object.entries(template.slots).map(([k, options]) => [k, pick(rng, options)]));
    ask(fill(pick(rng, template.ask[slot]!), { ...context, name: pick(rng, [a, b]) }), [], 'absent', template.id);
  }
  return { history: { userId, sessions }, questions };
}

/**
 * Generates a conversation split: the tuning half draws events and names from
 * `TUNING_EVENTS` / `TUNING_NAMES`, the held-out half from the held-out lists,
 * each with its own seed.
 * @example
 * const { users, questions } = generateConversations('held-out')
 */
export function generateConversations(
  split: EvalSplit,
  shape: ConversationShape = DEFAULT_CONVERSATION_SHAPE,
  seed = CONVERSATION_SEEDS[split],
): EvalDataset {
  const rng = mulberry32(seed);
  const library = split === 'tuning' ? TUNING_EVENTS : HELD_OUT_EVENTS;
  const names = split === 'tuning' ? TUNING_NAMES : HELD_OUT_NAMES;
  const users: EvalDataset['users'] = [];
  const questions: Question[] = [];
  for (let c = 0; c < shape.conversations; c++) {
    const { history, questions: asked } = generateConversation(
      rng,
      `conversation-${split}-${c}`,
      library,
      names,
      shape,
    );
    users.push(history);
    questions.push(...asked);
  }
  return { set: 'conversation', split, seed, users, questions };
}
