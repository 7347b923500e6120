/**
 * Export and import: the whole store as a versioned JSON-lines file. Export
 * writes a header (format and schema versions, embedder), then every message,
 * memory (with its vector), history entry, block and trace, and an end line.
 * Import validates every line before it writes anything, then writes in one
 * transaction: a bad file gives an ImportError with its line number and leaves
 * the store as it was.
 */
import type { IndexableType } from 'dexie';
import { ImportError, throwIfAborted } from '../../errors.js';
import { checkRow, type RowKind } from '../../store/row-checks.js';
import { rowLimitProblem, type RowLimits } from '../../store/row-limits.js';
import type { BlockRow, HistoryRow, MemoryRow, MessageRow, TraceRow, VectorRow } from '../../store/rows.js';
import { BLOCKS_TABLE, SCHEMA_VERSION, type EngramDb } from '../../store/schema.js';
import { storeError } from '../../store/store-error.js';
import { currentVector } from '../../store/current-vector.js';
import { blockKey } from '../../store/block-key.js';
import { digestOf, verifyDigest } from './export-digest.js';
import type { EngineStore } from '../engine-store.js';
import type { EmbedderRecord } from '../vectors/semantic-index.js';

/** The format name and version written in every export header. */
export const EXPORT_FORMAT = 'engram-export';
/** Version 2 adds the SHA-256 digest in the end line (required); version 1 files (no digest) are still read. */
export const EXPORT_VERSION = 2;
/** Export format versions this engram reads. */
const READABLE_VERSIONS: readonly unknown[] = [1, EXPORT_VERSION];

/** Progress of an export or import (`encrypt` and `decrypt` count bytes of an encrypted export, the others records). */
export interface TransferProgress {
  phase: 'export' | 'encrypt' | 'decrypt' | 'validate' | 'write';
  done: number;
  total: number;
}

/** Options of export and import. */
export interface TransferOptions {
  onProgress?: (progress: TransferProgress) => void;
  signal?: AbortSignal;
}

interface Header {
  type: 'header';
  format: typeof EXPORT_FORMAT;
  version: number;
  schemaVersion: number;
  embedder: EmbedderRecord | null;
  exportedAt: string;
  counts: Record<RowKind, number>;
}

const PAGE = 1000;
const KINDS: readonly RowKind[] = ['message', 'memory', 'history', 'block', 'trace'];

function encodeVector(v: Float32Array): string {
  const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function decodeVector(text: string, dimensions: number): Float32Array | undefined {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return undefined;
  }
  if (binary.length !== dimensions * 4) return undefined;
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const v = new Float32Array(bytes.buffer);
  return v.every(Number.isFinite) ? v : undefined;
}

/** The tables an export reads, each with how a row's primary key is found (for paging). */
const EXPORTED = [
  { kind: 'message', table: 'messages', keyOf: (row: MessageRow): string => row.id },
  { kind: 'memory', table: 'memories', keyOf: (row: MemoryRow): string => row.id },
  { kind: 'history', table: 'history', keyOf: (row: HistoryRow): number => row.seq! },
  {
    kind: 'block',
    table: BLOCKS_TABLE,
    keyOf: (row: BlockRow): string => blockKey(row.agentId, row.label, row.userId),
  },
  { kind: 'trace', table: 'traces', keyOf: (row: TraceRow): string => row.id },
] as const;

/** Every row of a table, a page at a time, in primary-key order (call inside a transaction). */
async function eachPage<T>(
  db: EngramDb,
  table: string,
  keyOf: (row: T) => IndexableType,
  onPage: (rows: T[]) => Promise<void> | void,
): Promise<void> {
  let last: IndexableType | undefined;
  for (;;) {
    const source = db.table(table);
    const page = (await (last === undefined ? source.orderBy(':id') : source.where(':id').above(last))
      .limit(PAGE)
      .toArray()) as T[];
    if (page.length === 0) return;
    await onPage(page);
    last = keyOf(page[page.length - 1]!);
  }
}

/**
 * Writes the store as JSON lines into a Blob. Every record is read in one read
 * transaction, so the file is one consistent state of the store however other
 * tabs write meanwhile; the end line carries the records' SHA-256 digest.
 */
export async function exportStore(core: EngineStore, options: TransferOptions = {}): Promise<Blob> {
  const { db } = core;
  const lines: string[] = [];
  try {
    await db.transaction(
      'r',
      [db.messages, db.memories, db.vectors, db.history, db.blocks, db.traces, db.meta],
      async () => {
        const header = await headerOf(db, core.now());
        const total = Object.values(header.counts).reduce((a, b) => a + b, 0);
        lines.push(JSON.stringify(header));
        const report = (): void => options.onProgress?.({ phase: 'export', done: lines.length - 1, total });
        report();
        for (const { kind, table, keyOf } of EXPORTED) {
          await eachPage(db, table, keyOf as (row: unknown) => IndexableType, async (page) => {
            throwIfAborted(options.signal);
            lines.push(
              ...(kind === 'memory'
                ? await memoryLines(db, page as MemoryRow[], header.embedder?.id)
                : recordLines(kind, page)),
            );
            report();
          });
        }
      },
    );
  } catch (e) {
    throw storeError(e, 'export');
  }
  return exportFile(lines);
}

