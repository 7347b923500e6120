/**
 * What a deleted record leaves behind. A memory's tombstone keeps only what
 * sync needs to carry the deletion (id, tier, scope, times, version, origin);
 * the history entries of a deleted record keep their event and time, and of
 * their before/after rows only the same text-free fields. Text, metadata,
 * key, value and the text's hash are gone from every table.
 */
import type { HistoryRow, MemoryRow, TableName } from './rows.js';
import { SCOPE_FIELDS } from './scope.js';

/**
 * `meta` keys of snapshots that hold words of the texts (the keyword postings,
 * SNAPSHOT_KEY of engine/keywords/keyword-state.ts). A deletion drops them in its
 * transaction; the open instance writes a fresh one on close, and an instance
 * that crashed first rebuilds its postings from the terms rows.
 */
export const TEXT_SNAPSHOT_KEYS: readonly string[] = ['keywordSnapshot'];

/** Fields of a memory that hold or reveal nothing of what was said. */
const MEMORY_KEEPS = [
  'id',
  'tier',
  ...SCOPE_FIELDS,
  'createdAt',
  'updatedAt',
  'deletedAt',
  'version',
  'origin',
] as const;
const MESSAGE_KEEPS = ['id', 'threadId', 'agentId', 'userId', 'role', 'createdAt', 'position'] as const;
const BLOCK_KEEPS = ['agentId', 'userId', 'label', 'limit', 'version', 'updatedAt'] as const;
const TRACE_KEEPS = ['id', 'sessionId', 'projectId', 'at'] as const;

const KEEPS: Record<TableName, readonly string[]> = {
  memories: MEMORY_KEEPS,
  messages: MESSAGE_KEEPS,
  blocks: BLOCK_KEEPS,
  traces: TRACE_KEEPS,
};

function pick(row: object, keys: readonly string[]): Record<string, unknown> {
  const source = row as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of keys) if (source[k] !== undefined) out[k] = source[k];
  return out;
}

/**
 * The tombstone of a deleted memory: its id, tier, scope, times, version and
 * origin, with an empty text, no metadata and no hash (so nothing of the text
 * can be recovered or matched).
 * @example textFreeTombstone({ ...row, deletedAt: now }).text // ''
 */
export function textFreeTombstone(row: MemoryRow): MemoryRow {
  const kept = pick(row, MEMORY_KEEPS) as Pick<
    MemoryRow,
    'id' | 'tier' | 'createdAt' | 'updatedAt' | 'version' | 'origin'
  >;
  return { ...kept, text: '', metadata: {}, hash: '', accessCount: 0 };
}

/** Whether a memory row is a tombstone that still carries something of its text. */
export function tombstoneHoldsText(row: MemoryRow): boolean {
  return (
    row.deletedAt !== undefined &&
    (row.text !== '' ||
      row.hash !== '' ||
      Object.keys(row.metadata).length > 0 ||
      row.key !== undefined ||
      row.value !== undefined)
  );
}

/** A row of `table` as history keeps it once the record is deleted: no text, metadata or value. */
export function textFreeRow(table: TableName, row: unknown): Record<string, unknown> | null {
  if (typeof row !== 'object' || row === null) return null;
  return pick(row, KEEPS[table]);
}

/** A history entry of a deleted record: event and time, before/after without text. */
export function textFreeHistory(entry: HistoryRow): HistoryRow {
  return { ...entry, before: textFreeRow(entry.table, entry.before), after: textFreeRow(entry.table, entry.after) };
}
