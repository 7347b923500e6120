/**
 * Long-term memory operations (mem0-style CRUD) on the engine. Every write goes
 * through the single write path with its vector, so a memory is either fully
 * added, vector included, or not at all. Deletion leaves a tombstone for sync.
 */
import { NotFoundError, throwIfAborted, ValidationError } from '../../errors.js';
import { type CompiledFilter } from '../../search/filters.js';
import { SCOPE_FIELDS, type Scope } from '../../store/scope.js';
import { isLive, type Json, type MemoryRow, type Metadata, type Tier, type VectorRow } from '../../store/rows.js';
import { currentVector } from '../../store/current-vector.js';
import { recordHistory } from '../../store/history-rows.js';
import { LogMovedError, type RowChange } from '../../store/write.js';
import { contentHash } from '../../util/hash.js';
import { newId } from '../../util/id.js';
import type { EngineStore } from '../engine-store.js';
import type { SemanticIndex } from '../vectors/semantic-index.js';
import { readLogFloor } from '../../store/change-log.js';
import {
  mayBeSame,
  nearCandidates,
  nearDuplicate,
  sameStatement,
  type DedupeMode,
  type NearCandidates,
} from './near-duplicates.js';

/** A memory to store. */
export interface MemoryInput {
  text: string;
  tier: Tier;
  scope: Scope;
  metadata: Metadata;
  key?: string;
  value?: Json;
  expiresAt?: number;
}

/** A memory as faces return it. Times are epoch milliseconds. */
export type MemoryItem = Pick<
  MemoryRow,
  | 'id'
  | 'tier'
  | 'metadata'
  | 'createdAt'
  | 'updatedAt'
  | 'version'
  | 'userId'
  | 'agentId'
  | 'runId'
  | 'projectId'
  | 'sessionId'
  | 'key'
  | 'value'
  | 'expiresAt'
> & {
  /** The memory's text. */
  memory: string;
};

/** What add() did with one text: stored it (ADD), found it standing (NONE), or, with infer, changed or removed a standing memory. */
export interface AddResult extends MemoryItem {
  event: 'ADD' | 'UPDATE' | 'DELETE' | 'NONE';
  /** The text before an UPDATE or DELETE (infer only). */
  previous?: string;
}

/** The outcome of add(): one result per stored or matched memory. */
export interface AddOutcome {
  results: AddResult[];
  /** Set when the model failed (infer) and the raw input was stored instead. */
  error?: { code: string; message: string };
}

/** The public view of a row. */
export function toItem(row: MemoryRow): MemoryItem {
  const item: MemoryItem = {
    id: row.id,
    memory: row.text,
    tier: row.tier,
    metadata: row.metadata,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    version: row.version,
  };
  for (const k of SCOPE_FIELDS) if (row[k] !== undefined) item[k] = row[k];
  if (row.key !== undefined) item.key = row.key;
  if (row.value !== undefined) item.value = row.value;
  if (row.expiresAt !== undefined) item.expiresAt = row.expiresAt;
  return item;
}

/** Duplicate-detection hash: the same text (or key) in the same tier and scope. */
export function memoryHash(tier: Tier, scope: Scope, text: string, key?: string): string {
  const s = SCOPE_FIELDS.map((k) => scope[k] ?? '').join('\u0001');
  return contentHash(`${tier}\u0000${s}\u0000${key === undefined ? `t:${text}` : `k:${key}`}`);
}

function sameScope(row: MemoryRow, scope: Scope): boolean {
  return SCOPE_FIELDS.every((k) => row[k] === scope[k]);
}

function isDuplicate(row: MemoryRow, input: MemoryInput, now: number): boolean {
  if (!isLive(row, now)) return false;
  if (row.tier !== input.tier || !sameScope(row, input.scope)) return false;
  return input.key === undefined ? row.key === undefined && row.text === input.text : row.key === input.key;
}

