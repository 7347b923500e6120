/**
 * The memory work around one chat turn, whoever calls the model: before it, the
 * relevant memories are recalled and the prompt is built (system message, core
 * memory, recalled memories, the conversation that fits, the user's message);
 * after it, what the turn taught becomes long-term memory and the user's message
 * and the reply are stored together, with what the turn did. Nothing is stored
 * before the model has answered, so a turn whose model fails, stalls or is
 * aborted leaves the thread as it was and can simply be sent again. `Assistant` runs it around its own model;
 * `engram/ai-sdk` runs it around the AI SDK's `generateText`/`streamText`.
 * Built on the public Engram only.
 */
import { ValidationError } from '../errors.js';
import type { Engram } from '../engram.js';
import type { AddResult } from '../engine/memories/memories.js';
import type { ChatTurn } from '../llm/chat-model.js';
import type { Conversation } from '../memory/conversation.js';
import type { SearchResult } from '../memory/long-term.js';
import { estimateTokens, type ContextMessage } from '../memory/context-window.js';
import { formatContext } from '../memory/persistent.js';
import { retrievalProfile } from '../search/retrieval-profile.js';
import {
  checkOptions,
  definedOnly,
  finiteNumber,
  id,
  int,
  oneOf,
  optional,
  string,
  withDefault,
  type Checked,
  type OptionsSpec,
} from '../util/options.js';

/** What a turn may store as long-term memory (see {@link TurnMemoryOptions.remember}). */
export const REMEMBER_MODES = ['statements', 'all', 'infer', 'none'] as const;

/** Where a turn's memory lives and how it is used. */
export interface TurnMemoryOptions {
  /** The conversation thread the turn's messages go to. */
  threadId: string;
  agentId?: string;
  userId?: string;
  /** @default 'You are a helpful assistant with long-term memory.' */
  systemPrompt?: string;
  /** Memories recalled per turn. @default 5 */
  recallLimit?: number;
  /**
   * Minimum relevance (search score, in [0, 1]) of a recalled memory, which also needs the model's
   * evidence (hasEvidence, lib/search/retrieval-profile.ts). @default the embedding model's `minRelevance`
   */
  minSimilarity?: number;
  /** Token budget of the conversation part of the prompt. @default 3000 */
  maxTokens?: number;
  /**
   * What each turn stores as long-term memory: `'statements'` the user's message
   * unless it is a question (ends with "?"), `'all'` every user message, `'infer'`
   * the facts extracted by the engram's `llm` option (mem0-style; falls back to the
   * raw messages when the model fails), `'none'` nothing.
   * @default 'statements'
   */
  remember?: (typeof REMEMBER_MODES)[number];
}

/** The checks of {@link TurnMemoryOptions} with their defaults, for the door checks of those who take them. */
export const TURN_MEMORY_SPEC = {
  threadId: id,
  agentId: optional(id),
  userId: optional(id),
  systemPrompt: withDefault(string, 'You are a helpful assistant with long-term memory.'),
  recallLimit: withDefault(int(1, 100), 5),
  minSimilarity: optional(finiteNumber),
  maxTokens: withDefault(int(100), 3000),
  remember: withDefault(oneOf(REMEMBER_MODES), 'statements'),
} satisfies OptionsSpec<TurnMemoryOptions>;

/** {@link TurnMemoryOptions} checked, with their defaults. */
export type TurnSettings = Required<Omit<TurnMemoryOptions, 'agentId' | 'userId' | 'minSimilarity'>> & {
  agentId?: string;
  userId?: string;
  minSimilarity?: number;
};

/** A tool the model called during a turn. */
export interface ToolUse {
  name: string;
  arguments: string;
  result: string;
}

/** Where a turn's time went. */
export interface TurnTimings {
  recallMs: number;
  modelMs: number;
  storeMs: number;
  totalMs: number;
}

/** What {@link beginTurn} prepared for the model. */
export interface BegunTurn {
  /** The prompt: system message, core memory, recalled memories, the conversation that fits (the user's message last). */
  messages: ChatTurn[];
  recalledMemories: SearchResult[];
  /** The context block given to the model ('' when nothing was relevant). */
  recalled: string;
  /** When the turn began (performance.now()). */
  startedAt: number;
  recallMs: number;
  /** The thread had no message yet: its system message is stored with the turn. */
  newThread: boolean;
}

/** What {@link endTurn} stored. */
export interface EndedTurn {
  /** The reply as stored ('(no reply)' for an empty one). */
  reply: string;
  stored: AddResult[];
  timings: TurnTimings;
}

/** Checks the options once, at the door. */
export function turnSettings(options: unknown): TurnSettings {
  return settingsOf(checkOptions('options', options, TURN_MEMORY_SPEC));
}

/** Checked turn options as settings: the optional ones present only when given. */
export function settingsOf(checked: Checked<typeof TURN_MEMORY_SPEC>): TurnSettings {
  const { agentId, userId, minSimilarity, ...settings } = checked;
  return { ...settings, ...definedOnly({ agentId, userId, minSimilarity }) };
}

/** The agent and user part of the settings, as engram's scope options. */
export function turnScope(settings: TurnSettings): { agentId?: string; userId?: string } {
  return {
    ...(settings.agentId === undefined ? {} : { agentId: settings.agentId }),
    ...(settings.userId === undefined ? {} : { userId: settings.userId }),
  };
}

