/**
 * The offline model of the demo page and the desktop chat: a small deterministic agent that needs no network.
 * It reads the prompt engram built for the turn, exactly as an LLM would: the
 * last user message and the "Relevant memories:" system block that the
 * assistant inserts with what was recalled. Questions are answered from those
 * memories ("I remember that you live in Porto."); statements are acknowledged
 * with a follow-up question. It never invents a fact that was not recalled.
 */
import type { ChatTurn } from '../lib/index.js';

const MEMORY_HEADER = 'Relevant memories:';

const QUESTION_START =
  /^(who|what|where|when|why|how|which|whose|do|does|did|can|could|is|are|am|was|were|will|would|should|have|has)\b/i;
const GREETING = /^(hi|hello|hey|good (morning|afternoon|evening)|ola|olá)\b[\s!.,]*$/i;

const FOLLOW_UPS = [
  'What else should I know about you?',
  'Anything else you would like me to remember?',
  'Tell me more, or ask me what I know.',
];

/** Swaps first person for second person: "My name is Ana and I live in Porto" → "your name is Ana and you live in Porto". */
export function secondPerson(text: string): string {
  const swapped = text
    .trim()
    .replace(/[.!\s]+$/u, '')
    .replace(/\bI am\b/g, 'you are')
    .replace(/\bI'm\b/gi, "you're")
    .replace(/\bI was\b/g, 'you were')
    .replace(/\bI've\b/gi, "you've")
    .replace(/\bI'll\b/gi, "you'll")
    .replace(/\bI'd\b/gi, "you'd")
    .replace(/\bI\b/g, 'you')
    .replace(/\bmyself\b/gi, 'yourself')
    .replace(/\bmy\b/gi, 'your')
    .replace(/\bmine\b/gi, 'yours')
    .replace(/\bme\b/gi, 'you');
  return swapped.charAt(0).toLowerCase() + swapped.slice(1);
}

/** True for a question rather than a statement. */
export function isQuestion(text: string): boolean {
  const t = text.trim();
  return t.endsWith('?') || QUESTION_START.test(t);
}

/** The memories listed in the prompt's "Relevant memories:" block, in order. */
export function recalledFrom(messages: readonly ChatTurn[]): string[] {
  const block = messages.find((m) => m.role === 'system' && m.content.startsWith(MEMORY_HEADER));
  if (block === undefined) return [];
  return block.content
    .split('\n')
    .slice(1)
    .filter((line) => line.startsWith('- '))
    .map((line) => line.slice(2).trim())
    .filter((line) => line !== '');
}

function joinFacts(facts: readonly string[]): string {
  if (facts.length <= 1) return facts.join('');
  return `${facts.slice(0, -1).join(', ')} and ${facts[facts.length - 1]!}`;
}

/**
 * The scripted agent's reply to a prompt. Deterministic: the same prompt gives the same reply.
 * @example
 * scriptedReply([{ role: 'system', content: 'Relevant memories:\n- I live in Porto' }, { role: 'user', content: 'Where do I live?' }])
 * // 'I remember that you live in Porto.'
 */
export function scriptedReply(messages: readonly ChatTurn[]): string {
  const users = messages.filter((m) => m.role === 'user');
  const last = users[users.length - 1]?.content.trim() ?? '';
  // Earlier questions are stored too (the assistant stores every user message); they are not facts.
  const facts = recalledFrom(messages).filter((m) => !isQuestion(m) && m.trim() !== last);
  if (GREETING.test(last)) {
    return facts.length > 0
      ? `Hello again! I remember that ${secondPerson(facts[0]!)}.`
      : 'Hello! Tell me something about yourself, then ask me about it later. Everything I remember stays on this device.';
  }
  if (isQuestion(last)) {
    if (facts.length === 0) return "I don't know that yet. Tell me, and I'll remember it.";
    return `I remember that ${joinFacts(facts.slice(0, 2).map(secondPerson))}.`;
  }
  const followUp = FOLLOW_UPS[users.length % FOLLOW_UPS.length]!;
  const related = facts.length > 0 ? ` I also remember that ${secondPerson(facts[0]!)}.` : '';
  return `Got it: ${secondPerson(last)}.${related} ${followUp}`;
}

/** The scripted agent as a model for `engram.assistant({ model })`. */
export function scriptedAgent(messages: ChatTurn[]): Promise<string> {
  return Promise.resolve(scriptedReply(messages));
}
