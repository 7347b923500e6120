/**
 * The engine's public object. `Engram.open()` does the I/O; faces hang off it.
 */
import { ValidationError } from '../errors.js';
import { Blocks } from '../memory/blocks.js';
import { Conversation, type ConversationOptions } from '../memory/conversation.js';
import { Recall } from '../memory/recall.js';
import { isPlainObject, rejectUnknownKeys, requireId, requireInt } from '../util/validate.js';
import { Core } from './core.js';
import { openStore } from './open-store.js';

/** Options of {@link Engram.open}. */
export interface EngramOptions {
  /**
   * Name of the IndexedDB database. Two instances with one name share one store.
   * @example 'my-assistant'
   */
  name: string;
  /**
   * Largest accepted message content or memory text, in UTF-8 bytes.
   * @default 1048576 (1 MB)
   */
  maxContentBytes?: number;
  /**
   * The clock, in epoch milliseconds; tests inject one to drive TTLs and dates.
   * @default Date.now
   */
  now?: () => number;
}

const OPTION_KEYS = ['name', 'maxContentBytes', 'now'] as const;

/**
 * On-device memory for an AI agent.
 * @example
 * const engram = await Engram.open({ name: 'assistant' })
 * const chat = engram.conversation('thread-1')
 * await chat.add({ role: 'user', content: 'I moved to Lisbon last spring.' })
 * const { results } = await engram.recall.textSearch('lisbon')
 * await engram.close()
 */
export class Engram {
  readonly name: string;
  readonly #core: Core;
  readonly #recall: Recall;

  private constructor(name: string, core: Core) {
    this.name = name;
    this.#core = core;
    this.#recall = new Recall(core);
  }

  /** Opens (or creates) the store `options.name`. */
  static async open(options: EngramOptions): Promise<Engram> {
    if (!isPlainObject(options)) throw new ValidationError('options', 'must be an object with a name');
    rejectUnknownKeys('options', options, OPTION_KEYS);
    const name = requireId('options.name', options.name);
    const maxContentBytes = options.maxContentBytes === undefined ? 1_048_576 : requireInt('options.maxContentBytes', options.maxContentBytes, 1);
    if (options.now !== undefined && typeof options.now !== 'function') throw new ValidationError('options.now', 'must be a function');
    const now = options.now ?? Date.now;
    const { db, deviceId } = await openStore(name);
    return new Engram(name, new Core(db, { maxContentBytes, now, deviceId }));
  }

  /** True after close(). */
  get closed(): boolean {
    return this.#core.closed;
  }

  /**
   * A thread of conversation (MassGen ConversationMemory plus MemGPT's context operations).
   * @example
   * const chat = engram.conversation('t1', { agentId: 'helper' })
   */
  conversation(threadId: string, options: ConversationOptions = {}): Conversation {
    this.#core.assertOpen();
    return new Conversation(this.#core, requireId('threadId', threadId), options);
  }

  /** Search over every stored message (MemGPT recall memory). */
  get recall(): Recall {
    this.#core.assertOpen();
    return this.#recall;
  }

  /**
   * Core memory blocks of one agent (MemGPT).
   * @example
   * await engram.blocks('helper').set('human', 'Name: Ana')
   */
  blocks(agentId: string): Blocks {
    this.#core.assertOpen();
    return new Blocks(this.#core, requireId('agentId', agentId));
  }

  /** Closes the store. Idempotent; every later call rejects with ClosedError. */
  async close(): Promise<void> {
    if (this.#core.closed) return;
    this.#core.markClosed();
    this.#core.db.close();
    await Promise.resolve();
  }
}