/** The standing duplicate of each input, as the store has it now (inside a write transaction). */
async function findDuplicates(
  core: EngineStore,
  inputs: readonly MemoryInput[],
  now: number,
): Promise<(MemoryRow | undefined)[]> {
  const hashes = inputs.map((i) => memoryHash(i.tier, i.scope, i.text, i.key));
  // One lookup per distinct hash, all in flight at once: Dexie's anyOf() walks a cursor
  // key by key, a round trip each (bench/ingest).
  const { memories } = core.db;
  const found = await Promise.all([...new Set(hashes)].map((h) => memories.where('hash').equals(h).toArray()));
  const byHash = new Map<string, MemoryRow[]>();
  for (const row of found.flat()) byHash.set(row.hash, [...(byHash.get(row.hash) ?? []), row]);
  return inputs.map((input, i) => byHash.get(hashes[i]!)?.find((r) => isDuplicate(r, input, now)));
}

/**
 * Inside a write transaction: the memories (with their vectors) logged after
 * `seq`, as they are now, which a check made before the transaction could not
 * see (another add() in flight, another tab). This instance's own writes are
 * taken from what they logged (`core.ownMemory`), not read back. Undefined
 * when the log no longer reaches back to `seq` (compacted meanwhile).
 */
async function changedSince(
  core: EngineStore,
  seq: number,
  model: string,
): Promise<{ row: MemoryRow; vector: Float32Array | undefined }[] | undefined> {
  const { db } = core;
  const [floor, logged] = await Promise.all([readLogFloor(db), db.changes.where(':id').above(seq).toArray()]);
  if (floor > seq) return undefined;
  // The last change of each memory decides.
  const last = new Map<string, number>();
  for (const c of logged) if (c.table === 'memories') last.set(c.recordId, c.seq!);
  const { known, read } = ownOrUnread(core, last);
  if (read.length === 0) return known;
  const [rows, vectors] = await Promise.all([db.memories.bulkGet(read), db.vectors.bulkGet(read)]);
  return [
    ...known,
    ...rows.flatMap((row, i) => (row === undefined ? [] : [{ row, vector: currentVector(vectors[i], model)?.vector }])),
  ];
}

/**
 * The memories changed (id to the seq of its last change) split into those this instance's own writes
 * give as they are now (`known`) and those to read from the store (`read`).
 */
function ownOrUnread(
  core: EngineStore,
  last: ReadonlyMap<string, number>,
): { known: { row: MemoryRow; vector: Float32Array | undefined }[]; read: string[] } {
  const known: { row: MemoryRow; vector: Float32Array | undefined }[] = [];
  const read: string[] = [];
  for (const [id, at] of last) {
    const own = core.ownMemory(id, at);
    // A live row written without a new vector keeps its stored one: read it.
    if (own !== undefined && (own.row.deletedAt !== undefined || own.vector !== undefined))
      known.push({ row: own.row, vector: own.vector });
    else read.push(id);
  }
  return { known, read };
}

/**
 * Stores memories. With `dedupe` 'exact' or 'near', the same text (or key) in
 * the same tier and scope is stored once, and with 'near' also the same
 * statement said slightly differently (see near-duplicates.ts): the standing
 * memory is returned with `added: false`.
 *
 * A call embeds its texts as soon as it is called (meanwhile the calls before
 * it finish); its checks and its write run in call order (`core.inOrder`), so a
 * call's checks see every earlier call's memories. The write transaction starts
 * once the vectors are there, and writes each memory with its vector: all of it
 * lands or none. See docs/write-path.md.
 */
export async function addMemories(
  core: EngineStore,
  semantic: SemanticIndex,
  inputs: readonly MemoryInput[],
  signal?: AbortSignal,
  dedupe: DedupeMode = 'near',
): Promise<{ item: MemoryItem; added: boolean }[]> {
  if (inputs.length === 0) return [];
  const embedding = embedInputs(semantic, inputs, signal);
  return core.inOrder(async () => {
    const prepared = await prepareAdds(core, semantic, inputs, signal, dedupe, embedding);
    throwIfAborted(signal);
    const result = await writePrepared(core, prepared);
    afterWrite(semantic);
    return result;
  });
}

