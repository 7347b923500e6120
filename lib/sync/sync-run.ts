/**
 * One sync: agree on the collection (vector size, embedder, encryption), pull
 * what other devices pushed since this device's cursors, then push this
 * device's changes since its last pushed change-log position. Every cursor is
 * saved only after the work it covers succeeded, so a sync that fails or is
 * stopped halfway loses nothing and the next one finishes the work.
 */
import { SyncError, throwIfAborted } from '../errors.js';
import { PayloadCipher, type EncryptionOptions } from './encryption.js';
import { decodePoint, encodePoint, type SyncRecord } from './point-codec.js';
import { withRetry, type RetryPolicy } from './retry.js';
import type { ApplyResult, ChangeEntry, SyncHost, SyncState } from './sync-host.js';
import { FIELD, type CollectionHeader, type PointKind, type SyncPoint, type SyncTarget } from './sync-target.js';

/** What a sync did. */
export interface SyncResult {
  /** Points written to the server (records and tombstones). */
  uploaded: number;
  /** Records added or changed here from the server. */
  downloaded: number;
  /** Records deleted here because they were deleted on another device. */
  deleted: number;
  /** Records changed on both sides; resolved by last writer wins, the loser kept in history. */
  conflicts: number;
}

/** Progress of a sync. */
export interface SyncProgress {
  phase: 'connect' | 'pull' | 'push';
  /** Points handled so far in this phase. */
  done: number;
}

/** Everything one sync needs, resolved and validated. */
export interface SyncRunOptions {
  target: SyncTarget;
  /** Identifies the collection (its URL and name) for the cursors. */
  key: string;
  kinds: readonly PointKind[];
  encryption: EncryptionOptions | undefined;
  /** PBKDF2 iterations for a new encrypted collection. */
  kdfIterations: number;
  /** Points per upsert request. */
  batchSize: number;
  /** Points per scroll page. */
  pageSize: number;
  retry: RetryPolicy;
  signal: AbortSignal | undefined;
  onProgress: ((progress: SyncProgress) => void) | undefined;
  /**
   * Keys already derived in this session, by salt and passphrase: deriving takes
   * 600k PBKDF2 rounds, too slow to repeat on every auto-sync.
   */
  ciphers?: Map<string, PayloadCipher>;
}

/** Keys kept per session at most. */
const MAX_CIPHERS = 8;

/**
 * How many points before its cursor a pull re-reads of each other device: a batch
 * that device was writing while this one read may have been half visible (a
 * cluster applies a batch shard by shard). Re-read points change nothing.
 */
export const PULL_LOOKBACK = 256;

/** Change-log entries read at a time while pushing. */
const CHANGE_PAGE = 1024;

/** Upper bound on pages in one pull or push, so a misbehaving server cannot keep a sync running forever. */
const MAX_PAGES = 1_000_000;

const FRESH: SyncState = { pushedSeq: 0, seeded: [], pushCounter: 0, pull: [] };

/** Runs one sync of `host` with `options.target`. */
export async function runSync(host: SyncHost, options: SyncRunOptions): Promise<SyncResult> {
  const { target, signal } = options;
  const call = <T>(work: () => Promise<T>): Promise<T> => withRetry(work, options.retry, signal);
  const progress = (phase: SyncProgress['phase'], done: number): void => options.onProgress?.({ phase, done });

  progress('connect', 0);
  const embedder = await host.embedder();
  await call(() => target.ensureCollection(embedder.dimensions, { signal }));
  const cipher = await agree(host, options, embedder, call);
  throwIfAborted(signal);

  const stored = await host.loadState(options.key);
  const state: SyncState = structuredClone(stored ?? FRESH);
  const result: SyncResult = { uploaded: 0, downloaded: 0, deleted: 0, conflicts: 0 };
  // The push counter only grows, even when this store's state was lost (reset(), another
  // URL for the same collection): other devices pull this one by it.
  const onServer = await call(() => target.maxPushSeq(host.deviceId, { signal }));
  state.pushCounter = Math.max(state.pushCounter, onServer);

  // Kinds this collection has not had from this store yet go first, every record of them;
  // then pull, so that a change made here that lost to a newer one elsewhere counts as a
  // conflict (the server's conditional upsert would refuse it anyway); then push the changes.
  const seeded = await seed(host, options, state, cipher, result, call, progress);
  await pull(host, options, state, cipher, embedder.id, result, call, progress, seeded);
  await push(host, options, state, cipher, result, call, progress);
  return result;
}

