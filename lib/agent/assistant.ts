/**
 * Developer-controlled memory around any chat model: one `send()` stores the
 * user's message, recalls relevant memories, builds the prompt (system message,
 * core memory, recalled memories, the conversation that fits), calls the model,
 * stores the reply and records the turn. With `tools`, the model may also call
 * the memory tools itself (hybrid control).
 */
import { ClosedError } from '../errors.js';
import { AgentTools } from './tools.js';
import type { Engram } from '../engram.js';
import { toChatModel, type ChatModel, type ChatTurn, type LlmOption, type ToolCall } from '../llm/chat-model.js';
import { boolean, checkOptions, present, withDefault, type OptionsSpec } from '../util/options.js';
import type { AddResult } from '../engine/memories/memories.js';
import type { SearchResult } from '../memory/long-term.js';
import {
  beginTurn,
  endTurn,
  settingsOf,
  TURN_MEMORY_SPEC,
  turnScope,
  type ToolUse,
  type TurnMemoryOptions,
  type TurnSettings,
  type TurnTimings,
} from './turn-memory.js';

export type { ToolUse } from './turn-memory.js';

/** Options of {@link Engram.assistant}: where the turns' memory lives (see {@link TurnMemoryOptions}), the model, and the tools. */
export interface AssistantOptions extends TurnMemoryOptions {
  /** The model: an OpenAI-compatible endpoint or an async function. */
  model: LlmOption;
  /** Offer the memory tools to the model as well (hybrid control). @default false */
  tools?: boolean;
}

/** The checks of {@link AssistantOptions}; the model's own shape is checked by toChatModel. */
const ASSISTANT_OPTIONS_SPEC = {
  ...TURN_MEMORY_SPEC,
  model: present<LlmOption>(),
  tools: withDefault(boolean, false),
} satisfies OptionsSpec<AssistantOptions>;

/** Options of {@link Assistant.send}. */
export interface SendOptions {
  /** Aborts the turn (AbortError); nothing of it is stored. */
  signal?: AbortSignal;
  /** Called with each piece of the reply's text as the model streams it (see `ChatCallOptions.onDelta`). */
  onDelta?: (text: string) => void;
}

/** What one turn did, step by step. */
export interface TurnReport {
  reply: string;
  recalledMemories: SearchResult[];
  /** The context block given to the model ('' when nothing was relevant). */
  recalled: string;
  stored: AddResult[];
  toolUses: ToolUse[];
  timings: TurnTimings;
}

const MAX_TOOL_ROUNDS = 4;

/**
 * Most tool calls of one model reply that a turn runs. Each call may embed,
 * search or write, so a reply asking for hundreds would hold the store; the
 * calls past this get, as their result, an error text the model reads (and may
 * call them again in its next reply), and they show in `toolUses` with it.
 */
export const MAX_TOOL_CALLS_PER_ROUND = 8;

/** The result of a tool call past {@link MAX_TOOL_CALLS_PER_ROUND}: not run. */
function notRun(name: string, calls: number): string {
  return `Error: ${name}: not run: one reply may call at most ${MAX_TOOL_CALLS_PER_ROUND} tools and this one called ${calls}; call it again in your next reply if it is still needed.`;
}

/** Runs one reply's tool calls in order (those past the cap are not run), each noted in `toolUses` and answered in `messages`. */
async function runToolCalls(
  tools: AgentTools,
  calls: readonly ToolCall[],
  turn: { messages: ChatTurn[]; toolUses: ToolUse[] },
): Promise<void> {
  for (const [i, call] of calls.entries()) {
    const result =
      i < MAX_TOOL_CALLS_PER_ROUND ? await tools.call(call.name, call.arguments) : notRun(call.name, calls.length);
    turn.toolUses.push({ name: call.name, arguments: call.arguments, result });
    turn.messages.push({ role: 'tool', content: result, toolCallId: call.id });
  }
}

/**
 * A chat turn runner with memory.
 * @example
 * const bot = new Assistant(engram, { threadId: 't1', userId: 'ana', model: async (msgs) => callMyModel(msgs) })
 * const { reply, recalledMemories, timings } = await bot.send('Where do I live?')
 */
export class Assistant {
  readonly #engram: Engram;
  readonly #model: ChatModel;
  readonly #settings: TurnSettings;
  readonly #tools: boolean;

  /** Binds a thread and a model to an open engram; options are checked here. */
  constructor(engram: Engram, options: AssistantOptions) {
    if (engram.closed) throw new ClosedError();
    const { model, tools, ...turn } = checkOptions('options', options, ASSISTANT_OPTIONS_SPEC);
    this.#settings = settingsOf(turn);
    this.#engram = engram;
    this.#model = toChatModel(model);
    this.#tools = tools;
  }

  /**
   * Runs one turn for the user's `text`. The user's message and the reply are
   * stored only once the model has answered: a turn that fails (the model
   * unreachable, stalled, malformed, or `signal` aborted) stores nothing.
   * `onDelta` gets the reply's text as the model streams it.
   */
  async send(text: string, options: SendOptions = {}): Promise<TurnReport> {
    const begun = await beginTurn(this.#engram, this.#settings, text);
    const { messages, recalledMemories, recalled } = begun;

    const tModel = performance.now();
    const toolUses: ToolUse[] = [];
    const tools = this.#tools ? new AgentTools(this.#engram, turnScope(this.#settings)) : undefined;
    const call = {
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.onDelta === undefined ? {} : { onDelta: options.onDelta }),
    };
    let reply = await this.#model(messages, { ...(tools === undefined ? {} : { tools: tools.openai() }), ...call });
    for (
      let round = 0;
      tools !== undefined && reply.toolCalls !== undefined && reply.toolCalls.length > 0 && round < MAX_TOOL_ROUNDS;
      round++
    ) {
      messages.push({ role: 'assistant', content: reply.content, toolCalls: reply.toolCalls });
      await runToolCalls(tools, reply.toolCalls, { messages, toolUses });
      reply = await this.#model(messages, { tools: tools.openai(), ...call });
    }
    const modelMs = performance.now() - tModel;

    const {
      reply: answer,
      stored,
      timings,
    } = await endTurn(this.#engram, this.#settings, {
      text,
      reply: reply.content,
      begun,
      modelMs,
      toolUses,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return { reply: answer, recalledMemories, recalled, stored, toolUses, timings };
  }
}
