/**
 * Row shapes of every table. Optional fields are absent (never undefined-valued)
 * so that IndexedDB leaves them out of indexes.
 */

/** Roles a conversation message can have. */
export type Role = 'system' | 'user' | 'assistant' | 'tool';
export const ROLES: readonly Role[] = ['system', 'user', 'assistant', 'tool'];

/** A JSON value, as stored in metadata and key/value memories. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type Metadata = Record<string, Json>;

/** One message of the conversation log (recall memory). */
export interface MessageRow {
  id: string;
  threadId: string;
  agentId?: string;
  userId?: string;
  role: Role;
  content: string;
  name?: string;
  toolCallId?: string;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Order within the thread; prepends get smaller numbers than every existing message. */
  position: number;
  /** Duplicate-detection hash of role, name and content. */
  hash: string;
  /** 1 while the message is in the agent's context window, 0 once trimmed or swapped out. */
  inContext: 0 | 1;
  metadata?: Metadata;
}

/** The three memory tiers. */
export type Tier = 'short_term' | 'project' | 'long_term';
export const TIERS: readonly Tier[] = ['short_term', 'project', 'long_term'];

/** A long-term (or tiered) memory. */
export interface MemoryRow {
  id: string;
  text: string;
  tier: Tier;
  userId?: string;
  agentId?: string;
  runId?: string;
  projectId?: string;
  sessionId?: string;
  /** Key of a key/value memory (remember/recall). */
  key?: string;
  value?: Json;
  metadata: Metadata;
  /** Hash of the text within its scope, for duplicate detection. */
  hash: string;
  createdAt: number;
  updatedAt: number;
  expiresAt?: number;
  accessCount: number;
  lastAccessedAt?: number;
  version: number;
  /** Tombstone: set when deleted, kept so sync can carry the deletion. */
  deletedAt?: number;
  /** Device id of the device that made this version. */
  origin: string;
}

/** A memory's vector, kept apart so listing memories never reads vectors. */
export interface VectorRow {
  id: string;
  vector: Float32Array;
  embedderId: string;
  /**
   * The vector of the model a re-embed is moving the store to, kept beside the current one until
   * the switch (lib/engine/vectors/reembed.ts); dropped with the row whenever the memory gets a new
   * vector or is deleted, so it never outlives the text it was made from.
   */
  staged?: StagedVector;
}

/** A vector made by a re-embed's model, waiting for the switch, and the hash of the text it embeds. */
export interface StagedVector {
  vector: Float32Array;
  embedderId: string;
  /** contentHash() of the memory's text when it was embedded. */
  textHash: string;
}

/** Which table a change or history entry is about. */
export type TableName = 'messages' | 'memories' | 'blocks' | 'traces';
export type ChangeOp = 'add' | 'update' | 'delete';

/** One entry of a record's history. */
export interface HistoryRow {
  seq?: number;
  table: TableName;
  recordId: string;
  op: ChangeOp;
  before: unknown;
  after: unknown;
  at: number;
}

/** A core memory block (MemGPT): the agent's own (no userId) or one user's. */
export interface BlockRow {
  agentId: string;
  /** The user the block belongs to; absent on the agent's own blocks. */
  userId?: string;
  /** Set on an agent's own block that every user of the agent sees (asked for explicitly). */
  shared?: true;
  label: string;
  value: string;
  limit: number;
  version: number;
  updatedAt: number;
}

/** One step of a reasoning trace. */
export interface TraceRow {
  id: string;
  sessionId: string;
  projectId?: string;
  step: string;
  thinking: string;
  evidence?: Json;
  confidence?: number;
  at: number;
}

/** The append-only change log that the vector index and sync feed from. */
export interface ChangeRow {
  seq?: number;
  table: TableName;
  recordId: string;
  op: ChangeOp;
  at: number;
}

/** Key/value rows: schema version, device id, embedder, index snapshot, cursors, statistics. */
export interface MetaRow {
  key: string;
  value: unknown;
}

/**
 * The keyword terms of one document of corpus `c` ('m' messages, 'v' memories):
 * one row per document, keyed by [c+d] and read whole into the in-memory
 * postings (no index on `k` since schema v5: no query looks a term up in
 * IndexedDB). Terms carry their corpus as a prefix ('m:paris'). Message rows
 * carry the fields recall search filters on.
 */
export interface TermsRow {
  c: 'm' | 'v';
  /** Document id. */
  d: string;
  /** Distinct terms, prefixed with the corpus. */
  k: string[];
  /** Count of each term in the document, aligned with `k`. */
  f: number[];
  /** Document length in indexed terms. */
  n: number;
  t?: string;
  a?: string;
  u?: string;
  r?: Role;
}

/** A memory that counts (belongs in the index, in searches and checks): present, not deleted, not expired at `now`. */
export function isLive<R extends Pick<MemoryRow, 'deletedAt' | 'expiresAt'>>(
  row: R | undefined,
  now: number,
): row is R {
  return row !== undefined && row.deletedAt === undefined && (row.expiresAt === undefined || row.expiresAt > now);
}
