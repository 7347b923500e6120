/**
 * lib/store owns IndexedDB: the Dexie schema, its migrations and the single
 * write path. It is the only source of truth. It must not import the vector
 * index, the embedder or any face.
 */
import { Dexie, type Table } from 'dexie';
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
export const SCHEMA_VERSION = 1;

/** Every table, for transactions that span the whole store. */
export const ALL_TABLES = [
  'messages',
  'memories',
  'vectors',
  'history',
  'blocks',
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
  blocks!: Table<BlockRow, [string, string]>;
  traces!: Table<TraceRow, string>;
  changes!: Table<ChangeRow, number>;
  meta!: Table<MetaRow, string>;
  terms!: Table<TermsRow, [string, string]>;

  constructor(name: string) {
    super(name);
    this.version(SCHEMA_VERSION).stores({
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
  }
}