/** Writes prepared adds, their check taking this instance's own writes first, reading the log if that was not enough. */
function writePrepared(core: EngineStore, prepared: PreparedAdds): Promise<{ item: MemoryItem; added: boolean }[]> {
  const write = (withoutReads: boolean): Promise<{ item: MemoryItem; added: boolean }[]> =>
    core.write(async () => {
      const { changes, out, logAfter } = await prepared.plan(withoutReads);
      return { changes, result: out, ...(logAfter === undefined ? {} : { logAfter }) };
    });
  // Another instance logged after the index's position while the check relied on this instance's memory: check again, reading the log.
  return write(true).catch((e: unknown) => {
    if (e instanceof LogMovedError) return write(false);
    throw e;
  });
}

/** The embedding of an add's distinct texts: each text's vector, and the embedder's id. */
export interface Embedded {
  vectorOf: ReadonlyMap<string, Float32Array>;
  /** undefined: the store moved to another model (SemanticIndex.embedForWrite), memories are written without vectors. */
  embedderId: string | undefined;
}

/**
 * An embedding under way, started before the add's turn in the queue. Its
 * promise never rejects: `result()` gives the vectors or throws the embedder's
 * error where it is called (a rejection before the turn comes would otherwise
 * be reported as unhandled).
 */
export type Embedding = Promise<{ result(): Embedded }>;

/** Starts embedding the distinct texts of `inputs`. */
export function embedInputs(semantic: SemanticIndex, inputs: readonly MemoryInput[], signal?: AbortSignal): Embedding {
  const texts = [...new Set(inputs.map((i) => i.text))];
  return semantic.embedForWrite(texts, signal).then(
    (made) => {
      const embedded = {
        vectorOf: new Map(made === undefined ? [] : texts.map((t, i) => [t, made.vectors[i]!])),
        embedderId: made?.embedderId,
      };
      return { result: () => embedded };
    },
    (error: unknown) => ({
      result: () => {
        throw error;
      },
    }),
  );
}

/** An add whose checks outside the store are done; {@link PreparedAdds.plan} runs inside a write transaction. */
export interface PreparedAdds {
  /**
   * The row changes and outcomes, duplicates checked against the store as it
   * is inside the transaction. With `withoutReads`,
   * when no input has a standing candidate (keyless inputs only, no damaged
   * row) and everything logged after the index's position is this instance's
   * own (EngineStore.ownMemoriesSince), the check reads nothing: it returns
   * `logAfter`, and the write rolls back with LogMovedError if another
   * instance logged meanwhile (the caller plans again without it).
   */
  plan(withoutReads?: boolean): Promise<{
    changes: RowChange[];
    out: { item: MemoryItem; added: boolean }[];
    logAfter?: number;
  }>;
}

/**
 * The vector row of new memory `id` of `text`: a copy of the vector when another new memory of the batch has the
 * same text; undefined when the add embedded nothing (the store moved to another model).
 */
function newVectorRow(embedded: Embedded, id: string, text: string, copy: boolean): VectorRow | undefined {
  if (embedded.embedderId === undefined) return undefined;
  const vector = embedded.vectorOf.get(text);
  if (vector === undefined) throw new ValidationError('text', 'no vector was computed for a new memory');
  return { id, vector: copy ? vector.slice() : vector, embedderId: embedded.embedderId };
}

/** A memory a check compares an input with: its row, its vector when known, its comparable text (keyless, 'near' only). */
interface Candidate {
  row: MemoryRow;
  vector: Float32Array | undefined;
  comparable: string | undefined;
}

/** One input of an add, with what the checks before the write transaction found for it. */
interface Input {
  readonly input: MemoryInput;
  /** The analyzer's comparable text of a keyless input (when dedupe is on): its statement key finds its candidates. */
  readonly statement: string | undefined;
  /** The same text when 'near' compares it with other memories' (undefined otherwise). */
  readonly comparable: string | undefined;
  /** Standing memories of its statement key, from the index's scope table (ids, no read). */
  readonly candidates: readonly string[];
}

/** What the write transaction saw of the store before deciding: the candidates' rows and the memories logged since. */
interface Seen {
  /** Candidate rows by id, as the store has them now. */
  rowOf: ReadonlyMap<string, MemoryRow>;
  /** Memories logged after the scope table's position (undefined: the log no longer reaches back, check in the store). */
  since: readonly { row: MemoryRow; vector: Float32Array | undefined }[] | undefined;
  /** Set when the check read nothing, taking the log from this instance's own writes: the last position it covers. */
  logAfter: number | undefined;
}

