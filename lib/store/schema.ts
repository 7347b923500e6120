/**
 * lib/store owns IndexedDB: the Dexie schema, its migrations and the single
 * write path. It is the only source of truth. It must not import the vector
 * index, the embedder or any face.
 */
import { Dexie, type Table } from 'dexie';
import { blockKey } from './block-key.js';
import { textFreeHistory, textFreeTombstone } from './forgetting.js';
import type {
  BlockRow,
  ChangeRow,
  HistoryRow,
  MemoryRow,
  MessageRow,
  MetaRow,
  TermsRow,
  TraceRow,
  VectorRow,
} from './rows.js';

/** The schema version engram writes; stored in `meta` and in exports. */
export const SCHEMA_VERSION = 3;

/**
 * The Dexie table that holds core memory blocks (the change log and history
 * still call them 'blocks'). Version 2 moved blocks from `blocks`, keyed by
 * [agentId+label], to this table keyed by the block's record id (see
 * `blockRecordId`), so a block belongs to an agent and, optionally, a user.
 */
export const BLOCKS_TABLE = 'coreBlocks';

/** Every table, for transactions that span the whole store. */
export const ALL_TABLES = [
  'messages',
  'memories',
  'vectors',
  'history',
  BLOCKS_TABLE,
  'traces',
  'changes',
  'meta',
  'terms',
] as const;

/** The Dexie database of one engram store. */
export class EngramDb extends Dexie {
  messages!: Table<MessageRow, string>;
  memories!: Table<MemoryRow, string>;
  vectors!: Table<VectorRow, string>;
  history!: Table<HistoryRow, number>;
  /** Core memory blocks (table `coreBlocks`), keyed by their record id (an outbound key). */
  blocks: Table<BlockRow, string>;
  traces!: Table<TraceRow, string>;
  changes!: Table<ChangeRow, number>;
  meta!: Table<MetaRow, string>;
  terms!: Table<TermsRow, [string, string]>;

  constructor(name: string) {
    super(name);
    // v1: the first schema (never edit a version once released; add one).
    this.version(1).stores({
      messages: 'id, [threadId+inContext+position], [threadId+position], [threadId+hash], [threadId+createdAt], createdAt',
      memories: 'id, hash, [tier+key], userId, agentId, runId, projectId, sessionId, createdAt, updatedAt',
      vectors: 'id',
      history: '++seq, recordId',
      blocks: '[agentId+label], agentId',
      traces: 'id, [sessionId+at]',
      changes: '++seq, recordId',
      meta: 'key',
      terms: '[c+d], *k',
    });
    // v2: blocks keyed by agent and user. IndexedDB cannot change a primary key,
    // so they move to a new table; every existing block stays, as the agent's own
    // (not shared with users: sharing is asked for explicitly).
    this.version(2)
      .stores({ [BLOCKS_TABLE]: ', agentId, userId' })
      .upgrade(async (tx) => {
        const old = (await tx.table('blocks').toArray()) as BlockRow[];
        await tx.table(BLOCKS_TABLE).bulkPut(old, old.map((row) => blockKey(row.agentId, row.label, undefined)));
        // Deletion means forgotten from v2 on: older tombstones and the history of deleted records lose their text.
        const tombstones = ((await tx.table('memories').toArray()) as MemoryRow[]).filter((m) => m.deletedAt !== undefined);
        if (tombstones.length > 0) await tx.table('memories').bulkPut(tombstones.map(textFreeTombstone));
        const history = (await tx.table('history').toArray()) as HistoryRow[];
        const deleted = new Set(history.filter((h) => h.op === 'delete').map((h) => `${h.table}\u0000${h.recordId}`));
        const scrubbed = history.filter((h) => deleted.has(`${h.table}\u0000${h.recordId}`)).map(textFreeHistory);
        if (scrubbed.length > 0) await tx.table('history').bulkPut(scrubbed);
      });
    // v3: the old table goes (a table can only be dropped a version after it was read).
    this.version(3).stores({ blocks: null });
    this.blocks = this.table(BLOCKS_TABLE);
  }
}