/** The export file of the header and record `lines`: each line, then the end line with their count and digest. */
async function exportFile(lines: readonly string[]): Promise<Blob> {
  const digest = await digestOf(lines);
  const parts = lines.map((l) => `${l}\n`);
  parts.push(`${JSON.stringify({ type: 'end', records: lines.length - 1, digest })}\n`);
  return new Blob(parts, { type: 'application/x-ndjson' });
}

/** The header of an export of the store as it stands (call inside the export's transaction). */
async function headerOf(db: EngramDb, now: number): Promise<Header> {
  const embedder = ((await db.meta.get('embedder'))?.value as EmbedderRecord | undefined) ?? null;
  const counts = {
    message: await db.messages.count(),
    memory: await db.memories.count(),
    history: await db.history.count(),
    block: await db.blocks.count(),
    trace: await db.traces.count(),
  };
  return {
    type: 'header',
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    schemaVersion: SCHEMA_VERSION,
    embedder,
    exportedAt: new Date(now).toISOString(),
    counts,
  };
}

/**
 * A page of memories as lines, each with its current vector for the `recorded` model
 * (current-vector.ts; null for a tombstone, which has none).
 */
async function memoryLines(db: EngramDb, rows: readonly MemoryRow[], recorded: string | undefined): Promise<string[]> {
  const vectors = await db.vectors.bulkGet(rows.map((m) => m.id));
  return rows.map((row, i) => {
    const v = currentVector(vectors[i], recorded);
    const vector = v === undefined ? null : { embedderId: v.embedderId, data: encodeVector(v.vector) };
    return JSON.stringify({ type: 'memory', row, vector });
  });
}

/** A page of another kind's rows as lines. */
function recordLines(kind: RowKind, rows: readonly unknown[]): string[] {
  return rows.map((row) => JSON.stringify({ type: kind, row }));
}

/** A validated import file. */
export interface Parsed {
  header: Header;
  messages: MessageRow[];
  /** Each with its line in the file, for errors found against the store. */
  memories: { row: MemoryRow; vector?: VectorRow; line: number }[];
  history: HistoryRow[];
  blocks: BlockRow[];
  traces: TraceRow[];
}

/** Line `i` of the file as a JSON object; throws ImportError naming it. */
function jsonLine(lines: readonly string[], i: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(lines[i]!);
  } catch (e) {
    throw new ImportError(i + 1, 'is not valid JSON', { cause: e });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ImportError(i + 1, 'must be a JSON object');
  return value as Record<string, unknown>;
}

/** The header line checked (format, version, schema version, embedder); throws ImportError naming line 1. */
function checkHeader(head: Record<string, unknown>): Header {
  if (head['type'] !== 'header' || head['format'] !== EXPORT_FORMAT)
    throw new ImportError(1, `is not an ${EXPORT_FORMAT} header`);
  if (!READABLE_VERSIONS.includes(head['version']))
    throw new ImportError(
      1,
      `export format version ${String(head['version'])} is not supported (this engram reads ${READABLE_VERSIONS.join(' and ')})`,
    );
  if (typeof head['schemaVersion'] !== 'number' || head['schemaVersion'] > SCHEMA_VERSION)
    throw new ImportError(
      1,
      `schema version ${String(head['schemaVersion'])} is newer than this engram's (${SCHEMA_VERSION})`,
    );
  checkHeaderEmbedder(head['embedder']);
  return head as unknown as Header;
}

/** Checks the header's embedder: null, or `{ id, dimensions }`; throws ImportError naming line 1. */
function checkHeaderEmbedder(embedder: unknown): void {
  if (
    embedder !== null &&
    (typeof embedder !== 'object' ||
      typeof (embedder as EmbedderRecord).id !== 'string' ||
      !Number.isInteger((embedder as EmbedderRecord).dimensions))
  ) {
    throw new ImportError(1, 'header.embedder must be null or { id, dimensions }');
  }
}

/** The identity a row of `kind` must not share with another of the file (a block: agent, label and user). */
function recordKey(kind: RowKind, row: Record<string, unknown>): string {
  // A block is one per agent, label and user (an agent's own and each user's of one label are distinct).
  return kind === 'block'
    ? blockKey(row['agentId'] as string, row['label'] as string, row['userId'] as string | undefined)
    : kind === 'history'
      ? String(row['seq'])
      : String(row['id']);
}

/** A memory line with its vector, checked against the header's embedder; a live memory needs one. */
function importedMemory(
  record: Record<string, unknown>,
  m: MemoryRow,
  line: number,
  embedder: EmbedderRecord | null,
): Parsed['memories'][number] {
  const v = record['vector'];
  if (v === null || v === undefined) {
    if (m.deletedAt === undefined) throw new ImportError(line, 'a live memory needs its vector');
    return { row: m, line };
  }
  const vec = v as { embedderId?: unknown; data?: unknown };
  const dims = embedder?.dimensions;
  if (dims === undefined || typeof vec.data !== 'string' || vec.embedderId !== embedder!.id)
    throw new ImportError(line, "the vector does not match the header's embedder");
  const vector = decodeVector(vec.data, dims);
  if (vector === undefined) throw new ImportError(line, `the vector is not ${dims} finite 32-bit floats`);
  return { row: m, vector: { id: m.id, vector, embedderId: vec.embedderId }, line };
}