/** The planned write of an add: row changes, outcomes, and the log position a read-free check relied on. */
type AddPlan = Awaited<ReturnType<PreparedAdds['plan']>>;

/**
 * Everything of an add that must happen before its write transaction (which
 * may await only the store): the near-duplicate candidates from the index, and
 * the embedding (started by `embedding`). A caller may combine the planned
 * changes with others in one transaction.
 *
 * Inside the transaction the plan runs in three steps: read what the check
 * needs ({@link readForCheck}), find each input's exact duplicate
 * ({@link findStanding}) and near duplicate ({@link nearDuplicate}), then
 * decide input by input, in order, against the store and the batch's own
 * earlier inputs ({@link writeNew}).
 */
export async function prepareAdds(
  core: EngineStore,
  semantic: SemanticIndex,
  memoryInputs: readonly MemoryInput[],
  signal?: AbortSignal,
  dedupe: DedupeMode = 'near',
  embedding: Embedding = embedInputs(semantic, memoryInputs, signal),
): Promise<PreparedAdds> {
  if (memoryInputs.length === 0) return { plan: () => Promise.resolve({ changes: [], out: [] }) };
  const exactCheck = dedupe !== 'off';
  const statements = memoryInputs.map((i) =>
    exactCheck && i.key === undefined ? core.analyzer.comparable(i.text) : undefined,
  );
  const near = exactCheck ? await nearCandidates(core, semantic, statements) : undefined;
  const inputs = checkedInputs(memoryInputs, statements, near, dedupe);
  const embedded = (await embedding).result();
  const plan = async (withoutReads = false): Promise<AddPlan> => {
    const now = core.now();
    const seen = await readForCheck(core, near, inputs, withoutReads);
    const recent = recentCandidates(core, seen, inputs);
    const standing = exactCheck ? await findStanding(core, near, inputs, seen, recent, now) : [];
    const found =
      dedupe === 'near' && near !== undefined
        ? inputs.map(
            (x, i) => standing[i] ?? nearDuplicate(core, near, seen.rowOf, x, embedded.vectorOf.get(x.input.text), now),
          )
        : standing;
    return writeNew(core, inputs, found, recent, embedded, now, exactCheck, seen.logAfter);
  };
  return { plan };
}

/** Each input with its statement key's text, the text 'near' compares, and its candidates from the index. */
function checkedInputs(
  memoryInputs: readonly MemoryInput[],
  statements: readonly (string | undefined)[],
  near: NearCandidates | undefined,
  dedupe: DedupeMode,
): Input[] {
  return memoryInputs.map((input, i) => ({
    input,
    statement: statements[i],
    comparable: dedupe === 'near' ? statements[i] : undefined,
    candidates: near?.candidates.get(i) ?? [],
  }));
}

/**
 * Step 1: the reads the check needs. Keyless inputs are checked against the index's candidates (the same
 * statement) and what was logged since the table was taken (another add() in flight, another tab), as the
 * store has them now. With `withoutReads`, when no input has a candidate and no input is keyed, and every
 * change since the table's position is this instance's own, the check reads nothing.
 */
async function readForCheck(
  core: EngineStore,
  near: NearCandidates | undefined,
  inputs: readonly Input[],
  withoutReads: boolean,
): Promise<Seen> {
  const candidateIds = [...new Set(inputs.flatMap((x) => x.candidates))];
  const own =
    withoutReads &&
    near?.complete === true &&
    candidateIds.length === 0 &&
    inputs.every((x) => x.input.key === undefined)
      ? core.ownMemoriesSince(near.seq)
      : undefined;
  if (own !== undefined) return { rowOf: new Map(), since: own.memories, logAfter: own.last };
  const [since, rows] = await Promise.all([
    near === undefined ? [] : changedSince(core, near.seq, near.embedderId),
    candidateIds.length === 0 ? [] : core.db.memories.bulkGet(candidateIds),
  ]);
  const rowOf = new Map(rows.flatMap((r) => (r === undefined ? [] : [[r.id, r] as const])));
  return { rowOf, since, logAfter: undefined };
}

