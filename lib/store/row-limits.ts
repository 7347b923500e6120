/**
 * The limits `add()` holds input to, applied to whole rows that come from
 * outside the faces (a record pulled by sync, a line of an import file): texts, contents and metadata of at
 * most `maxContentBytes`, ids of at most 512 characters. The checks are the
 * faces' own (`lib/util/validate.ts`), so a row from outside can never be larger
 * than one a caller could have added. Shapes are checked by `row-checks.ts`.
 */
import { isEngramError } from '../errors.js';
import { utf8Length } from '../util/hash.js';
import { optionalId, requireId, requireMetadata, requireText } from '../util/validate.js';

/** The store's limits. */
export interface RowLimits {
  /** The store's `maxContentBytes`. */
  maxContentBytes: number;
}

/** Row kinds with limits. */
export type LimitedRowKind = 'memory' | 'message' | 'block' | 'trace' | 'history';

const MEMORY_IDS = ['userId', 'agentId', 'runId', 'projectId', 'sessionId', 'key', 'origin'] as const;
const MESSAGE_IDS = ['threadId', 'agentId', 'userId', 'name', 'toolCallId'] as const;

/** A row of one kind held to `max` bytes of content: throws the faces' own ValidationError when it is not. */
type Limit = (row: Record<string, unknown>, max: number) => void;

function limitMemory(row: Record<string, unknown>, max: number): void {
  requireId('id', row['id']);
  if (row['deletedAt'] === undefined) requireText('text', row['text'], max);
  for (const k of MEMORY_IDS) optionalId(k, row[k]);
  requireMetadata('metadata', row['metadata'], max);
  // A keyed memory's value is held to the limit as JSON, as remember() does.
  if (row['value'] !== undefined && utf8Length(JSON.stringify(row['value'])) > max)
    requireText('value', JSON.stringify(row['value']), max);
}

function limitMessage(row: Record<string, unknown>, max: number): void {
  requireId('id', row['id']);
  requireText('content', row['content'], max);
  for (const k of MESSAGE_IDS) optionalId(k, row[k]);
  if (row['metadata'] !== undefined) requireMetadata('metadata', row['metadata'], max);
}

/** As addTrace(): the session and project are ids, the step is a text. */
function limitTrace(row: Record<string, unknown>, max: number): void {
  requireId('id', row['id']);
  requireId('sessionId', row['sessionId']);
  optionalId('projectId', row['projectId']);
  requireText('step', row['step'], max);
}

/** An entry holds earlier versions of a record (text-free once it is deleted): each as large as the record may be. */
function limitHistory(row: Record<string, unknown>, max: number): void {
  requireId('recordId', row['recordId']);
  for (const side of ['before', 'after'] as const) {
    const version = row[side];
    if (typeof version === 'object' && version !== null) limitVersion(side, version as Record<string, unknown>, max);
  }
}

/** One side (`before` or `after`) of a history entry: its text, content or value, and its metadata. */
function limitVersion(side: string, fields: Record<string, unknown>, max: number): void {
  for (const k of ['text', 'content', 'value']) {
    const v = typeof fields[k] === 'string' ? fields[k] : fields[k] === undefined ? '' : JSON.stringify(fields[k]);
    if (utf8Length(v) > max) requireText(`${side}.${k}`, v, max);
  }
  if (fields['metadata'] !== undefined) requireMetadata(`${side}.metadata`, fields['metadata'], max);
}

function limitBlock(row: Record<string, unknown>, max: number): void {
  requireId('agentId', row['agentId']);
  requireId('label', row['label']);
  optionalId('userId', row['userId']);
  // A block's own limit bounds its characters; no block is larger than any other text may be.
  const bytes = typeof row['value'] === 'string' ? utf8Length(row['value']) : 0;
  if (bytes > max) requireText('value', row['value'], max);
}

const LIMITS: Record<LimitedRowKind, Limit> = {
  memory: limitMemory,
  message: limitMessage,
  trace: limitTrace,
  history: limitHistory,
  block: limitBlock,
};

/**
 * Why a row breaks the store's limits, or undefined when it keeps them. Call it on
 * a row whose shape `checkRow` accepted.
 * @example
 * rowLimitProblem('memory', row, { maxContentBytes: 1_048_576 }); // 'text is 3145728 bytes, over the maximum of 1048576'
 */
export function rowLimitProblem(
  kind: LimitedRowKind,
  row: Record<string, unknown>,
  limits: RowLimits,
): string | undefined {
  try {
    LIMITS[kind](row, limits.maxContentBytes);
    return undefined;
  } catch (e) {
    if (isEngramError(e)) return e.message;
    throw e;
  }
}