type Call = <T>(work: () => Promise<T>) => Promise<T>;

/** Reads (or writes, for a new collection) the header and checks this device agrees with it. */
async function agree(host: SyncHost, options: SyncRunOptions, embedder: { id: string; dimensions: number }, call: Call): Promise<PayloadCipher | undefined> {
  const { target, signal, encryption } = options;
  let header = await call(() => target.readHeader({ signal }));
  let created: PayloadCipher | undefined;
  if (header === undefined) {
    const fresh: CollectionHeader = { format: 1, embedderId: embedder.id, dimensions: embedder.dimensions };
    if (encryption !== undefined) {
      const made = await PayloadCipher.create(encryption, options.kdfIterations);
      created = made.cipher;
      fresh.encryption = made.encryption;
    }
    const proposed = fresh;
    header = await call(() => target.writeHeader(proposed, { signal }));
    // Another device may have written its header first: then that one holds.
    if (JSON.stringify(header) !== JSON.stringify(proposed)) created = undefined;
  }
  if (header.embedderId !== embedder.id || header.dimensions !== embedder.dimensions) {
    throw new SyncError(
      `the collection holds vectors of embedder ${header.embedderId} (${header.dimensions} dimensions); this store uses ${embedder.id} (${embedder.dimensions}). Use another collection, or re-embed with the same model`,
      { reason: 'incompatible' },
    );
  }
  if (header.encryption === undefined) {
    if (encryption !== undefined) {
      throw new SyncError('the collection is not encrypted: sync it without encryption, or choose a new collection for end-to-end encryption', { reason: 'incompatible' });
    }
    return undefined;
  }
  if (encryption === undefined) throw new SyncError('the collection is end-to-end encrypted: pass encryption: { passphrase }', { reason: 'wrong-passphrase' });
  const cacheKey = JSON.stringify([header.encryption.salt, header.encryption.iterations, encryption.passphrase]);
  const cipher = created ?? options.ciphers?.get(cacheKey) ?? (await PayloadCipher.open(encryption.passphrase, header.encryption));
  if (options.ciphers !== undefined && !options.ciphers.has(cacheKey)) {
    if (options.ciphers.size >= MAX_CIPHERS) options.ciphers.delete(options.ciphers.keys().next().value!);
    options.ciphers.set(cacheKey, cipher);
  }
  return cipher;
}

async function pull(
  host: SyncHost,
  options: SyncRunOptions,
  state: SyncState,
  cipher: PayloadCipher | undefined,
  embedderId: string,
  result: SyncResult,
  call: Call,
  progress: Progress,
  seeded: readonly PointKind[],
): Promise<void> {
  const wanted = options.kinds;
  // Groups of kinds pulled together; kinds not yet pulled start a group from the beginning.
  const groups = state.pull.map((g) => ({ kinds: g.kinds.filter((k) => wanted.includes(k)), cursors: { ...g.cursors } })).filter((g) => g.kinds.length > 0);
  const others = state.pull.map((g) => ({ kinds: g.kinds.filter((k) => !wanted.includes(k)), cursors: g.cursors })).filter((g) => g.kinds.length > 0);
  const fresh = wanted.filter((k) => !groups.some((g) => g.kinds.includes(k)));
  if (fresh.length > 0) {
    // Kinds this sync just seeded: this device's own points of them are the ones it sent.
    const own = fresh.every((k) => seeded.includes(k)) ? { [host.deviceId]: state.pushCounter } : {};
    groups.push({ kinds: [...fresh], cursors: own });
  }
  const save = async (): Promise<void> => {
    state.pull = [...groups.map((g) => ({ kinds: g.kinds, cursors: { ...g.cursors } })), ...others];
    await host.saveState(options.key, state);
  };
  let done = 0;
  for (const group of groups) {
    const { cursors } = group;
    // The first page looks back a little on other devices' cursors (see PULL_LOOKBACK).
    let query: Record<string, number> = Object.fromEntries(
      Object.entries(cursors).map(([origin, seq]) => [origin, origin === host.deviceId ? seq : Math.max(0, seq - PULL_LOOKBACK)]),
    );
    for (let page = 0; page < MAX_PAGES; page++) {
      throwIfAborted(options.signal);
      const asked = query;
      const points = await call(() => options.target.scrollSince(asked, group.kinds, options.pageSize, { signal: options.signal }));
      const records: SyncRecord[] = [];
      for (const point of points) records.push(await decodePoint(point, cipher));
      throwIfAborted(options.signal);
      const applied: ApplyResult = await host.apply(records, embedderId, state.pushedSeq);
      result.downloaded += applied.downloaded;
      result.deleted += applied.deleted;
      result.conflicts += applied.conflicts;
      for (const point of points) {
        const origin = point.payload[FIELD.origin] as string; // decodePoint checked it
        cursors[origin] = Math.max(cursors[origin] ?? 0, Number(point.payload[FIELD.pushSeq]));
      }
      await save();
      done += points.length;
      progress('pull', done);
      if (points.length < options.pageSize) break;
      query = { ...cursors };
    }
  }
  if (groups.length > 1) {
    // All caught up: one group again, each origin at the least any group reached (re-reading a little is harmless).
    const merged: Record<string, number> = {};
    const origins = Object.keys(groups[0]!.cursors).filter((o) => groups.every((g) => o in g.cursors));
    for (const origin of origins) merged[origin] = Math.min(...groups.map((g) => g.cursors[origin]!));
    groups.splice(0, groups.length, { kinds: groups.flatMap((g) => g.kinds), cursors: merged });
    await save();
  }
}