/** Adds a checked row to its list. */
function addParsed(
  parsed: Parsed,
  kind: RowKind,
  record: Record<string, unknown>,
  line: number,
  embedder: EmbedderRecord | null,
): void {
  const row = record['row'];
  switch (kind) {
    case 'message':
      parsed.messages.push(row as MessageRow);
      break;
    case 'memory':
      parsed.memories.push(importedMemory(record, row as MemoryRow, line, embedder));
      break;
    case 'history':
      parsed.history.push(row as HistoryRow);
      break;
    case 'block':
      parsed.blocks.push(row as BlockRow);
      break;
    case 'trace':
      parsed.traces.push(row as TraceRow);
      break;
  }
}

/** The file's lines (a last empty one dropped); throws ImportError when there are none. */
async function fileLines(file: Blob | string): Promise<string[]> {
  const text = typeof file === 'string' ? file : await file.text();
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (lines.length === 0) throw new ImportError(1, 'the file is empty');
  return lines;
}

/** The keys of the records read so far, by kind: a second record of one key is refused. */
type SeenKeys = Record<RowKind, Set<string>>;

/** No key seen yet, of any kind. */
function noKeysSeen(): SeenKeys {
  return {
    message: new Set(),
    memory: new Set(),
    block: new Set(),
    trace: new Set(),
    history: new Set(),
  };
}

/**
 * One record line checked: a known type, a row of its kind's shape, within the target store's `limits` (as add()
 * holds them: no imported row is larger than one a caller could add), and not a duplicate of an earlier record.
 */
function checkedRecord(
  record: Record<string, unknown>,
  line: number,
  limits: RowLimits,
  seen: SeenKeys,
): { kind: RowKind; row: Record<string, unknown> } {
  const type = record['type'];
  if (typeof type !== 'string' || !(KINDS as readonly string[]).includes(type))
    throw new ImportError(line, `unknown record type ${JSON.stringify(type)}`);
  const kind = type as RowKind;
  const problem = checkRow(kind, record['row']);
  if (problem !== undefined) throw new ImportError(line, `${kind}: ${problem}`);
  const row = record['row'] as Record<string, unknown>;
  const over = rowLimitProblem(kind, row, limits);
  if (over !== undefined) throw new ImportError(line, `${kind}: ${over}`);
  noteKey(kind, row, line, seen);
  return { kind, row };
}

/** Adds the row's key to those seen; a second record of one key is an ImportError (a history row without seq has none). */
function noteKey(kind: RowKind, row: Record<string, unknown>, line: number, seen: SeenKeys): void {
  const key = recordKey(kind, row);
  if (kind !== 'history' || row['seq'] !== undefined) {
    if (seen[kind].has(key)) throw new ImportError(line, `duplicate ${kind} ${key}`);
    seen[kind].add(key);
  }
}

/**
 * The end line (at index `i`) checked: it counts every record before it, and (export version 2 on) its digest
 * says each line is the one exported: edited or removed lines are named.
 */
async function checkEnd(
  lines: readonly string[],
  i: number,
  record: Record<string, unknown>,
  version: number,
): Promise<void> {
  const line = i + 1;
  if (record['records'] !== i - 1)
    throw new ImportError(
      line,
      `the end line counts ${String(record['records'])} records but the file has ${i - 1}: it is truncated or edited`,
    );
  if (version === EXPORT_VERSION) await verifyDigest(lines.slice(0, i), record['digest'], line);
}

/** Parses and validates every line against the target store's `limits`; throws ImportError naming the first bad line. */
export async function parseExport(
  file: Blob | string,
  limits: RowLimits,
  options: TransferOptions = {},
): Promise<Parsed> {
  const lines = await fileLines(file);
  const header = checkHeader(jsonLine(lines, 0));
  const parsed: Parsed = { header, messages: [], memories: [], history: [], blocks: [], traces: [] };
  const seen = noKeysSeen();
  let ended = false;
  for (let i = 1; i < lines.length; i++) {
    if (i % PAGE === 0) {
      throwIfAborted(options.signal);
      options.onProgress?.({ phase: 'validate', done: i, total: lines.length });
    }
    if (ended) throw new ImportError(i + 1, 'comes after the end line');
    const record = jsonLine(lines, i);
    if (record['type'] === 'end') {
      // Every line is well formed: now whether each is the line that was exported.
      await checkEnd(lines, i, record, header.version);
      ended = true;
      continue;
    }
    const { kind } = checkedRecord(record, i + 1, limits, seen);
    addParsed(parsed, kind, record, i + 1, header.embedder);
  }
  if (!ended) throw new ImportError(lines.length + 1, 'the end line is missing: the file is truncated');
  return parsed;
}
