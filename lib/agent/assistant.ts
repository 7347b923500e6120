/**
 * Developer-controlled memory around any chat model: one `send()` stores the
 * user's message, recalls relevant memories, builds the prompt (system message,
 * core memory, recalled memories, the conversation that fits), calls the model,
 * stores the reply and records the turn. With `tools`, the model may also call
 * the memory tools itself (hybrid control).
 */
import { ClosedError, ValidationError } from '../errors.js';
import { AgentTools } from './tools.js';
import type { Engram } from '../engram.js';
import { toChatModel, type ChatModel, type ChatTurn, type LlmOption } from '../llm/chat-model.js';
import { optionalId, requireId, requireInt, requireOptions } from '../util/validate.js';
import type { AddResult } from '../engine/memories.js';
import type { SearchResult } from '../memory/long-term.js';
import { DEFAULT_MIN_SIMILARITY, formatContext } from '../memory/persistent.js';

/** Options of {@link Engram.assistant}. */
export interface AssistantOptions {
  threadId: string;
  agentId?: string;
  userId?: string;
  /** The model: an OpenAI-compatible endpoint or an async function. */
  model: LlmOption;
  /** @default 'You are a helpful assistant with long-term memory.' */
  systemPrompt?: string;
  /** Memories recalled per turn. @default 5 */
  recallLimit?: number;
  /** Minimum relevance (search score, in [0, 1]) of a recalled memory. @default 0.35 (DEFAULT_MIN_SIMILARITY) */
  minSimilarity?: number;
  /** Token budget of the conversation part of the prompt. @default 3000 */
  maxTokens?: number;
  /** Offer the memory tools to the model as well (hybrid control). @default false */
  tools?: boolean;
  /**
   * What each turn stores as long-term memory: `'statements'` the user's message
   * unless it is a question (ends with "?"), `'all'` every user message, `'infer'`
   * the facts extracted by the engram's `llm` option (mem0-style; falls back to the
   * raw messages when the model fails), `'none'` nothing.
   * @default 'statements'
   */
  remember?: 'statements' | 'all' | 'infer' | 'none';
}

/** A tool the model called during a turn. */
export interface ToolUse {
  name: string;
  arguments: string;
  result: string;
}

/** What one turn did, step by step. */
export interface TurnReport {
  reply: string;
  recalledMemories: SearchResult[];
  /** The context block given to the model ('' when nothing was relevant). */
  recalled: string;
  stored: AddResult[];
  toolUses: ToolUse[];
  timings: { recallMs: number; modelMs: number; storeMs: number; totalMs: number };
}

const MAX_TOOL_ROUNDS = 4;

/**
 * A chat turn runner with memory.
 * @example
 * const bot = new Assistant(engram, { threadId: 't1', userId: 'ana', model: async (msgs) => callMyModel(msgs) })
 * const { reply, recalledMemories, timings } = await bot.send('Where do I live?')
 */
export class Assistant {
  readonly #engram: Engram;
  readonly #model: ChatModel;
  readonly #settings: Required<Omit<AssistantOptions, 'agentId' | 'userId' | 'model'>> & { agentId?: string; userId?: string };