function thread(engram: Engram, settings: TurnSettings): Conversation {
  return engram.conversation(settings.threadId, { ...turnScope(settings), allowDuplicates: true });
}

/**
 * Recalls the memories relevant to the user's `text` and builds the prompt: the
 * thread as stored (within the token budget, less what the new messages take),
 * then `text` last. Stores nothing.
 */
export async function beginTurn(engram: Engram, settings: TurnSettings, text: string): Promise<BegunTurn> {
  if (typeof text !== 'string' || text.trim() === '') throw new ValidationError('text', 'must be a non-empty string');
  const startedAt = performance.now();
  const scope = turnScope(settings);
  const chat = thread(engram, settings);
  const newThread = (await chat.getMessages({ limit: 1 })).length === 0;

  const tRecall = performance.now();
  // The model's own threshold unless one was given: what a relevance is worth depends on the model.
  // Hybrid search's threshold also asks for evidence where the model's fusion is per query (hasEvidence).
  const threshold = settings.minSimilarity ?? retrievalProfile((await engram.ready()).embedderId).minRelevance;
  const { results: recalledMemories } = await engram.search(text, { ...scope, limit: settings.recallLimit, threshold });
  const recalled = formatContext(recalledMemories);
  const recallMs = performance.now() - tRecall;

  // The messages not stored yet take their share of the budget first, as when they were the thread's newest.
  const pending = estimateTokens(text) + (newThread ? estimateTokens(settings.systemPrompt) : 0);
  const window = await chat.contextWindow({ maxTokens: Math.max(1, settings.maxTokens - pending) });
  const messages = promptOf(window.messages, newThread ? settings.systemPrompt : undefined, recalled, text);
  return { messages, recalledMemories, recalled, startedAt, recallMs, newThread };
}

/**
 * The prompt: the new thread's system message, the recalled memories after the first
 * system message (or first), the stored messages that fit, then the user's `text`.
 */
function promptOf(
  stored: readonly ContextMessage[],
  systemPrompt: string | undefined,
  recalled: string,
  text: string,
): ChatTurn[] {
  const messages: ChatTurn[] = stored.map((m) => ({ role: m.role, content: m.content }));
  if (systemPrompt !== undefined) messages.unshift({ role: 'system', content: systemPrompt });
  messages.push({ role: 'user', content: text });
  if (recalled !== '')
    messages.splice(messages[0]?.role === 'system' ? 1 : 0, 0, { role: 'system', content: recalled });
  return messages;
}

/**
 * Stores what the turn taught as long-term memory (by `settings.remember`), then
 * the user's message and the reply in the thread in one write, the reply carrying
 * what its turn did so a UI can show it again after a reload.
 */
export async function endTurn(
  engram: Engram,
  settings: TurnSettings,
  turn: {
    text: string;
    reply: string;
    begun: BegunTurn;
    modelMs: number;
    toolUses: readonly ToolUse[];
    signal?: AbortSignal;
  },
): Promise<EndedTurn> {
  const tStore = performance.now();
  const answer = turn.reply.trim() === '' ? '(no reply)' : turn.reply;
  const stored = await remember(engram, settings, turn.text, answer, turn.signal);
  const storeMs = performance.now() - tStore;
  const timings = {
    recallMs: turn.begun.recallMs,
    modelMs: turn.modelMs,
    storeMs,
    totalMs: performance.now() - turn.begun.startedAt,
  };
  const record = turnRecord(turn.begun, turn.toolUses, stored, timings);
  await thread(engram, settings).add([
    ...(turn.begun.newThread ? [{ role: 'system' as const, content: settings.systemPrompt }] : []),
    { role: 'user', content: turn.text },
    { role: 'assistant', content: answer, metadata: { turn: record } },
  ]);
  return { reply: answer, stored, timings };
}

/** What the turn did, as the reply's `metadata.turn`: the memories recalled and stored, the tools used, the timings. */
function turnRecord(
  begun: BegunTurn,
  toolUses: readonly ToolUse[],
  stored: readonly AddResult[],
  timings: Readonly<Record<keyof TurnTimings, number>>,
) {
  return {
    recalled: begun.recalledMemories.map((m) => ({
      id: m.id,
      memory: m.memory,
      score: m.score,
      ...(m.similarity === undefined ? {} : { similarity: m.similarity }),
    })),
    stored: stored.map((m) => ({ id: m.id, memory: m.memory, event: m.event })),
    toolUses: toolUses.map((u) => ({ name: u.name, arguments: u.arguments, result: u.result })),
    timings,
  };
}

async function remember(
  engram: Engram,
  settings: TurnSettings,
  text: string,
  answer: string,
  signal: AbortSignal | undefined,
): Promise<AddResult[]> {
  const scope = turnScope(settings);
  const metadata = { source: 'chat', threadId: settings.threadId };
  const extra = signal === undefined ? {} : { signal };
  switch (settings.remember) {
    case 'none':
      return [];
    case 'statements':
      if (text.trim().endsWith('?')) return [];
      return (await engram.add([{ role: 'user', content: text }], { ...scope, metadata, ...extra })).results;
    case 'all':
      return (await engram.add([{ role: 'user', content: text }], { ...scope, metadata, ...extra })).results;
    case 'infer':
      return (
        await engram.add(
          [
            { role: 'user', content: text },
            { role: 'assistant', content: answer },
          ],
          { ...scope, metadata, infer: true, ...extra },
        )
      ).results;
  }
}