/** The keyless memories logged since the table's position, to compare inputs with (comparable text only for 'near'). */
function recentCandidates(core: EngineStore, seen: Seen, inputs: readonly Input[]): Candidate[] {
  const compares = inputs.some((x) => x.comparable !== undefined);
  return (seen.since ?? []).flatMap(({ row, vector }) =>
    row.key !== undefined
      ? []
      : [{ row, vector, comparable: compares ? core.analyzer.comparable(row.text) : undefined }],
  );
}

/**
 * Step 2: each input's exact duplicate as the store has it now. Keyed inputs, or all when the table cannot
 * vouch for the store (the log no longer reaches back to its position, a damaged row was found), are looked
 * up by hash in the store; the others among their candidates and the memories logged since.
 */
async function findStanding(
  core: EngineStore,
  near: NearCandidates | undefined,
  inputs: readonly Input[],
  seen: Seen,
  recent: readonly Candidate[],
  now: number,
): Promise<(MemoryRow | undefined)[]> {
  const inStore = (x: Input): boolean =>
    seen.since === undefined || x.input.key !== undefined || near?.complete !== true;
  const byHash = await duplicatesInStore(core, inputs.filter(inStore), now);
  return inputs.map((x) => (inStore(x) ? byHash.get(x) : duplicateAmongSeen(x, seen, recent, now)));
}

/** The exact duplicate in the store of each input of `looked`, looked up by hash. */
async function duplicatesInStore(
  core: EngineStore,
  looked: readonly Input[],
  now: number,
): Promise<Map<Input, MemoryRow | undefined>> {
  return new Map(
    (
      await findDuplicates(
        core,
        looked.map((x) => x.input),
        now,
      )
    ).map((row, j) => [looked[j]!, row] as const),
  );
}

/** The exact duplicate of keyless input `x` among its candidates' rows and the memories logged since. */
function duplicateAmongSeen(x: Input, seen: Seen, recent: readonly Candidate[], now: number): MemoryRow | undefined {
  return [...x.candidates.map((id) => seen.rowOf.get(id)), ...recent.map((r) => r.row)].find(
    (r): r is MemoryRow => r !== undefined && isDuplicate(r, x.input, now),
  );
}

/**
 * Step 3: the changes and outcomes, input by input in order. An input is a duplicate of what the steps
 * before found (`found`: standing or near), else of an earlier input of the batch (the same text or key),
 * else (with 'near') of a memory logged since or an earlier input that says the same; otherwise it is a
 * new memory, written with its vector.
 */
function writeNew(
  core: EngineStore,
  inputs: readonly Input[],
  found: readonly (MemoryRow | undefined)[],
  recent: readonly Candidate[],
  embedded: Embedded,
  now: number,
  exactCheck: boolean,
  logAfter: number | undefined,
): AddPlan {
  const changes: RowChange[] = [];
  const out: { item: MemoryItem; added: boolean }[] = [];
  const fresh: Candidate[] = [];
  inputs.forEach(({ input, comparable }, i) => {
    const vector = embedded.vectorOf.get(input.text);
    const dup = found[i] ?? batchDuplicate(input, comparable, vector, { recent, fresh, exactCheck, now });
    if (dup !== undefined) {
      out.push({ item: toItem(dup), added: false });
      return;
    }
    const row = newRow(core, input, now);
    const copy = fresh.some((f) => f.row.text === input.text);
    fresh.push({ row, vector, comparable });
    const vectorRow = newVectorRow(embedded, row.id, input.text, copy);
    changes.push({ table: 'memories', op: 'add', id: row.id, after: row, ...(vectorRow && { vector: vectorRow }) });
    out.push({ item: toItem(row), added: true });
  });
  return { changes, out, ...(logAfter === undefined ? {} : { logAfter }) };
}

/**
 * An earlier input of the batch (`fresh`) with the same text or key, else (when `comparable` is set) a memory
 * logged since or an earlier input that says the same; undefined when there is none.
 */
