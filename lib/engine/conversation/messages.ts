/**
 * Conversation log operations: the engine side of every conversation face.
 * Messages are ordered by `position` within a thread; `inContext` says whether
 * a message is in the agent's context window. Trimmed messages stay in the log
 * (and in recall search) until deleted.
 */
import { ValidationError } from '../../errors.js';
import type { MessageRow, Metadata, Role } from '../../store/rows.js';
import type { RowChange } from '../../store/write.js';
import { MAX_KEY, MIN_KEY } from '../../store/write.js';
import { contentHash } from '../../util/hash.js';
import type { EngineStore } from '../engine-store.js';

/** A stored message as faces return it. */
export interface Message {
  id: string;
  threadId: string;
  role: Role;
  content: string;
  /** Epoch milliseconds. */
  createdAt: number;
  name?: string;
  toolCallId?: string;
  agentId?: string;
  userId?: string;
  metadata?: Metadata;
}

/** Who a thread belongs to. */
export interface ThreadRef {
  threadId: string;
  agentId?: string;
  userId?: string;
}

/** The public view of a row. */
export function toMessage(row: MessageRow): Message {
  const m: Message = {
    id: row.id,
    threadId: row.threadId,
    role: row.role,
    content: row.content,
    createdAt: row.createdAt,
  };
  if (row.name !== undefined) m.name = row.name;
  if (row.toolCallId !== undefined) m.toolCallId = row.toolCallId;
  if (row.agentId !== undefined) m.agentId = row.agentId;
  if (row.userId !== undefined) m.userId = row.userId;
  if (row.metadata !== undefined) m.metadata = row.metadata;
  return m;
}

/** The duplicate-detection hash: role, name and content. */
export function messageHash(role: Role, content: string, name: string | undefined): string {
  return contentHash(`${role}\u0000${name ?? ''}\u0000${content}`);
}

/** Where new messages go in the thread. */
export type Placement = 'append' | 'prepend';

/**
 * Adds validated rows to a thread in one transaction. Without `allowDuplicates`,
 * a row whose id, or whose role + name + content, already stands in the thread
 * (or earlier in the same batch) is skipped and the standing message returned.
 */
export async function addMessages(
  core: EngineStore,
  threadId: string,
  rows: MessageRow[],
  options: { allowDuplicates: boolean; placement: Placement },
): Promise<Message[]> {
  return core.write(async () => {
    const known = await knownMessages(core, threadId, rows, options.allowDuplicates);
    const { out, fresh } = admit(rows, known);
    await assignPositions(core, threadId, fresh, options.placement);
    const changes: RowChange[] = fresh.map((after) => ({ table: 'messages', op: 'add', id: after.id, after }));
    return { changes, result: out.map(toMessage) };
  });
}

/**
 * The messages a batch is checked against: by id, and (unless duplicates are allowed) by
 * role + name + content, the batch's own rows joining as they are admitted.
 */
class KnownMessages {
  readonly #byId = new Map<string, MessageRow>();
  readonly #byHash = new Map<string, MessageRow[]>();
  readonly #allowDuplicates: boolean;

  constructor(allowDuplicates: boolean) {
    this.#allowDuplicates = allowDuplicates;
  }

  /** A message standing under its id (whatever it says). */
  addId(row: MessageRow): void {
    this.#byId.set(row.id, row);
  }

  /** A message standing under its id and its content. */
  add(row: MessageRow): void {
    this.#byId.set(row.id, row);
    this.#byHash.set(row.hash, [...(this.#byHash.get(row.hash) ?? []), row]);
  }

