/**
 * mem0-style fact extraction: one call turns a conversation into facts, a
 * second decides, against the most similar stored memories, whether each fact
 * is new (ADD), corrects a memory (UPDATE), contradicts it away (DELETE) or is
 * already known (NONE). Answers are parsed strictly; anything malformed is an
 * LlmError, so the caller can fall back to storing the raw input.
 */
import { LlmError } from '../errors.js';
import { isPlainObject } from '../util/validate.js';
import type { ChatModel, ChatTurn } from './chat-model.js';

const FACTS_PROMPT = `You extract durable facts from a conversation for an assistant's long-term memory.
Keep personal details, preferences, plans, relationships, decisions and corrections. Skip greetings and small talk.
Write each fact as one short, self-contained sentence in the third person (e.g. "Lives in Porto").
Answer with JSON only, exactly: {"facts": ["...", "..."]}. Answer {"facts": []} when nothing is worth keeping.`;

const DECIDE_PROMPT = `You maintain an assistant's long-term memory. You get the existing memories (each with an id) and new facts.
For each new fact decide:
- ADD: new information; give it id "new".
- UPDATE: it refines or corrects an existing memory; keep that memory's id, give the merged text and the old text as old_memory.
- DELETE: it makes an existing memory false and nothing should replace it; keep that memory's id.
- NONE: already known; keep that memory's id.
Answer with JSON only, exactly: {"memory": [{"id": "...", "text": "...", "event": "ADD|UPDATE|DELETE|NONE", "old_memory": "..."}]}.`;

/** One decision of the model about one fact. */
export interface MemoryDecision {
  event: 'ADD' | 'UPDATE' | 'DELETE' | 'NONE';
  text: string;
  /** Index into the existing memories shown (UPDATE, DELETE, NONE). */
  target?: number;
}

/** The first JSON object in a model answer (code fences and prose around it are ignored). */
export function parseJsonObject(text: string): Record<string, unknown> {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start)
    throw new LlmError(`the model did not answer with a JSON object: ${text.slice(0, 120)}`);
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end + 1));
  } catch (e) {
    throw new LlmError(`the model's JSON is malformed: ${text.slice(0, 120)}`, { cause: e });
  }
  if (!isPlainObject(value)) throw new LlmError('the model did not answer with a JSON object');
  return value;
}

/** Asks the model for the facts in a conversation. */
export async function extractFacts(
  model: ChatModel,
  conversation: readonly { role: string; content: string }[],
  signal?: AbortSignal,
): Promise<string[]> {
  const transcript = conversation.map((m) => `${m.role}: ${m.content}`).join('\n');
  const messages: ChatTurn[] = [
    { role: 'system', content: FACTS_PROMPT },
    { role: 'user', content: `Conversation:\n${transcript}` },
  ];
  const reply = await model(messages, { json: true, ...(signal === undefined ? {} : { signal }) });
  const facts = parseJsonObject(reply.content)['facts'];
  if (!Array.isArray(facts) || !facts.every((f) => typeof f === 'string'))
    throw new LlmError('"facts" must be an array of strings');
  return [...new Set(facts.map((f) => f.trim()).filter((f) => f !== ''))];
}

/** Asks the model what to do with each fact given the existing memories. */
export async function decideUpdates(
  model: ChatModel,
  existing: readonly string[],
  facts: readonly string[],
  signal?: AbortSignal,
): Promise<MemoryDecision[]> {
  const shown = existing.map((text, i) => ({ id: String(i), text }));
  const messages: ChatTurn[] = [
    { role: 'system', content: DECIDE_PROMPT },
    { role: 'user', content: `Existing memories:\n${JSON.stringify(shown)}\n\nNew facts:\n${JSON.stringify(facts)}` },
  ];
  const reply = await model(messages, { json: true, ...(signal === undefined ? {} : { signal }) });
  const list = parseJsonObject(reply.content)['memory'];
  if (!Array.isArray(list)) throw new LlmError('"memory" must be an array');
  return list.map((item: unknown, i) => decisionOf(item, i, existing.length));
}

/** The model's `i`-th decision checked: its event, its text, and (but for ADD) which of the `shown` memories it targets. */
function decisionOf(item: unknown, i: number, shown: number): MemoryDecision {
  if (!isPlainObject(item)) throw new LlmError(`memory[${i}] must be an object`);
  const event = item['event'];
  const text = item['text'];
  if (event !== 'ADD' && event !== 'UPDATE' && event !== 'DELETE' && event !== 'NONE')
    throw new LlmError(`memory[${i}].event must be ADD, UPDATE, DELETE or NONE`);
  if (typeof text !== 'string' || (text.trim() === '' && (event === 'ADD' || event === 'UPDATE')))
    throw new LlmError(`memory[${i}].text must be text`);
  if (event === 'ADD') return { event, text: text.trim() };
  const id = item['id'];
  const target = typeof id === 'string' || typeof id === 'number' ? Number(id) : Number.NaN;
  if (!Number.isInteger(target) || target < 0 || target >= shown)
    throw new LlmError(`memory[${i}].id ${JSON.stringify(id)} is not one of the memories shown`);
  return { event, text: text.trim(), target };
}