function batchDuplicate(
  input: MemoryInput,
  comparable: string | undefined,
  vector: Float32Array | undefined,
  pool: { recent: readonly Candidate[]; fresh: readonly Candidate[]; exactCheck: boolean; now: number },
): MemoryRow | undefined {
  const { recent, fresh, exactCheck, now } = pool;
  return (
    (exactCheck ? fresh.find((f) => isDuplicate(f.row, input, now))?.row : undefined) ??
    (comparable !== undefined && vector !== undefined
      ? [...recent, ...fresh].find(
          (f) => f.vector !== undefined && mayBeSame(f, input, comparable, now) && sameStatement(f.vector, vector),
        )?.row
      : undefined)
  );
}

/** The row of a new memory of `input`. */
function newRow(core: EngineStore, input: MemoryInput, now: number): MemoryRow {
  const row: MemoryRow = {
    id: newId(now),
    text: input.text,
    tier: input.tier,
    ...input.scope,
    metadata: input.metadata,
    hash: memoryHash(input.tier, input.scope, input.text, input.key),
    createdAt: now,
    updatedAt: now,
    accessCount: 0,
    version: 1,
    origin: core.settings.deviceId,
  };
  if (input.key !== undefined) row.key = input.key;
  if (input.value !== undefined) row.value = input.value;
  if (input.expiresAt !== undefined) row.expiresAt = input.expiresAt;
  return row;
}

/**
 * Keeps the index current after a write, and snapshots it when much has
 * changed, off the caller's path: the write is committed already, and every
 * search (and the next add's near-duplicate check) catches up first, queued
 * behind this work, so nothing is missed. A failure here only delays the index
 * update to that next catch-up, which reports it.
 */
export function afterWrite(semantic: SemanticIndex): void {
  const update = async (): Promise<void> => {
    const { state } = await semantic.ready();
    await state.afterOwnWrite();
    await state.maybeSnapshot();
  };
  update().catch(() => undefined);
}

/** A live memory row, or undefined. */
export async function getLive(core: EngineStore, id: string): Promise<MemoryRow | undefined> {
  const row = await core.db.memories.get(id);
  return isLive(row, core.now()) ? row : undefined;
}

/** What an update changes. */
export interface MemoryPatch {
  text?: string;
  metadata?: Metadata;
  value?: Json;
  expiresAt?: number;
}

/** Updates a memory: re-embeds when the text changes, bumps `version`, writes history. */
export async function updateMemory(
  core: EngineStore,
  semantic: SemanticIndex,
  id: string,
  patch: MemoryPatch,
  signal?: AbortSignal,
): Promise<MemoryItem> {
  const current = await getLive(core, id);
  if (current === undefined) throw new NotFoundError('memory', id);
  const textChanged = patch.text !== undefined && patch.text !== current.text;
  const embedded = textChanged ? await semantic.embedForWrite([patch.text!], signal) : undefined;
  throwIfAborted(signal);
  const item = await core.write(async () => {
    const before = await core.db.memories.get(id);
    if (before === undefined || before.deletedAt !== undefined) throw new NotFoundError('memory', id);
    const change = updateChange(
      core,
      before,
      patch,
      !textChanged ? undefined : embedded ? { vector: embedded.vectors[0]!, embedderId: embedded.embedderId } : null,
    );
    return { changes: [change], result: toItem(change.after!) };
  });
  afterWrite(semantic);
  return item;
}

/**
 * The change that applies `patch` to a live row (inside a write transaction); `vector` when the text changed,
 * null when it changed but nothing embedded it (the store moved to another model: the old vector goes).
 */
export function updateChange(
  core: EngineStore,
  before: MemoryRow,
  patch: MemoryPatch,
  vector?: { vector: Float32Array; embedderId: string } | null,
): RowChange & { table: 'memories' } {
  const after = patchedRow(core, before, patch);
  const change: RowChange & { table: 'memories' } = { table: 'memories', op: 'update', id: before.id, before, after };
  if (vector === null) change.vector = null;
  else if (vector !== undefined) change.vector = { id: before.id, ...vector };
  return change;
}