  /** The standing message `row` repeats, if any. */
  find(row: MessageRow): MessageRow | undefined {
    return (
      this.#byId.get(row.id) ??
      (this.#allowDuplicates ? undefined : this.#byHash.get(row.hash)?.find((m) => sameMessage(m, row)))
    );
  }
}

/** The thread's messages that `rows` may repeat: those standing under their ids, and those of the same hashes. */
async function knownMessages(
  core: EngineStore,
  threadId: string,
  rows: readonly MessageRow[],
  allowDuplicates: boolean,
): Promise<KnownMessages> {
  const standing = await core.db.messages.bulkGet(rows.map((r) => r.id));
  // One equality lookup per hash, not anyOf(): an encrypted store blinds the hash index, which answers
  // equality only (anyOf walks the index in key order).
  const candidates = allowDuplicates ? [] : await sameHashes(core, threadId, rows);
  const known = new KnownMessages(allowDuplicates);
  for (const row of standing) {
    if (row === undefined) continue;
    // Ids are unique keys: a standing id is always returned, never written twice.
    if (row.threadId !== threadId) throw new ValidationError('id', `${row.id} already belongs to another thread`);
    known.addId(row);
  }
  candidates.forEach((row) => {
    known.add(row);
  });
  return known;
}

/** The thread's messages of the same hashes as `rows`, read with one equality lookup per hash. */
async function sameHashes(core: EngineStore, threadId: string, rows: readonly MessageRow[]): Promise<MessageRow[]> {
  return (
    await Promise.all(
      [...new Set(rows.map((r) => r.hash))].map((hash) =>
        core.db.messages.where('[threadId+hash]').equals([threadId, hash]).toArray(),
      ),
    )
  ).flat();
}

/** Each row's message in order (the standing one it repeats, or itself), and the rows to write. */
function admit(rows: readonly MessageRow[], known: KnownMessages): { out: MessageRow[]; fresh: MessageRow[] } {
  const out: MessageRow[] = [];
  const fresh: MessageRow[] = [];
  for (const row of rows) {
    const same = known.find(row);
    if (same !== undefined) {
      out.push(same);
      continue;
    }
    known.add(row);
    fresh.push(row);
    out.push(row);
  }
  return { out, fresh };
}

function sameMessage(a: MessageRow, b: MessageRow): boolean {
  return a.role === b.role && a.content === b.content && a.name === b.name;
}

async function edgePositions(core: EngineStore, threadId: string): Promise<{ first?: MessageRow; last?: MessageRow }> {
  const range = core.db.messages.where('[threadId+position]').between([threadId, MIN_KEY], [threadId, MAX_KEY]);
  const [first, last] = await Promise.all([range.first(), range.clone().last()]);
  return { ...(first === undefined ? {} : { first }), ...(last === undefined ? {} : { last }) };
}

/**
 * Sets positions: appended rows go after the last message; prepended rows go
 * right after a leading system message of the context window (MemGPT's
 * prepend_to_messages), or before everything when there is none.
 */
async function assignPositions(
  core: EngineStore,
  threadId: string,
  rows: MessageRow[],
  placement: Placement,
): Promise<void> {
  if (rows.length === 0) return;
  const { first, last } = await edgePositions(core, threadId);
  if (placement === 'append' || first === undefined) {
    const start = last === undefined ? 0 : Math.floor(last.position) + 1;
    rows.forEach((r, i) => (r.position = start + i));
    return;
  }
  prependPositions(rows, await contextRows(core, threadId), first);
}

/**
 * Positions of prepended `rows`: evenly between a leading system message of `context` and the message
 * after it, else just before `first`, the thread's first message.
 */
function prependPositions(rows: MessageRow[], context: readonly MessageRow[], first: MessageRow): void {
  const head = context[0];
  if (head?.role === 'system') {
    const next = context[1]?.position ?? head.position + rows.length + 1;
    const step = (next - head.position) / (rows.length + 1);
    rows.forEach((r, i) => (r.position = head.position + step * (i + 1)));
  } else {
    const start = first.position - rows.length;
    rows.forEach((r, i) => (r.position = start + i));
  }
}

/** The context window of a thread, in order. */
export async function contextRows(core: EngineStore, threadId: string): Promise<MessageRow[]> {
  return core.db.messages
    .where('[threadId+inContext+position]')
    .between([threadId, 1, MIN_KEY], [threadId, 1, MAX_KEY])
    .toArray();
}

/** Every message of a thread (context or not), in order. */
export async function threadRows(core: EngineStore, threadId: string): Promise<MessageRow[]> {
  return core.db.messages.where('[threadId+position]').between([threadId, MIN_KEY], [threadId, MAX_KEY]).toArray();
}

/** Deletes messages of a thread by id (all or nothing). */
export async function deleteMessages(core: EngineStore, threadId: string, ids: readonly string[]): Promise<number> {
  const { db } = core;
  return core.write(async () => {
    const rows = await db.messages.bulkGet([...ids]);
    const changes: RowChange[] = [];
    rows.forEach((row, i) => {
      if (row?.threadId !== threadId)
        throw new ValidationError('ids', `no message ${ids[i] ?? ''} in thread ${threadId}`);
      changes.push({ table: 'messages', op: 'delete', id: row.id, before: row });
    });
    return { changes, result: changes.length };
  });
}

/** Moves messages in or out of the context window; they stay in the log. */
export async function setInContext(core: EngineStore, rows: readonly MessageRow[], inContext: 0 | 1): Promise<void> {
  await core.write(async () => {
    await Promise.resolve();
    const changes: RowChange[] = rows
      .filter((r) => r.inContext !== inContext)
      .map((before) => ({ table: 'messages', op: 'update', id: before.id, before, after: { ...before, inContext } }));
    return { changes, result: undefined };
  });
}

/**
 * Replaces a thread's messages with `rows` in one transaction (used by
 * loadStateDict and clear). Ids used by another thread are rejected.
 */
export async function replaceThread(core: EngineStore, threadId: string, rows: readonly MessageRow[]): Promise<void> {
  const { db } = core;
  await core.write(async () => {
    const current = await threadRows(core, threadId);
    const others = await db.messages.bulkGet(rows.map((r) => r.id));
    others.forEach((o, i) => {
      if (o !== undefined && o.threadId !== threadId)
        throw new ValidationError(`messages[${i}].id`, `${o.id} already belongs to another thread`);
    });
    return { changes: replacingChanges(current, rows), result: undefined };
  });
}

/** The changes that turn a thread's `current` messages into `rows`: the others deleted, then each row added or updated. */
function replacingChanges(current: readonly MessageRow[], rows: readonly MessageRow[]): RowChange[] {
  const keep = new Set(rows.map((r) => r.id));
  const changes: RowChange[] = current
    .filter((r) => !keep.has(r.id))
    .map((before) => ({ table: 'messages', op: 'delete', id: before.id, before }));
  const byId = new Map(current.map((r) => [r.id, r]));
  for (const after of rows) {
    const before = byId.get(after.id);
    changes.push(
      before === undefined
        ? { table: 'messages', op: 'add', id: after.id, after }
        : { table: 'messages', op: 'update', id: after.id, before, after },
    );
  }
  return changes;
}

/** Swaps in a new system message: the old leading one leaves the context but stays in the log. */
export async function swapSystemMessage(core: EngineStore, threadId: string, row: MessageRow): Promise<Message> {
  return core.write(async () => {
    const context = await contextRows(core, threadId);
    const head = context[0];
    const changes: RowChange[] = [];
    if (head?.role === 'system') {
      row.position = head.position;
      changes.push({ table: 'messages', op: 'update', id: head.id, before: head, after: { ...head, inContext: 0 } });
    } else {
      const { first } = await edgePositions(core, threadId);
      row.position = first === undefined ? 0 : first.position - 1;
    }
    const existing = await core.db.messages.get(row.id);
    if (existing !== undefined) throw new ValidationError('message.id', `${row.id} already exists`);
    changes.push({ table: 'messages', op: 'add', id: row.id, after: row });
    return { changes, result: toMessage(row) };
  });
}
