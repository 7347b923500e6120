/**
 * A conversation thread of engram as LangChain's chat message history: what
 * `RunnableWithMessageHistory` (or any memory class) reads and appends. Messages
 * are engram's messages, so they are searchable (recall), count in the context
 * window, and are forgotten with the thread's scope.
 */
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { Engram } from '../engram.js';
import type { Message } from '../engine/conversation/messages.js';
import type { Conversation } from '../memory/conversation.js';
import type { MessageInput } from '../memory/message-input.js';
import type { Json, Metadata } from '../store/rows.js';
import { ClosedError, ValidationError } from '../errors.js';
import { checkOptions, definedOnly, id, optional, type OptionsSpec } from '../util/options.js';

/** Options of {@link EngramChatMessageHistory}. */
export interface EngramChatMessageHistoryOptions {
  /** The thread. */
  threadId: string;
  agentId?: string;
  userId?: string;
}

/** The checks of {@link EngramChatMessageHistoryOptions}. */
const HISTORY_OPTIONS_SPEC = {
  threadId: id,
  agentId: optional(id),
  userId: optional(id),
} satisfies OptionsSpec<EngramChatMessageHistoryOptions>;

/** Where an AI message's tool calls ride along (engram's messages have no field of their own for them). */
const TOOL_CALLS_KEY = 'langchainToolCalls';
/**
 * Marks an AI message that only called tools: engram keeps no empty message, so its
 * text in the thread names the calls (readable, searchable) and reads back as ''.
 */
const NO_TEXT_KEY = 'langchainNoText';

/** A message's content as text: a string, or the text parts of a list (anything else is refused). */
function textOf(message: BaseMessage, field: string): string {
  const content: unknown = message.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content))
    throw new ValidationError(`${field}.content`, 'must be a string or a list of text parts');
  return content
    .map((part: unknown, i) => {
      if (typeof part === 'string') return part;
      const p = part as { type?: unknown; text?: unknown };
      if (p.type === 'text' && typeof p.text === 'string') return p.text;
      throw new ValidationError(`${field}.content[${i}]`, 'only text parts are stored');
    })
    .join('');
}

function toInput(message: BaseMessage, field: string): MessageInput {
  const content = textOf(message, field);
  const name = message.name === undefined || message.name === '' ? {} : { name: message.name };
  if (AIMessage.isInstance(message)) return assistantInput(message, content, name);
  if (ToolMessage.isInstance(message)) return { role: 'tool', content, ...name, toolCallId: message.tool_call_id };
  const type: string = message.type;
  if (type === 'human') return { role: 'user', content, ...name };
  if (type === 'system') return { role: 'system', content, ...name };
  throw new ValidationError(field, `a ${type} message has no engram role (human, ai, system or tool)`);
}

/**
 * An AI message as an assistant message: its tool calls kept in metadata, and a reply of calls
 * only given a text naming them (marked, so it reads back without text).
 */
function assistantInput(message: AIMessage, content: string, name: { name?: string }): MessageInput {
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) return { role: 'assistant', content, ...name };
  const metadata: Metadata = {
    [TOOL_CALLS_KEY]: calls.map((c) => ({
      name: c.name,
      args: c.args as Json,
      ...(c.id === undefined ? {} : { id: c.id }),
    })),
  };
  if (content.trim() !== '') return { role: 'assistant', content, ...name, metadata };
  return {
    role: 'assistant',
    content: `(called ${calls.map((c) => c.name).join(', ')})`,
    ...name,
    metadata: { ...metadata, [NO_TEXT_KEY]: true },
  };
}

function toolCallsOf(m: Message): { name: string; args: Record<string, unknown>; id?: string; type: 'tool_call' }[] {
  const stored = m.metadata?.[TOOL_CALLS_KEY];
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((c) => {
    if (typeof c !== 'object' || c === null || Array.isArray(c)) return [];
    const { name, args, id } = c;
    if (typeof name !== 'string' || typeof args !== 'object' || args === null || Array.isArray(args)) return [];
    return [{ name, args, ...(typeof id === 'string' ? { id } : {}), type: 'tool_call' as const }];
  });
}

function toMessage(m: Message): BaseMessage {
  const common = { content: m.content, id: m.id, ...(m.name === undefined ? {} : { name: m.name }) };
  switch (m.role) {
    case 'user':
      return new HumanMessage(common);
    case 'system':
      return new SystemMessage(common);
    case 'assistant':
      return new AIMessage({
        ...common,
        ...(m.metadata?.[NO_TEXT_KEY] === true ? { content: '' } : {}),
        tool_calls: toolCallsOf(m),
      });
    case 'tool':
      return new ToolMessage({ ...common, tool_call_id: m.toolCallId ?? '' });
  }
}

/**
 * A LangChain chat message history over one engram thread.
 * @example
 * const history = new EngramChatMessageHistory(engram, { threadId: 't1', userId: 'ana' })
 * await history.addMessages([new HumanMessage('Hi, I am Ana'), new AIMessage('Hello Ana!')])
 * await history.getMessages() // [HumanMessage, AIMessage]
 */
export class EngramChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['engram', 'langchain', 'chat_history'];
  readonly #chat: Conversation;

  /** Binds the history to an open engram and a thread; options are checked here. */
  constructor(engram: Engram, options: EngramChatMessageHistoryOptions) {
    if (engram.closed) throw new ClosedError();
    const { threadId, ...scope } = checkOptions('options', options, HISTORY_OPTIONS_SPEC);
    super();
    // A chat repeats itself ("yes", "thanks"): every message is kept, as LangChain expects.
    this.#chat = engram.conversation(threadId, { ...definedOnly(scope), allowDuplicates: true });
  }

  /** The thread's messages in its context (oldest first), as LangChain messages with engram's ids. */
  async getMessages(): Promise<BaseMessage[]> {
    return (await this.#chat.getMessages()).map(toMessage);
  }

  /** Appends one message: human, ai (with its tool calls), system or tool; text content only. */
  async addMessage(message: BaseMessage): Promise<void> {
    await this.#chat.add(toInput(message, 'message'));
  }

  /** Appends several messages in one write. */
  override async addMessages(messages: BaseMessage[]): Promise<void> {
    if (!Array.isArray(messages)) throw new ValidationError('messages', 'must be an array of messages');
    await this.#chat.add(messages.map((m, i) => toInput(m, `messages[${i}]`)));
  }

  /** Deletes the thread's messages (forgotten: no table keeps their text). */
  override async clear(): Promise<void> {
    await this.#chat.clear();
  }
}