type Progress = (phase: SyncProgress['phase'], done: number) => void;

/** Sends records in batches, each point with the next push counter of this device. */
function sender(host: SyncHost, options: SyncRunOptions, state: SyncState, cipher: PayloadCipher | undefined, result: SyncResult, call: Call, progress: Progress): (records: readonly SyncRecord[]) => Promise<void> {
  const { signal } = options;
  return async (records) => {
    for (let i = 0; i < records.length; i += options.batchSize) {
      throwIfAborted(signal);
      const batch = records.slice(i, i + options.batchSize);
      // Reserve the push counters before sending: a retried batch takes new ones, so no
      // device that saw part of a failed batch can skip a point of it.
      const first = state.pushCounter + 1;
      state.pushCounter += batch.length;
      await host.saveState(options.key, state);
      const points: SyncPoint[] = [];
      for (const [j, record] of batch.entries()) points.push(await encodePoint(record, first + j, cipher));
      await call(() => options.target.upsert(points, { signal }));
      // This device has seen its own points.
      for (const group of state.pull) group.cursors = { ...group.cursors, [host.deviceId]: state.pushCounter };
      result.uploaded += batch.length;
      progress('push', result.uploaded);
    }
  };
}

/** Pushes every record of the kinds not yet seeded to this collection; returns those kinds. */
async function seed(host: SyncHost, options: SyncRunOptions, state: SyncState, cipher: PayloadCipher | undefined, result: SyncResult, call: Call, progress: Progress): Promise<PointKind[]> {
  const unseeded = options.kinds.filter((k) => !state.seeded.includes(k));
  if (unseeded.length === 0) return [];
  // First push of these kinds to this collection: every record, not the change log
  // (which may have been compacted, or skipped them while they were not included).
  const send = sender(host, options, state, cipher, result, call, progress);
  const upTo = await host.lastSeq();
  let after: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { records, next } = await host.allRecords(unseeded, after, CHANGE_PAGE);
    await send(records);
    if (next === undefined) break;
    after = next;
  }
  // Changes made during the scan are pushed again by push(): pushing is idempotent.
  if (state.seeded.length === 0) state.pushedSeq = Math.max(state.pushedSeq, upTo);
  state.seeded = [...state.seeded, ...unseeded];
  await host.saveState(options.key, state);
  return unseeded;
}

async function push(host: SyncHost, options: SyncRunOptions, state: SyncState, cipher: PayloadCipher | undefined, result: SyncResult, call: Call, progress: Progress): Promise<void> {
  const send = sender(host, options, state, cipher, result, call, progress);
  for (let page = 0; page < MAX_PAGES; page++) {
    throwIfAborted(options.signal);
    const entries = await host.changesAfter(state.pushedSeq, CHANGE_PAGE);
    if (entries.length === 0) return;
    const latest = new Map<string, ChangeEntry>();
    for (const entry of entries) {
      if (entry.kind === undefined || !options.kinds.includes(entry.kind)) continue;
      const key = `${entry.kind}:${entry.rid}`;
      latest.delete(key);
      latest.set(key, entry);
    }
    await send(await host.records([...latest.values()], true));
    state.pushedSeq = entries[entries.length - 1]!.seq;
    await host.saveState(options.key, state);
  }
}
