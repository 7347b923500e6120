/**
 * Core memory blocks (MemGPT): labelled, size-limited text an agent always sees.
 * A block is the agent's own (no user) or one user's; an agent's own block
 * marked `shared` is seen by every user of the agent until the user writes a
 * block of that label (the user's copy then takes its place, for that user
 * only). A write past a block's limit is rejected and the block is left unchanged.
 */
import { LimitExceededError, NotFoundError, ValidationError } from '../../errors.js';
import type { BlockRow } from '../../store/rows.js';
import { type RowChange } from '../../store/write.js';
import { blockKey } from '../../store/block-key.js';
import type { EngineStore } from '../engine-store.js';

/** Characters a block may hold unless set otherwise (Letta's default). */
export const DEFAULT_BLOCK_LIMIT = 2000;

/** Whose blocks: an agent's own (no userId) or one user's of that agent. */
export interface BlockOwner {
  agentId: string;
  userId?: string;
}

/** The block `label` of exactly this owner (no fallback to shared blocks). */
async function ownBlock(core: EngineStore, owner: BlockOwner, label: string): Promise<BlockRow | undefined> {
  return core.db.blocks.get(blockKey(owner.agentId, label, owner.userId));
}

/**
 * The block `label` as the owner sees it: a user's own block, else the agent's
 * shared block of that label; for the agent itself, its own block.
 */
export async function getBlock(core: EngineStore, owner: BlockOwner, label: string): Promise<BlockRow | undefined> {
  const own = await ownBlock(core, owner, label);
  if (own !== undefined || owner.userId === undefined) return own;
  const agents = await ownBlock(core, { agentId: owner.agentId }, label);
  return agents?.shared === true ? agents : undefined;
}

/** Every block the owner sees, by label (a user's own blocks hide shared ones of the same label). */
export async function listBlocks(core: EngineStore, owner: BlockOwner): Promise<BlockRow[]> {
  const rows = await core.db.blocks.where('agentId').equals(owner.agentId).toArray();
  const own = rows.filter((r) => r.userId === owner.userId);
  const labels = new Set(own.map((r) => r.label));
  const shared =
    owner.userId === undefined
      ? []
      : rows.filter((r) => r.userId === undefined && r.shared === true && !labels.has(r.label));
  return [...own, ...shared].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

/** How a block is to be written. */
export interface BlockWrite {
  /**
   * Write the agent's own block and share it with every user of the agent
   * (true), stop sharing it (false), or write the owner's own block and keep the
   * agent's block as shared or not as it is (undefined).
   */
  shared?: boolean;
}

/**
 * Rewrites a block from the block the owner sees (undefined when missing).
 * `next` returns the new value and limit; the write is checked against the
 * limit. Without `shared`, a user's write goes to the user's own block, even
 * when what it started from was the agent's shared block.
 */
export async function updateBlock(
  core: EngineStore,
  owner: BlockOwner,
  label: string,
  next: (current: BlockRow | undefined) => { value: string; limit: number },
  how: BlockWrite = {},
): Promise<BlockRow> {
  const target: BlockOwner = how.shared === undefined ? owner : { agentId: owner.agentId };
  return core.write(async () => {
    const before = await ownBlock(core, target, label);
    const seen = how.shared === undefined ? await getBlock(core, owner, label) : before;
    const { value, limit } = next(seen);
    if (value.length > limit) throw new LimitExceededError(`block "${label}"`, limit, value.length);
    const after = writtenBlock(core, target, label, { value, limit, before, how });
    const id = blockKey(target.agentId, label, target.userId);
    const change: RowChange =
      before === undefined
        ? { table: 'blocks', op: 'add', id, after }
        : { table: 'blocks', op: 'update', id, before, after };
    return { changes: [change], result: after };
  });
}

/**
 * The row written for `target`'s block `label`: `value` under `limit`, one version past `before`; shared as
 * `how` asks, else as the agent's block `before` was.
 */
function writtenBlock(
  core: EngineStore,
  target: BlockOwner,
  label: string,
  { value, limit, before, how }: { value: string; limit: number; before: BlockRow | undefined; how: BlockWrite },
): BlockRow {
  const after: BlockRow = {
    agentId: target.agentId,
    label,
    value,
    limit,
    version: (before?.version ?? 0) + 1,
    updatedAt: core.now(),
  };
  if (target.userId !== undefined) after.userId = target.userId;
  const shared = how.shared ?? (target.userId === undefined && before?.shared === true);
  if (shared) after.shared = true;
  return after;
}

/** Replaces every occurrence of `oldText` in a block. */
export function replaceIn(
  label: string,
  current: BlockRow | undefined,
  oldText: string,
  newText: string,
): { value: string; limit: number } {
  if (current === undefined) throw new NotFoundError('block', label);
  if (!current.value.includes(oldText)) throw new ValidationError('old', `text not found in block "${label}"`);
  return { value: current.value.replaceAll(oldText, newText), limit: current.limit };
}
