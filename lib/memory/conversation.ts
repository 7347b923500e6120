/**
 * lib/memory holds the faces: each speaks one memory design's vocabulary over
 * the engine. A face never touches Dexie or WASM; it validates its arguments
 * and calls lib/engine.
 *
 * Conversation: MassGen's ConversationMemory (add, get, delete, truncate,
 * state_dict) and MemGPT's persistence manager (trim, prepend, append, swap
 * the system message) over one thread of the conversation log.
 */
import { ValidationError } from '../errors.js';
import type { EngineStore } from '../engine/engine-store.js';
import {
  addMessages,
  contextRows,
  deleteMessages,
  replaceThread,
  setInContext,
  swapSystemMessage,
  threadRows,
  toMessage,
  type Message,
  type Placement,
  type ThreadRef,
} from '../engine/conversation/messages.js';
import { validateMessage, type MessageInput } from './message-input.js';
import { searchMessagesByText } from '../engine/conversation/message-search.js';
import { ROLES, type MessageRow, type Role } from '../store/rows.js';
import { boolean, checkOptions, id, int, oneOf, optional, withDefault, type OptionsSpec } from '../util/options.js';
import { requireInt } from '../util/validate.js';
import { listBlocks } from '../engine/conversation/block-rows.js';
import { validateState, type ConversationState } from './conversation-state.js';
import { buildContextWindow, type ContextWindow } from './context-window.js';

/** Options of {@link Engram.conversation}. */
export interface ConversationOptions {
  /** Agent the thread belongs to; recorded on every message. */
  agentId?: string;
  /** User the thread belongs to; recorded on every message. */
  userId?: string;
  /**
   * Store a message even when the same role + name + content already stands in the thread.
   * @default false
   */
  allowDuplicates?: boolean;
}

/** Options of {@link Conversation.getMessages}. */
export interface GetMessagesOptions {
  /** Only messages of this role. */
  role?: Role;
  /** Only the newest `limit` messages (still returned oldest first). */
  limit?: number;
}

/** The checks of {@link ConversationOptions}. */
const CONVERSATION_OPTIONS_SPEC = {
  allowDuplicates: withDefault(boolean, false),
  agentId: optional(id),
  userId: optional(id),
} satisfies OptionsSpec<ConversationOptions>;

/** The checks of {@link GetMessagesOptions}. */
const GET_MESSAGES_OPTIONS_SPEC = {
  role: optional(oneOf(ROLES)),
  limit: optional(int(0)),
} satisfies OptionsSpec<GetMessagesOptions>;

/** Options of {@link Conversation.contextWindow}. */
export interface ContextWindowOptions {
  /** The model's context budget, in estimated tokens. */
  maxTokens: number;
}

/** The checks of {@link ContextWindowOptions}. */
const CONTEXT_WINDOW_OPTIONS_SPEC = { maxTokens: int(1) } satisfies OptionsSpec<ContextWindowOptions>;

/**
 * One thread of conversation.
 * @example
 * const chat = engram.conversation('t1')
 * await chat.add([{ role: 'system', content: 'You are helpful.' }, { role: 'user', content: 'Hi' }])
 * (await chat.getMessages()).length // 2
 */
export class Conversation {
  readonly threadId: string;
  readonly #core: EngineStore;
  readonly #thread: ThreadRef;
  readonly #allowDuplicates: boolean;

