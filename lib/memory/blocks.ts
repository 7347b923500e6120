/**
 * Core memory (MemGPT): an agent's labelled blocks with character limits.
 */
import { ValidationError } from '../errors.js';
import { DEFAULT_BLOCK_LIMIT, getBlock, listBlocks, replaceIn, updateBlock } from '../engine/block-rows.js';
import type { EngineStore } from '../engine/engine-store.js';
import type { BlockRow } from '../store/rows.js';
import { requireId, requireInt, requireOptions } from '../util/validate.js';

/** A core memory block. */
export interface Block {
  label: string;
  value: string;
  /** Most characters the block may hold. */
  limit: number;
  version: number;
  /** Epoch milliseconds. */
  updatedAt: number;
}

function toBlock(row: BlockRow): Block {
  return { label: row.label, value: row.value, limit: row.limit, version: row.version, updatedAt: row.updatedAt };
}

function requireValue(field: string, value: unknown): string {
  if (typeof value !== 'string') throw new ValidationError(field, 'must be a string');
  return value;
}

/**
 * The core memory blocks of one agent.
 * @example
 * const core = engram.blocks('helper')
 * await core.set('persona', 'I am a careful assistant.', { limit: 500 })
 * await core.append('persona', 'I like brevity.')
 */
export class Blocks {
  readonly agentId: string;
  readonly #core: EngineStore;

  constructor(core: EngineStore, agentId: string) {
    this.#core = core;
    this.agentId = agentId;
  }

  /** The block, or undefined when there is none with that label. */
  async get(label: string): Promise<Block | undefined> {
    this.#core.assertOpen();
    const row = await getBlock(this.#core, this.agentId, requireId('label', label));
    return row === undefined ? undefined : toBlock(row);
  }

  /** Every block of the agent, by label. */
  async list(): Promise<Block[]> {
    this.#core.assertOpen();
    return (await listBlocks(this.#core, this.agentId)).map(toBlock);
  }

  /**
   * Sets a block's value (creating it). `limit` defaults to the block's current limit, else 2000.
   * A value past the limit throws LimitExceededError and leaves the block unchanged.
   */
  async set(label: string, value: string, options: { limit?: number } = {}): Promise<Block> {
    this.#core.assertOpen();
    requireId('label', label);
    requireValue('value', value);
    requireOptions('options', options, ['limit']);
    const limit = options.limit === undefined ? undefined : requireInt('options.limit', options.limit, 1);
    return toBlock(await updateBlock(this.#core, this.agentId, label, (cur) => ({ value, limit: limit ?? cur?.limit ?? DEFAULT_BLOCK_LIMIT })));
  }

  /** Appends `text` on a new line (creating the block when missing). */
  async append(label: string, text: string): Promise<Block> {
    this.#core.assertOpen();
    requireId('label', label);
    requireValue('text', text);
    return toBlock(
      await updateBlock(this.#core, this.agentId, label, (cur) => ({
        value: cur === undefined || cur.value === '' ? text : `${cur.value}\n${text}`,
        limit: cur?.limit ?? DEFAULT_BLOCK_LIMIT,
      })),
    );
  }

  /** Replaces every occurrence of `oldText`; throws when the block or the text is missing. */
  async replace(label: string, oldText: string, newText: string): Promise<Block> {
    this.#core.assertOpen();
    requireId('label', label);
    if (requireValue('old', oldText) === '') throw new ValidationError('old', 'must not be empty');
    requireValue('new', newText);
    return toBlock(await updateBlock(this.#core, this.agentId, label, (cur) => replaceIn(label, cur, oldText, newText)));
  }
}
