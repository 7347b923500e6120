/**
 * Search over the whole conversation log (MemGPT recall memory): BM25 over the
 * keyword terms index, and inclusive date ranges over the createdAt index.
 */
import type { Collection } from 'dexie';
import { MESSAGE_CORPUS, type MessageTermsFields } from '../../store/keyword-terms.js';
import type { MessageRow, Role } from '../../store/rows.js';
import type { EngineStore } from '../engine-store.js';
import { keywordState } from '../keywords/keyword-state.js';

/** Which messages a recall search may return. */
export interface MessageFilter {
  threadId?: string;
  agentId?: string;
  userId?: string;
  role?: Role;
}

/** A page of messages and how many matched in all. */
export interface MessagePage {
  rows: MessageRow[];
  total: number;
}

const isUnfiltered = (f: MessageFilter): boolean =>
  f.threadId === undefined && f.agentId === undefined && f.userId === undefined && f.role === undefined;

/** Whether a message (or its terms entry, which carries the same fields) passes the filter. */
function messageFilter(f: MessageFilter): (m: MessageTermsFields) => boolean {
  return (m) =>
    (f.threadId === undefined || m.threadId === f.threadId) &&
    (f.agentId === undefined || m.agentId === f.agentId) &&
    (f.userId === undefined || m.userId === f.userId) &&
    (f.role === undefined || m.role === f.role);
}

/** Messages ranked by BM25 relevance to `query`, paged. */
export async function searchMessagesByText(
  core: EngineStore,
  query: string,
  filter: MessageFilter,
  start: number,
  count: number,
): Promise<MessagePage> {
  const { db } = core;
  // In-memory postings kept current from the change log (lib/engine/keywords/keyword-state.ts); filter inside the walk.
  const accepts = isUnfiltered(filter) ? undefined : messageFilter(filter);
  const { hits, total } = await (
    await keywordState(core)
  ).search(MESSAGE_CORPUS, query, {
    depth: start + count,
    ...(accepts === undefined ? {} : { accept: (_id, fields) => accepts(fields) }),
  });
  const ids = hits.slice(start, start + count).map((h) => h.id);
  const rows = (await db.messages.bulkGet(ids)).filter((r): r is MessageRow => r !== undefined);
  return { rows, total };
}

/** Messages created in [from, to] (inclusive), oldest first, paged. */
export async function searchMessagesByDate(
  core: EngineStore,
  from: number,
  to: number,
  filter: MessageFilter,
  start: number,
  count: number,
): Promise<MessagePage> {
  if (to < from) return { rows: [], total: 0 };
  const collection = createdBetween(core, from, to, filter);
  const [total, rows] = await Promise.all([
    collection.clone().count(),
    collection.clone().offset(start).limit(count).toArray(),
  ]);
  return { rows, total };
}

/** The messages created in [from, to] that pass `filter`: through the thread's date index when it names one. */
function createdBetween(core: EngineStore, from: number, to: number, filter: MessageFilter): Collection<MessageRow> {
  const { db } = core;
  const base =
    filter.threadId === undefined
      ? db.messages.where('createdAt').between(from, to, true, true)
      : db.messages.where('[threadId+createdAt]').between([filter.threadId, from], [filter.threadId, to], true, true);
  const needsFilter = filter.agentId !== undefined || filter.userId !== undefined || filter.role !== undefined;
  return needsFilter ? base.filter(messageFilter(filter)) : base;
}