/** Row `before` with `patch` applied by this device now: its version bumped, its hash recomputed when the text changes. */
function patchedRow(core: EngineStore, before: MemoryRow, patch: MemoryPatch): MemoryRow {
  const now = core.now();
  const after: MemoryRow = {
    ...before,
    updatedAt: Math.max(now, before.updatedAt),
    version: before.version + 1,
    origin: core.settings.deviceId,
  };
  if (patch.text !== undefined) {
    after.text = patch.text;
    after.hash = memoryHash(after.tier, after, after.text, after.key);
  }
  if (patch.metadata !== undefined) after.metadata = patch.metadata;
  if (patch.value !== undefined) after.value = patch.value;
  if (patch.expiresAt !== undefined) after.expiresAt = patch.expiresAt;
  return after;
}

/** The change that tombstones a live row (the write path strips its text). */
export function deleteChange(core: EngineStore, before: MemoryRow): RowChange & { table: 'memories' } {
  const now = core.now();
  const after: MemoryRow = {
    ...before,
    deletedAt: now,
    updatedAt: Math.max(now, before.updatedAt),
    version: before.version + 1,
    origin: core.settings.deviceId,
  };
  return { table: 'memories', op: 'delete', id: before.id, before, after };
}

/** Tombstones memories (kept for sync, gone from search and listing). Returns how many. */
export async function deleteMemories(
  core: EngineStore,
  semantic: SemanticIndex,
  ids: readonly string[],
): Promise<number> {
  const count = await core.write(async () => {
    const rows = await core.db.memories.bulkGet([...ids]);
    const changes: RowChange[] = [];
    for (const before of rows) {
      if (before === undefined || before.deletedAt !== undefined) continue;
      changes.push(deleteChange(core, before));
    }
    return { changes, result: changes.length };
  });
  if (semantic.started) afterWrite(semantic);
  return count;
}

/** Live rows that pass `filter`, using a scope index when the filter has a scope. */
export async function matchingRows(core: EngineStore, filter: CompiledFilter): Promise<MemoryRow[]> {
  const field = SCOPE_FIELDS.find((k) => filter.scope[k] !== undefined);
  const { memories } = core.db;
  const rows =
    field === undefined ? await memories.toArray() : await memories.where(field).equals(filter.scope[field]!).toArray();
  const now = core.now();
  return rows.filter((r) => filter.matches(r, now));
}

/** Newest first, paged, with the number that matched. */
export async function listMemories(
  core: EngineStore,
  filter: CompiledFilter,
  offset: number,
  limit: number,
): Promise<{ items: MemoryItem[]; total: number }> {
  const rows = await matchingRows(core, filter);
  rows.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  return { items: rows.slice(offset, offset + limit).map(toItem), total: rows.length };
}

/** One entry of a memory's history. */
export interface MemoryHistoryEntry {
  op: 'ADD' | 'UPDATE' | 'DELETE';
  /** The text before the change (null for ADD). */
  previous: string | null;
  /** The text after the change (null for DELETE). */
  memory: string | null;
  version: number;
  at: number;
  metadata: Metadata | null;
}

/** A memory's history, oldest first. */
export async function memoryHistory(core: EngineStore, id: string): Promise<MemoryHistoryEntry[]> {
  const { db } = core;
  const { entries, current } = await db.transaction('r', [db.history, db.memories], async () => ({
    entries: (await db.history.where('recordId').equals(id).toArray()).filter((e) => e.table === 'memories'),
    current: await db.memories.get(id),
  }));
  return recordHistory('memories', id, entries, current).map((e) => {
    const before = e.before as MemoryRow | null;
    const after = e.after as MemoryRow | null;
    const op = e.op === 'add' ? 'ADD' : e.op === 'update' ? 'UPDATE' : 'DELETE';
    return {
      op,
      previous: before?.text ?? null,
      memory: op === 'DELETE' ? null : (after?.text ?? null),
      version: after?.version ?? before?.version ?? 0,
      at: e.at,
      metadata: after?.metadata ?? null,
    };
  });
}

/** Deletes (tombstones) every memory that matches a filter (the face refuses an empty one). */
export async function deleteMatching(
  core: EngineStore,
  semantic: SemanticIndex,
  filter: CompiledFilter,
): Promise<number> {
  const rows = await matchingRows(core, filter);
  return deleteMemories(
    core,
    semantic,
    rows.map((r) => r.id),
  );
}