  constructor(core: EngineStore, threadId: string, options: ConversationOptions) {
    const { allowDuplicates, agentId, userId } = checkOptions('options', options, CONVERSATION_OPTIONS_SPEC);
    this.#core = core;
    this.threadId = threadId;
    this.#thread = {
      threadId,
      ...(agentId === undefined ? {} : { agentId }),
      ...(userId === undefined ? {} : { userId }),
    };
    this.#allowDuplicates = allowDuplicates;
  }

  /**
   * Adds one message or several (appended to the context window). Each gets an
   * `id` and `createdAt`. Duplicates are skipped unless allowed; the standing
   * message is returned in their place.
   */
  add(message: MessageInput): Promise<Message>;
  add(messages: readonly MessageInput[]): Promise<Message[]>;
  async add(input: MessageInput | readonly MessageInput[]): Promise<Message | Message[]> {
    this.#core.assertOpen();
    if (Array.isArray(input)) return this.#insert(input, 'append', 'messages');
    const [one] = await this.#insert([input as MessageInput], 'append', 'message');
    return one!;
  }

  /** The context window, in order, optionally by role and only the newest `limit`. */
  async getMessages(options: GetMessagesOptions = {}): Promise<Message[]> {
    this.#core.assertOpen();
    const { role, limit } = checkOptions('options', options, GET_MESSAGES_OPTIONS_SPEC);
    let rows = await contextRows(this.#core, this.threadId);
    if (role !== undefined) rows = rows.filter((r) => r.role === role);
    if (limit !== undefined) rows = limit === 0 ? [] : rows.slice(-limit);
    return rows.map(toMessage);
  }

  /**
   * Without a query, the context window. With one, every message of this thread
   * (context or trimmed) that matches it, most relevant first.
   */
  async retrieve(query?: string): Promise<Message[]> {
    this.#core.assertOpen();
    if (query === undefined) return this.getMessages();
    if (typeof query !== 'string') throw new ValidationError('query', 'must be a string');
    const { rows } = await searchMessagesByText(
      this.#core,
      query,
      { threadId: this.threadId },
      0,
      Number.MAX_SAFE_INTEGER,
    );
    return rows.map(toMessage);
  }

  /** Number of messages in the context window. */
  async size(): Promise<number> {
    this.#core.assertOpen();
    return (await contextRows(this.#core, this.threadId)).length;
  }

  /** Deletes every message of the thread, trimmed ones included. */
  async clear(): Promise<void> {
    this.#core.assertOpen();
    await replaceThread(this.#core, this.threadId, []);
  }

  /**
   * Deletes messages by their index in getMessages() or by id. All or nothing:
   * an unknown index or id deletes nothing and throws ValidationError.
   */
  async delete(target: number | string | readonly (number | string)[]): Promise<number> {
    this.#core.assertOpen();
    const targets = Array.isArray(target) ? target : [target as number | string];
    const context = await contextRows(this.#core, this.threadId);
    const ids = targets.map((t, i) => {
      if (typeof t === 'number') {
        const row = Number.isInteger(t) ? context[t] : undefined;
        if (row === undefined)
          throw new ValidationError(`indexes[${i}]`, `no message at index ${t} (the thread has ${context.length})`);
        return row.id;
      }
      if (typeof t === 'string') return t;
      throw new ValidationError(`indexes[${i}]`, 'must be an index or an id');
    });
    return deleteMessages(this.#core, this.threadId, [...new Set(ids)]);
  }

  /** Keeps the newest `n` messages of the context window and deletes the older ones. */
  async truncateToSize(n: number): Promise<number> {
    requireInt('n', n, 0);
    this.#core.assertOpen();
    const context = await contextRows(this.#core, this.threadId);
    const drop = context.slice(0, Math.max(0, context.length - n)).map((r) => r.id);
    return drop.length === 0 ? 0 : deleteMessages(this.#core, this.threadId, drop);
  }

  /** A JSON-serialisable, versioned snapshot of the whole thread. */
  async stateDict(): Promise<ConversationState> {
    this.#core.assertOpen();
    const rows = await threadRows(this.#core, this.threadId);
    return {
      version: 1,
      threadId: this.threadId,
      ...(this.#thread.agentId === undefined ? {} : { agentId: this.#thread.agentId }),
      ...(this.#thread.userId === undefined ? {} : { userId: this.#thread.userId }),
      messages: rows.map((r) => ({
        ...toMessage(r),
        position: r.position,
        inContext: r.inContext === 1,
      })),
    };
  }

  /**
   * Replaces the thread with a snapshot from stateDict(); validated first, written
   * atomically. A snapshot of another thread is copied in under fresh ids (a fork).
   */
  async loadStateDict(state: unknown): Promise<void> {
    this.#core.assertOpen();
    const rows: MessageRow[] = validateState(this.#core, this.#thread, state);
    await replaceThread(this.#core, this.threadId, rows);
  }

  /** MemGPT: the oldest `n` messages after a leading system message leave the context window (they stay searchable). */
  async trimMessages(n: number): Promise<number> {
    requireInt('n', n, 0);
    this.#core.assertOpen();
    const context = await contextRows(this.#core, this.threadId);
    const body = context[0]?.role === 'system' ? context.slice(1) : context;
    const out = body.slice(0, n);
    await setInContext(this.#core, out, 0);
    return out.length;
  }

  /** MemGPT: inserts messages at the head of the context window, after a leading system message. */
  async prependToMessages(messages: readonly MessageInput[]): Promise<Message[]> {
    this.#core.assertOpen();
    return this.#insert(messages, 'prepend', 'messages');
  }

  /** MemGPT: appends messages to the context window (the same as add). */
  async appendToMessages(messages: readonly MessageInput[]): Promise<Message[]> {
    this.#core.assertOpen();
    return this.#insert(messages, 'append', 'messages');
  }

  /** MemGPT: replaces the leading system message; the old one stays in the log. */
  async swapSystemMessage(message: MessageInput): Promise<Message> {
    this.#core.assertOpen();
    const row = validateMessage(this.#core, this.#thread, message, 'message');
    if (row.role !== 'system') throw new ValidationError('message.role', 'must be system');
    return swapSystemMessage(this.#core, this.threadId, row);
  }

  /**
   * What fits in a model's context: the leading system message, the agent's core
   * memory blocks and the newest messages within `maxTokens` (a character-based
   * estimate), with a report of what was left out.
   */
  async contextWindow(options: ContextWindowOptions): Promise<ContextWindow> {
    this.#core.assertOpen();
    const { maxTokens } = checkOptions(
      'options',
      options,
      CONTEXT_WINDOW_OPTIONS_SPEC,
      'must be an object with maxTokens',
    );
    const rows = await contextRows(this.#core, this.threadId);
    // The blocks the thread's user sees (their own and the agent's shared ones), or the agent's own.
    const { agentId, userId } = this.#thread;
    const blocks =
      agentId === undefined
        ? []
        : await listBlocks(this.#core, userId === undefined ? { agentId } : { agentId, userId });
    return buildContextWindow(rows, blocks, maxTokens);
  }

  async #insert(input: readonly MessageInput[], placement: Placement, field: string): Promise<Message[]> {
    this.#core.assertOpen();
    if (!Array.isArray(input)) throw new ValidationError(field, 'must be an array of messages');
    const rows = input.map((m, i) =>
      validateMessage(this.#core, this.#thread, m, field === 'message' ? field : `${field}[${i}]`),
    );
    return addMessages(this.#core, this.threadId, rows, { allowDuplicates: this.#allowDuplicates, placement });
  }
}
