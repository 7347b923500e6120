/**
 * The Assistant's loop for the AI SDK: `begin()` stores the user's message,
 * recalls the relevant memories and hands back the prompt as the SDK's
 * `ModelMessage`s; the app calls `generateText` or `streamText` with them; `end()`
 * stores the reply (with the tool calls of every step) and what the turn taught.
 */
import type { ModelMessage } from 'ai';
import {
  beginTurn,
  endTurn,
  turnScope,
  turnSettings,
  type BegunTurn,
  type ToolUse,
  type TurnMemoryOptions,
  type TurnSettings,
  type TurnTimings,
} from '../agent/turn-memory.js';
import type { AddResult } from '../engine/memories/memories.js';
import type { Engram } from '../engram.js';
import { ClosedError } from '../errors.js';
import type { ChatTurn } from '../llm/chat-model.js';
import type { SearchResult } from '../memory/long-term.js';
import { memoryTools, type MemoryToolSet } from './memory-tools.js';

/** One part of a finished step, as the AI SDK reports it (only what a turn keeps is named). */
export interface FinishedPart {
  type: string;
  toolName?: string;
  input?: unknown;
  output?: unknown;
  error?: unknown;
}

/** What `end()` reads: a `generateText` result, or the event `streamText` hands to `onFinish`. */
export interface FinishedGeneration {
  text: string;
  steps?: readonly { readonly content: readonly FinishedPart[] }[];
}

/** What one turn did. */
export interface MemoryTurnReport {
  /** The reply as stored ('(no reply)' for an empty one). */
  reply: string;
  stored: AddResult[];
  /** Every memory tool (or other tool) the model called, with its answer ("Error: …" for a tool error). */
  toolUses: ToolUse[];
  timings: TurnTimings;
}

/** A turn under way: the prompt for the model, and `end` for its result. */
export interface MemoryTurn {
  /** System message, core memory, recalled memories, the conversation that fits; the user's message last. */
  readonly messages: ModelMessage[];
  readonly recalledMemories: SearchResult[];
  /** The context block given to the model ('' when nothing was relevant). */
  readonly recalled: string;
  /**
   * Stores the reply and what the turn taught, from `generateText`'s result. Once
   * per turn: a later call answers with the first call's report.
   */
  readonly end: (result: FinishedGeneration) => Promise<MemoryTurnReport>;
  /** `end` as `streamText`'s callback: `streamText({ …, onFinish: turn.onFinish })`; `await turn.end(…)` then gives its report. */
  readonly onFinish: (event: FinishedGeneration) => Promise<void>;
}

/** The prompt in the AI SDK's message types. A tool message has no call to answer in engram's thread (only the turns' final replies are stored there), so it is left out. */
function toModelMessages(turns: readonly ChatTurn[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const t of turns) {
    if (t.role === 'system') out.push({ role: 'system', content: t.content });
    else if (t.role === 'user') out.push({ role: 'user', content: t.content });
    else if (t.role === 'assistant') out.push({ role: 'assistant', content: t.content });
  }
  return out;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.message;
  // JSON.stringify answers undefined for undefined and functions, though typed string.
  const json = JSON.stringify(value) as string | undefined;
  return json ?? String(value);
}

/** The tool calls of every step, in order, with what each answered. */
function toolUsesOf(result: FinishedGeneration): ToolUse[] {
  const uses: ToolUse[] = [];
  for (const step of result.steps ?? []) {
    for (const part of step.content) {
      if (part.type === 'tool-result')
        uses.push({
          name: part.toolName ?? '',
          arguments: JSON.stringify(part.input ?? null),
          result: describe(part.output),
        });
      else if (part.type === 'tool-error')
        uses.push({
          name: part.toolName ?? '',
          arguments: JSON.stringify(part.input ?? null),
          result: `Error: ${describe(part.error)}`,
        });
    }
  }
  return uses;
}

/**
 * A conversation thread with memory, for the AI SDK's `generateText` and `streamText`.
 * @example
 * const chat = new MemoryChat(engram, { threadId: 't1', userId: 'ana' })
 * const turn = await chat.begin('Where do I live?')
 * const result = await generateText({ model, messages: turn.messages, tools: chat.tools(), stopWhen: stepCountIs(5) })
 * await turn.end(result)
 */
export class MemoryChat {
  readonly #engram: Engram;
  readonly #settings: TurnSettings;

  /** Binds a thread to an open engram; options are checked here. */
  constructor(engram: Engram, options: TurnMemoryOptions) {
    if (engram.closed) throw new ClosedError();
    this.#engram = engram;
    this.#settings = turnSettings(options);
  }

  /**
   * The memory tools in this chat's scope (its agent and user), for `generateText({ tools })`.
   * The tools always act for an agent (AgentTools' default is 'agent'): give the chat an
   * `agentId` so that what the turns store and what the tools recall are the same memories.
   */
  tools(): MemoryToolSet {
    return memoryTools(this.#engram, turnScope(this.#settings));
  }

  /** Recalls what is relevant to the user's `text` and builds the prompt; `end()` stores the text with the reply (nothing is stored for a turn that never ends). */
  async begin(text: string, options: { signal?: AbortSignal } = {}): Promise<MemoryTurn> {
    const begun: BegunTurn = await beginTurn(this.#engram, this.#settings, text);
    const modelStartedAt = performance.now();
    let ended: Promise<MemoryTurnReport> | undefined;
    const end = (result: FinishedGeneration): Promise<MemoryTurnReport> => {
      // One turn, one reply: a second call gets the first one's report.
      ended ??= this.#end(text, begun, performance.now() - modelStartedAt, result, options.signal);
      return ended;
    };
    const onFinish = async (event: FinishedGeneration): Promise<void> => {
      await end(event);
    };
    return {
      messages: toModelMessages(begun.messages),
      recalledMemories: begun.recalledMemories,
      recalled: begun.recalled,
      end,
      onFinish,
    };
  }

  async #end(
    text: string,
    begun: BegunTurn,
    modelMs: number,
    result: FinishedGeneration,
    signal: AbortSignal | undefined,
  ): Promise<MemoryTurnReport> {
    const toolUses = toolUsesOf(result);
    const reply: unknown = result.text;
    const ended = await endTurn(this.#engram, this.#settings, {
      text,
      reply: typeof reply === 'string' ? reply : '',
      begun,
      modelMs,
      toolUses,
      ...(signal === undefined ? {} : { signal }),
    });
    return { reply: ended.reply, stored: ended.stored, toolUses, timings: ended.timings };
  }
}
