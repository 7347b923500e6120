/**
 * The stores of released schema versions as engram declared them, kept here as they were
 * (lib/store/schema.ts never edits a released version): the tests that upgrade an old store
 * build it from these, not from the code under test.
 */
import { Dexie } from 'dexie';
import { BLOCKS_TABLE } from '../../lib/store/schema.js';

/** Schema v1: blocks in `blocks`, keyed by [agentId+label]. */
export const V1_STORES = {
  messages: 'id, [threadId+inContext+position], [threadId+position], [threadId+hash], [threadId+createdAt], createdAt',
  memories: 'id, hash, [tier+key], userId, agentId, runId, projectId, sessionId, createdAt, updatedAt',
  vectors: 'id',
  history: '++seq, recordId',
  blocks: '[agentId+label], agentId',
  traces: 'id, [sessionId+at]',
  changes: '++seq, recordId',
  meta: 'key',
  terms: '[c+d], *k',
};

/** Schema v3: v2 added the blocks table keyed by record id, v3 dropped the old one. */
export const V3_STORES = {
  messages: 'id, [threadId+inContext+position], [threadId+position], [threadId+hash], [threadId+createdAt], createdAt',
  memories: 'id, hash, [tier+key], userId, agentId, runId, projectId, sessionId, createdAt, updatedAt',
  vectors: 'id',
  history: '++seq, recordId',
  [BLOCKS_TABLE]: ', agentId, userId',
  traces: 'id, [sessionId+at]',
  changes: '++seq, recordId',
  meta: 'key',
  terms: '[c+d], *k',
};

/** Schema v4: v4 moved rows (blocks to their unambiguous keys), no store changed. */
export const V4_STORES = V3_STORES;

/** A new database `name` of the v1 layout, open, for a test to fill. */
export async function openV1Store(name: string): Promise<Dexie> {
  const old = new Dexie(name);
  old.version(1).stores(V1_STORES);
  await old.open();
  return old;
}
