/**
 * Shape checks for rows that come from outside (an import file). Each returns
 * a problem description, or undefined when the row is well formed.
 */
import {
  ROLES,
  TIERS,
  type BlockRow,
  type HistoryRow,
  type MemoryRow,
  type MessageRow,
  type TraceRow,
} from './rows.js';

type Check = (row: Record<string, unknown>) => string | undefined;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): boolean => typeof v === 'string';
const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v !== '';
const num = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const int = (v: unknown): boolean => Number.isInteger(v);
const optional = (v: unknown, test: (x: unknown) => boolean): boolean => v === undefined || test(v);

function fields(row: Record<string, unknown>, spec: Record<string, (v: unknown) => boolean>): string | undefined {
  for (const [key, test] of Object.entries(spec)) if (!test(row[key])) return `field "${key}" is missing or malformed`;
  return undefined;
}

const checkMessage: Check = (r) =>
  fields(r, {
    id: nonEmpty,
    threadId: nonEmpty,
    role: (v) => (ROLES as readonly unknown[]).includes(v),
    content: nonEmpty,
    createdAt: num,
    position: num,
    hash: str,
    inContext: (v) => v === 0 || v === 1,
    agentId: (v) => optional(v, nonEmpty),
    userId: (v) => optional(v, nonEmpty),
    name: (v) => optional(v, nonEmpty),
    toolCallId: (v) => optional(v, nonEmpty),
    metadata: (v) => optional(v, isObj),
  });

const checkMemory: Check = (r) =>
  fields(r, {
    id: nonEmpty,
    // A tombstone keeps no text (forgetting.ts); a live memory has some.
    text: r['deletedAt'] === undefined ? nonEmpty : str,
    tier: (v) => (TIERS as readonly unknown[]).includes(v),
    metadata: isObj,
    hash: str,
    createdAt: num,
    updatedAt: num,
    accessCount: int,
    version: int,
    origin: str,
    userId: (v) => optional(v, nonEmpty),
    agentId: (v) => optional(v, nonEmpty),
    runId: (v) => optional(v, nonEmpty),
    projectId: (v) => optional(v, nonEmpty),
    sessionId: (v) => optional(v, nonEmpty),
    key: (v) => optional(v, nonEmpty),
    expiresAt: (v) => optional(v, num),
    lastAccessedAt: (v) => optional(v, num),
    deletedAt: (v) => optional(v, num),
  });

const checkBlock: Check = (r) =>
  fields(r, {
    agentId: nonEmpty,
    label: nonEmpty,
    value: str,
    limit: int,
    version: int,
    updatedAt: num,
    userId: (v) => optional(v, nonEmpty),
    shared: (v) => v === undefined || v === true,
  }) ?? ((r['value'] as string).length > (r['limit'] as number) ? 'block value is longer than its limit' : undefined);

const checkTrace: Check = (r) =>
  fields(r, {
    id: nonEmpty,
    sessionId: nonEmpty,
    step: str,
    thinking: str,
    at: num,
    projectId: (v) => optional(v, nonEmpty),
    confidence: (v) => optional(v, num),
  });

const checkHistory: Check = (r) =>
  fields(r, {
    seq: (v) => optional(v, int),
    table: (v) => v === 'messages' || v === 'memories' || v === 'blocks' || v === 'traces',
    recordId: nonEmpty,
    op: (v) => v === 'add' || v === 'update' || v === 'delete',
    at: num,
  }) ?? (!('before' in r) || !('after' in r) ? 'field "before" or "after" is missing' : undefined);

/** The row kinds of an export file and their checks. */
export const ROW_CHECKS = {
  message: checkMessage,
  memory: checkMemory,
  block: checkBlock,
  trace: checkTrace,
  history: checkHistory,
} as const;

export type RowKind = keyof typeof ROW_CHECKS;
export type RowOf<K extends RowKind> = K extends 'message'
  ? MessageRow
  : K extends 'memory'
    ? MemoryRow
    : K extends 'block'
      ? BlockRow
      : K extends 'trace'
        ? TraceRow
        : HistoryRow;

/** Checks a row of a kind; returns a problem or undefined. */
export function checkRow(kind: RowKind, row: unknown): string | undefined {
  if (!isObj(row)) return 'row must be an object';
  return ROW_CHECKS[kind](row);
}