  /** Binds a thread and a model to an open engram; options are checked here. */
  constructor(engram: Engram, options: AssistantOptions) {
    if (engram.closed) throw new ClosedError();
    requireOptions('options', options, ['threadId', 'agentId', 'userId', 'model', 'systemPrompt', 'recallLimit', 'minSimilarity', 'maxTokens', 'tools', 'remember']);
    const remember: unknown = options.remember ?? 'statements';
    if (remember !== 'statements' && remember !== 'all' && remember !== 'infer' && remember !== 'none') {
      throw new ValidationError('options.remember', "must be 'statements', 'all', 'infer' or 'none'");
    }
    const model: unknown = options.model;
    if (model === undefined || model === null) throw new ValidationError('options.model', 'is required');
    this.#engram = engram;
    this.#model = toChatModel(options.model);
    const agentId = optionalId('options.agentId', options.agentId);
    const userId = optionalId('options.userId', options.userId);
    this.#settings = {
      threadId: requireId('options.threadId', options.threadId),
      systemPrompt: options.systemPrompt ?? 'You are a helpful assistant with long-term memory.',
      recallLimit: options.recallLimit === undefined ? 5 : requireInt('options.recallLimit', options.recallLimit, 1, 100),
      minSimilarity: options.minSimilarity ?? DEFAULT_MIN_SIMILARITY,
      maxTokens: options.maxTokens === undefined ? 3000 : requireInt('options.maxTokens', options.maxTokens, 100),
      tools: options.tools ?? false,
      remember,
      ...(agentId === undefined ? {} : { agentId }),
      ...(userId === undefined ? {} : { userId }),
    };
  }

  /** Runs one turn for the user's `text`. */
  async send(text: string, options: { signal?: AbortSignal } = {}): Promise<TurnReport> {
    const t0 = performance.now();
    const scope = { ...(this.#settings.agentId === undefined ? {} : { agentId: this.#settings.agentId }), ...(this.#settings.userId === undefined ? {} : { userId: this.#settings.userId }) };
    const chat = this.#engram.conversation(this.#settings.threadId, { ...scope, allowDuplicates: true });
    const existing = await chat.getMessages({ limit: 1 });
    if (existing.length === 0) await chat.add({ role: 'system', content: this.#settings.systemPrompt });
    await chat.add({ role: 'user', content: text });

    const tRecall = performance.now();
    const { results: recalledMemories } = await this.#engram.search(text, { ...scope, limit: this.#settings.recallLimit, threshold: this.#settings.minSimilarity });
    const recalled = formatContext(recalledMemories);
    const recallMs = performance.now() - tRecall;

    const window = await chat.contextWindow({ maxTokens: this.#settings.maxTokens });
    const messages: ChatTurn[] = window.messages.map((m) => ({ role: m.role, content: m.content }));
    if (recalled !== '') messages.splice(messages[0]?.role === 'system' ? 1 : 0, 0, { role: 'system', content: recalled });

    const tModel = performance.now();
    const toolUses: ToolUse[] = [];
    const tools = this.#settings.tools ? new AgentTools(this.#engram, { ...(this.#settings.agentId === undefined ? {} : { agentId: this.#settings.agentId }), ...(this.#settings.userId === undefined ? {} : { userId: this.#settings.userId }) }) : undefined;
    let reply = await this.#model(messages, { ...(tools === undefined ? {} : { tools: tools.openai() }), ...(options.signal === undefined ? {} : { signal: options.signal }) });
    for (let round = 0; tools !== undefined && reply.toolCalls !== undefined && reply.toolCalls.length > 0 && round < MAX_TOOL_ROUNDS; round++) {
      messages.push({ role: 'assistant', content: reply.content, toolCalls: reply.toolCalls });
      for (const call of reply.toolCalls) {
        const result = await tools.call(call.name, call.arguments);
        toolUses.push({ name: call.name, arguments: call.arguments, result });
        messages.push({ role: 'tool', content: result, toolCallId: call.id });
      }
      reply = await this.#model(messages, { tools: tools.openai(), ...(options.signal === undefined ? {} : { signal: options.signal }) });
    }
    const modelMs = performance.now() - tModel;

    const tStore = performance.now();
    const answer = reply.content.trim() === '' ? '(no reply)' : reply.content;
    const stored = await this.#remember(text, answer, scope, options.signal);
    const storeMs = performance.now() - tStore;
    const timings = { recallMs, modelMs, storeMs, totalMs: performance.now() - t0 };
    // The reply carries what its turn did, so a UI can show it again after a reload.
    const turn = {
      recalled: recalledMemories.map((m) => ({ id: m.id, memory: m.memory, score: m.score, ...(m.similarity === undefined ? {} : { similarity: m.similarity }) })),
      stored: stored.map((m) => ({ id: m.id, memory: m.memory, event: m.event })),
      toolUses: toolUses.map((u) => ({ name: u.name, arguments: u.arguments, result: u.result })),
      timings,
    };
    await chat.add({ role: 'assistant', content: answer, metadata: { turn } });
    return { reply: answer, recalledMemories, recalled, stored, toolUses, timings };
  }

  async #remember(text: string, answer: string, scope: { agentId?: string; userId?: string }, signal: AbortSignal | undefined): Promise<AddResult[]> {
    const metadata = { source: 'chat', threadId: this.#settings.threadId };
    const extra = signal === undefined ? {} : { signal };
    switch (this.#settings.remember) {
      case 'none':
        return [];
      case 'statements':
        if (text.trim().endsWith('?')) return [];
        return (await this.#engram.add([{ role: 'user', content: text }], { ...scope, metadata, ...extra })).results;
      case 'all':
        return (await this.#engram.add([{ role: 'user', content: text }], { ...scope, metadata, ...extra })).results;
      case 'infer':
        return (await this.#engram.add([{ role: 'user', content: text }, { role: 'assistant', content: answer }], { ...scope, metadata, infer: true, ...extra })).results;
    }
  }
}
