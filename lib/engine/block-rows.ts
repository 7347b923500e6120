/**
 * Core memory blocks (MemGPT): labelled, size-limited text an agent always sees.
 * A write past a block's limit is rejected and the block is left unchanged.
 */
import { LimitExceededError, NotFoundError, ValidationError } from '../errors.js';
import type { BlockRow } from '../store/rows.js';
import { blockRecordId, type RowChange } from '../store/write.js';
import type { EngineStore } from './engine-store.js';

/** Characters a block may hold unless set otherwise (Letta's default). */
export const DEFAULT_BLOCK_LIMIT = 2000;

/** Reads one block. */
export async function getBlock(core: EngineStore, agentId: string, label: string): Promise<BlockRow | undefined> {
  return core.db.blocks.get([agentId, label]);
}

/** Every block of an agent, by label. */
export async function listBlocks(core: EngineStore, agentId: string): Promise<BlockRow[]> {
  return core.db.blocks.where('agentId').equals(agentId).sortBy('label');
}

/**
 * Rewrites a block from its current row (undefined when missing). `next`
 * returns the new value and limit; the write is checked against the limit.
 */
export async function updateBlock(
  core: EngineStore,
  agentId: string,
  label: string,
  next: (current: BlockRow | undefined) => { value: string; limit: number },
): Promise<BlockRow> {
  return core.write(async () => {
    const before = await core.db.blocks.get([agentId, label]);
    const { value, limit } = next(before);
    if (value.length > limit) throw new LimitExceededError(`block "${label}"`, limit, value.length);
    const after: BlockRow = { agentId, label, value, limit, version: (before?.version ?? 0) + 1, updatedAt: core.now() };
    const change: RowChange = before === undefined
      ? { table: 'blocks', op: 'add', id: blockRecordId(agentId, label), after }
      : { table: 'blocks', op: 'update', id: blockRecordId(agentId, label), before, after };
    return { changes: [change], result: after };
  });
}

/** Replaces every occurrence of `oldText` in a block. */
export function replaceIn(label: string, current: BlockRow | undefined, oldText: string, newText: string): { value: string; limit: number } {
  if (current === undefined) throw new NotFoundError('block', label);
  if (!current.value.includes(oldText)) throw new ValidationError('old', `text not found in block "${label}"`);
  return { value: current.value.replaceAll(oldText, newText), limit: current.limit };
}
