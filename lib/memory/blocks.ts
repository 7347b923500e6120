/**
 * Core memory (MemGPT): an agent's labelled blocks with character limits, the
 * agent's own or one user's (see block-rows.ts for who sees what).
 */
import { ValidationError } from '../errors.js';
import {
  DEFAULT_BLOCK_LIMIT,
  getBlock,
  listBlocks,
  replaceIn,
  updateBlock,
  type BlockOwner,
  type BlockWrite,
} from '../engine/conversation/block-rows.js';
import type { EngineStore } from '../engine/engine-store.js';
import type { BlockRow } from '../store/rows.js';
import { boolean, checkOptions, definedOnly, id, int, optional, type OptionsSpec } from '../util/options.js';
import { requireId } from '../util/validate.js';

/** A core memory block. */
export interface Block {
  label: string;
  value: string;
  /** Most characters the block may hold. */
  limit: number;
  version: number;
  /** Epoch milliseconds. */
  updatedAt: number;
  /** The user the block belongs to; absent on the agent's own blocks. */
  userId?: string;
  /** True on an agent's own block that every user of the agent sees. */
  shared: boolean;
}

/** Options of {@link Engram.blocks}. */
export interface BlocksOptions {
  /**
   * The user whose blocks these are. Without it, the agent's own blocks. A
   * user sees their own blocks and the agent's blocks set with `shared: true`.
   * @example 'ana'
   */
  userId?: string;
}

/** Options of a block write. */
export interface BlockSetOptions {
  /** Most characters the block may hold. @default the block's current limit, else 2000 */
  limit?: number;
  /**
   * `true` writes the agent's own block and shares it with every user of the
   * agent; `false` writes the agent's own block and stops sharing it. Left out,
   * the write goes to this face's own block (the user's, or the agent's keeping
   * its sharing as it was).
   * @default undefined
   */
  shared?: boolean;
}

function toBlock(row: BlockRow): Block {
  const block: Block = {
    label: row.label,
    value: row.value,
    limit: row.limit,
    version: row.version,
    updatedAt: row.updatedAt,
    shared: row.shared === true,
  };
  if (row.userId !== undefined) block.userId = row.userId;
  return block;
}

/** The checks of {@link BlocksOptions}. */
const BLOCKS_OPTIONS_SPEC = { userId: optional(id) } satisfies OptionsSpec<BlocksOptions>;

/** The checks of {@link BlockSetOptions}. */
const BLOCK_SET_OPTIONS_SPEC = {
  limit: optional(int(1)),
  shared: optional(boolean),
} satisfies OptionsSpec<BlockSetOptions>;

/** Checks the options of a blocks face at the door. */
export function parseBlocksOptions(options: unknown): { userId?: string } {
  return definedOnly(checkOptions('options', options, BLOCKS_OPTIONS_SPEC));
}

function requireValue(field: string, value: unknown): string {
  if (typeof value !== 'string') throw new ValidationError(field, 'must be a string');
  return value;
}

/**
 * The core memory blocks of one agent, or of one user of an agent.
 * @example
 * await engram.blocks('helper').set('persona', 'I am a careful assistant.', { limit: 500, shared: true })
 * const core = engram.blocks('helper', { userId: 'ana' })
 * await core.append('human', 'Name: Ana') // Ana's block; other users never see it
 */
export class Blocks {
  readonly agentId: string;
  readonly userId: string | undefined;
  readonly #core: EngineStore;
  readonly #owner: BlockOwner;

  constructor(core: EngineStore, agentId: string, options: { userId?: string } = {}) {
    this.#core = core;
    this.agentId = agentId;
    this.userId = options.userId;
    this.#owner = options.userId === undefined ? { agentId } : { agentId, userId: options.userId };
  }

  /** The block, or undefined when there is none with that label. */
  async get(label: string): Promise<Block | undefined> {
    this.#core.assertOpen();
    const row = await getBlock(this.#core, this.#owner, requireId('label', label));
    return row === undefined ? undefined : toBlock(row);
  }

  /** Every block this face sees, by label. */
  async list(): Promise<Block[]> {
    this.#core.assertOpen();
    return (await listBlocks(this.#core, this.#owner)).map(toBlock);
  }

  /**
   * Sets a block's value (creating it). `limit` defaults to the block's current limit, else 2000.
   * A value past the limit throws LimitExceededError and leaves the block unchanged.
   */
  async set(label: string, value: string, options: BlockSetOptions = {}): Promise<Block> {
    this.#core.assertOpen();
    requireId('label', label);
    requireValue('value', value);
    const { limit, shared } = checkOptions('options', options, BLOCK_SET_OPTIONS_SPEC);
    const how: BlockWrite = shared === undefined ? {} : { shared };
    return toBlock(
      await updateBlock(
        this.#core,
        this.#owner,
        label,
        (cur) => ({ value, limit: limit ?? cur?.limit ?? DEFAULT_BLOCK_LIMIT }),
        how,
      ),
    );
  }

  /** Appends `text` on a new line (creating the block when missing). */
  async append(label: string, text: string): Promise<Block> {
    this.#core.assertOpen();
    requireId('label', label);
    requireValue('text', text);
    return toBlock(
      await updateBlock(this.#core, this.#owner, label, (cur) => ({
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
    return toBlock(await updateBlock(this.#core, this.#owner, label, (cur) => replaceIn(label, cur, oldText, newText)));
  }
}
