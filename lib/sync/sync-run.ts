/**
 * One sync: agree on the collection (vector size, embedder, encryption), pull
 * what other devices pushed since this device's cursors, then push this
 * device's changes since its last pushed change-log position. Every cursor is
 * saved only after the work it covers succeeded, so a sync that fails or is
 * stopped halfway loses nothing and the next one finishes the work.
 */
import { SyncError, throwIfAborted } from '../errors.js';
import { PayloadCipher, SEALED_FORMAT, type EncryptionOptions, type KeyCache } from './encryption.js';
import { decodePoint, encodePoint, type PushPosition, type SyncRecord } from './point-codec.js';
import type { RefusalLog, RefusalReason } from './refusals.js';
import { withRetry, type RetryPolicy } from './retry.js';
import type { ApplyResult, ChangeEntry, SyncHost, SyncState } from './sync-host.js';
import type { CollectionHeader, PointKind, SyncPoint, SyncTarget } from './sync-target.js';

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
  /** Keys already derived in this session (see KeyCache). */
  keys?: KeyCache;
  /** Where refused points are counted (syncStatus().refused). */
  refusals?: RefusalLog;
}

/**
 * How many points before its cursor a pull re-reads of each other device: a batch
 * that device was writing while this one read may have been half visible (a
 * cluster applies a batch shard by shard). Re-read points change nothing.
 */
export const PULL_LOOKBACK = 256;

/** Change-log entries read at a time while pushing. */
const CHANGE_PAGE = 1024;

/**
 * Bytes one pulled point may take when its record keeps the store's limits: text,
 * metadata and value within maxContentBytes each, JSON-escaped (up to 6 bytes a
 * character) and sealed (base64: 4/3), plus the vector. A scroll answer may be the
 * larger of this and {@link MIN_PAGE_BYTES}; a page over it is asked again, halved.
 */
export function maxPointBytes(maxContentBytes: number): number {
  return 16 * maxContentBytes + 1024 * 1024;
}

/** The least a scroll answer may take (a full page of ordinary memories is far below it). */
export const MIN_PAGE_BYTES = 32 * 1024 * 1024;

/** Upper bound on pages in one pull or push, so a misbehaving server cannot keep a sync running forever. */
const MAX_PAGES = 1_000_000;

const FRESH: SyncState = { pushedSeq: 0, seeded: [], pushCounter: 0, pull: [] };

/** Runs one sync of `host` with `options.target`. */
export async function runSync(host: SyncHost, options: SyncRunOptions): Promise<SyncResult> {
  const { target, signal } = options;
  const call: Call = (work) => withRetry(work, options.retry, signal);

  options.onProgress?.({ phase: 'connect', done: 0 });
  const embedder = await host.embedder();
  await call(() => target.ensureCollection(embedder.dimensions, { signal }));
  const cipher = await agree(options, embedder, call);
  throwIfAborted(signal);

  const state = await startingState(host, options, call);
  const run = new SyncRun(host, options, state, cipher, embedder, call);
  // Kinds this collection has not had from this store yet go first, every record of them;
  // then pull, so that a change made here that lost to a newer one elsewhere counts as a
  // conflict (the server's conditional upsert would refuse it anyway); then push the changes.
  const seeded = await run.seed();
  await run.pull(seeded);
  await run.push();
  return run.result;
}

type Call = <T>(work: () => Promise<T>) => Promise<T>;

/** The state this sync starts from: the saved one (or a fresh one), its push counter caught up with the server's. */
async function startingState(host: SyncHost, options: SyncRunOptions, call: Call): Promise<SyncState> {
  const { target, signal } = options;
  const stored = await host.loadState(options.key);
  const state: SyncState = structuredClone(stored ?? FRESH);
  // The push counter only grows, even when this store's state was lost (reset(), another
  // URL for the same collection): other devices pull this one by it.
  const onServer = await call(() => target.maxPushSeq(host.deviceId, { signal }));
  state.pushCounter = Math.max(state.pushCounter, onServer);
  return state;
}

/** The embedder's identity, as the collection header records it. */
interface EmbedderIdentity {
  id: string;
  dimensions: number;
}

/**
 * Reads (or writes, for a new collection) the header and checks this device agrees with it:
 * the same embedder, and encryption on both sides or on neither. Returns the cipher of an
 * encrypted collection.
 */
async function agree(
  options: SyncRunOptions,
  embedder: EmbedderIdentity,
  call: Call,
): Promise<PayloadCipher | undefined> {
  const { header, created } = await collectionHeader(options, embedder, call);
  checkEmbedder(header, embedder);
  const encryption = sealedWith(header, options.encryption);
  if (encryption === undefined) return undefined;
  const cipher = created ?? (await PayloadCipher.open(encryption.passphrase, header, options.keys));
  if (encryption.encryptVectors === true && !cipher.encryptVectors) {
    throw new SyncError(
      'this device asks for sealed vectors (encryptVectors), and the collection keeps vectors in clear: use a new collection',
      { reason: 'incompatible' },
    );
  }
  return cipher;
}

/**
 * The collection's header; a new collection gets this device's (with a new key when it
 * encrypts, `created`). Another device may have written its header first: then that one
 * holds, and the key made here is dropped.
 */
async function collectionHeader(
  options: SyncRunOptions,
  embedder: EmbedderIdentity,
  call: Call,
): Promise<{ header: CollectionHeader; created: PayloadCipher | undefined }> {
  const { target, signal, encryption } = options;
  const header = await call(() => target.readHeader({ signal }));
  if (header !== undefined) return { header, created: undefined };
  const proposed: CollectionHeader = {
    format: encryption === undefined ? 1 : SEALED_FORMAT,
    embedderId: embedder.id,
    dimensions: embedder.dimensions,
  };
  let created: PayloadCipher | undefined;
  if (encryption !== undefined) {
    const made = await PayloadCipher.create(encryption, proposed, options.kdfIterations, options.keys);
    created = made.cipher;
    proposed.encryption = made.encryption;
  }
  const written = await call(() => target.writeHeader(proposed, { signal }));
  return { header: written, created: JSON.stringify(written) === JSON.stringify(proposed) ? created : undefined };
}

function checkEmbedder(header: CollectionHeader, embedder: EmbedderIdentity): void {
  if (header.embedderId === embedder.id && header.dimensions === embedder.dimensions) return;
  throw new SyncError(
    `the collection holds vectors of embedder ${header.embedderId} (${header.dimensions} dimensions); this store uses ${embedder.id} (${embedder.dimensions}). Use another collection, or re-embed with the same model`,
    { reason: 'incompatible' },
  );
}

/**
 * The encryption options when the collection is encrypted (undefined when it is plain),
 * once this device agrees: it encrypts too, and the collection seals every readable field
 * (format 2).
 */
function sealedWith(
  header: CollectionHeader,
  encryption: EncryptionOptions | undefined,
): EncryptionOptions | undefined {
  if (header.encryption === undefined) {
    if (encryption === undefined) return undefined;
    throw new SyncError(
      'the collection is not encrypted: sync it without encryption, or choose a new collection for end-to-end encryption',
      { reason: 'incompatible' },
    );
  }
  if (encryption === undefined)
    throw new SyncError('the collection is end-to-end encrypted: pass encryption: { passphrase }', {
      reason: 'wrong-passphrase',
    });
  if (header.format !== SEALED_FORMAT) {
    // Format 1 sealed only the record, not the fields beside it: its server could delete
    // or roll back records. Its points cannot be told from forged ones, so it is refused.
    throw new SyncError(
      'this encrypted collection was made by an older engram (format 1), whose points the server could change unseen. Sync to a new collection name with the same passphrase (every device pushes all it holds on its first sync there), then delete the old collection',
      { reason: 'incompatible' },
    );
  }
  return encryption;
}

/** Sets an origin's cursor as an own property: an origin named "__proto__" is a cursor like any other. */
function setCursor(cursors: Record<string, number>, origin: string, seq: number): void {
  Object.defineProperty(cursors, origin, { value: seq, enumerable: true, writable: true, configurable: true });
}

/** Moves an origin's cursor forward to a point's position. */
function advance(cursors: Record<string, number>, position: PushPosition): void {
  const seen = Object.hasOwn(cursors, position.origin) ? cursors[position.origin]! : 0;
  if (position.pushSeq > seen) setCursor(cursors, position.origin, position.pushSeq);
}

function sameCursors(a: Record<string, number>, b: Record<string, number>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/** The first page's query of a pull: other devices' cursors moved back by PULL_LOOKBACK, this device's as they are. */
function lookbackQuery(cursors: Record<string, number>, deviceId: string): Record<string, number> {
  return Object.fromEntries(
    Object.entries(cursors).map(([origin, seq]) => [
      origin,
      origin === deviceId ? seq : Math.max(0, seq - PULL_LOOKBACK),
    ]),
  );
}

/** Groups of kinds pulled together, each with its cursors per origin device. */
interface PullGroup {
  kinds: PointKind[];
  cursors: Record<string, number>;
}

/** One group of every group's kinds, each origin (that every group has) at the least cursor any group reached. */
function mergedGroup(groups: readonly PullGroup[]): PullGroup {
  const merged: Record<string, number> = {};
  const origins = Object.keys(groups[0]!.cursors).filter((o) => groups.every((g) => Object.hasOwn(g.cursors, o)));
  for (const origin of origins) setCursor(merged, origin, Math.min(...groups.map((g) => g.cursors[origin]!)));
  return { kinds: groups.flatMap((g) => g.kinds), cursors: merged };
}

/**
 * The state of one sync while it runs: the host and target, the agreed cipher and
 * embedder, the cursors (`state`, saved after the work they cover) and the counts so far.
 */
class SyncRun {
  readonly result: SyncResult = { uploaded: 0, downloaded: 0, deleted: 0, conflicts: 0 };

  constructor(
    private readonly host: SyncHost,
    private readonly options: SyncRunOptions,
    private readonly state: SyncState,
    private readonly cipher: PayloadCipher | undefined,
    private readonly embedder: EmbedderIdentity,
    private readonly call: Call,
  ) {}

  private progress(phase: SyncProgress['phase'], done: number): void {
    this.options.onProgress?.({ phase, done });
  }

  private saveState(): Promise<void> {
    return this.host.saveState(this.options.key, this.state);
  }

  /** Pushes every record of the kinds not yet seeded to this collection; returns those kinds. */
  async seed(): Promise<PointKind[]> {
    const { host, options, state } = this;
    const unseeded = options.kinds.filter((k) => !state.seeded.includes(k));
    if (unseeded.length === 0) return [];
    // First push of these kinds to this collection: every record, not the change log
    // (which may have been compacted, or skipped them while they were not included).
    const upTo = await host.lastSeq();
    let after: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const { records, next } = await host.allRecords(unseeded, after, CHANGE_PAGE);
      await this.send(records);
      if (next === undefined) break;
      after = next;
    }
    // Changes made during the scan are pushed again by push(): pushing is idempotent.
    if (state.seeded.length === 0) state.pushedSeq = Math.max(state.pushedSeq, upTo);
    state.seeded = [...state.seeded, ...unseeded];
    await this.saveState();
    return unseeded;
  }

  /** Pulls what other devices pushed after this device's cursors; `seeded`: the kinds this run just seeded. */
  async pull(seeded: readonly PointKind[]): Promise<void> {
    const { state } = this;
    const wanted = this.options.kinds;
    const groups = this.groupsToPull(seeded);
    const others = state.pull
      .map((g) => ({ kinds: g.kinds.filter((k) => !wanted.includes(k)), cursors: g.cursors }))
      .filter((g) => g.kinds.length > 0);
    const save = async (): Promise<void> => {
      state.pull = [...groups.map((g) => ({ kinds: g.kinds, cursors: { ...g.cursors } })), ...others];
      await this.saveState();
    };
    let done = 0;
    for (const group of groups) done = await this.pullGroup(group, done, save);
    if (groups.length > 1) {
      // All caught up: one group again, each origin at the least any group reached (re-reading a little is harmless).
      groups.splice(0, groups.length, mergedGroup(groups));
      await save();
    }
  }

  /**
   * The groups of kinds this pull goes through: the saved groups' wanted kinds (their cursors
   * copied); kinds not yet pulled start a group from the beginning.
   */
  private groupsToPull(seeded: readonly PointKind[]): PullGroup[] {
    const { host, state } = this;
    const wanted = this.options.kinds;
    const groups: PullGroup[] = state.pull
      .map((g) => ({ kinds: g.kinds.filter((k) => wanted.includes(k)), cursors: { ...g.cursors } }))
      .filter((g) => g.kinds.length > 0);
    const fresh = wanted.filter((k) => !groups.some((g) => g.kinds.includes(k)));
    if (fresh.length > 0) {
      // Kinds this sync just seeded: this device's own points of them are the ones it sent.
      const own = fresh.every((k) => seeded.includes(k)) ? { [host.deviceId]: state.pushCounter } : {};
      groups.push({ kinds: [...fresh], cursors: own });
    }
    return groups;
  }

  /** Pulls one group page by page, saving its cursors after each page; returns the points handled so far. */
  private async pullGroup(group: PullGroup, done: number, save: () => Promise<void>): Promise<number> {
    const { host, options } = this;
    const { cursors } = group;
    // The first page looks back a little on other devices' cursors (see PULL_LOOKBACK).
    let query = lookbackQuery(cursors, host.deviceId);
    let limit = options.pageSize;
    for (let page = 0; page < MAX_PAGES; page++) {
      throwIfAborted(options.signal);
      const asked = query;
      const asking = limit;
      const points = await this.scroll(asked, group.kinds, asking);
      if (points === undefined) {
        // An answer too large to read: ask for fewer points.
        limit = Math.ceil(asking / 2);
        continue;
      }
      await this.applyPage(group, points);
      await save();
      done += points.length;
      this.progress('pull', done);
      if (points.length < asking) break;
      // A full page that moved no cursor would be served again and again: the server is
      // not following the cursors (or serves only refused points); stop here.
      if (sameCursors(cursors, asked)) break;
      query = { ...cursors };
      limit = Math.min(options.pageSize, asking * 2);
    }
    return done;
  }

  /** One scroll page; undefined when the answer was too large to read and a smaller page may be asked. */
  private async scroll(
    cursors: Record<string, number>,
    kinds: readonly PointKind[],
    limit: number,
  ): Promise<SyncPoint[] | undefined> {
    const { options } = this;
    const maxBytes = Math.max(MIN_PAGE_BYTES, maxPointBytes(this.host.maxContentBytes));
    let points: SyncPoint[];
    try {
      points = await this.call(() =>
        options.target.scrollSince(cursors, kinds, limit, { signal: options.signal, maxBytes }),
      );
    } catch (e) {
      // One point that large breaks this store's limits whatever it holds; it cannot be
      // read to be refused, so the pull stops.
      if (e instanceof SyncError && e.reason === 'too-large' && limit > 1) return undefined;
      throw e;
    }
    if (points.length > limit) {
      throw new SyncError(`scroll: the server sent ${points.length} points for a page of ${limit}`, {
        reason: 'bad-response',
      });
    }
    return points;
  }

  /** Decodes a page, moves the group's cursors past every point read, and applies the records it may. */
  private async applyPage(group: PullGroup, points: readonly SyncPoint[]): Promise<void> {
    const records: SyncRecord[] = [];
    const pointOf: SyncPoint[] = [];
    for (const point of points) {
      const record = await this.accepted(group, point);
      if (record === undefined) continue;
      records.push(record);
      pointOf.push(point);
    }
    throwIfAborted(this.options.signal);
    const applied: ApplyResult = await this.host.apply(records, this.embedder, this.state.pushedSeq);
    this.result.downloaded += applied.downloaded;
    this.result.deleted += applied.deleted;
    this.result.conflicts += applied.conflicts;
    for (const r of applied.refused) this.refused(pointOf[r.index]!, r.reason, r.detail, records[r.index]!.kind);
  }

  /**
   * Decodes one pulled point and moves the group's cursors past it: its record when the
   * group asked for its kind, else undefined (the point refused, and counted).
   */
  private async accepted(group: PullGroup, point: SyncPoint): Promise<SyncRecord | undefined> {
    const { cursors } = group;
    const decoded = await decodePoint(point, this.cipher);
    if ('refused' in decoded) {
      this.refused(point, decoded.refused, decoded.detail, decoded.kind);
      if (decoded.position !== undefined) advance(cursors, decoded.position);
      return undefined;
    }
    advance(cursors, decoded.position);
    if (!group.kinds.includes(decoded.record.kind)) {
      this.refused(
        point,
        'unrequested',
        `a ${decoded.record.kind} point, and this pull asked for ${group.kinds.join(', ')}`,
        decoded.record.kind,
      );
      return undefined;
    }
    return decoded.record;
  }

  private refused(point: SyncPoint, reason: RefusalReason, detail: string, kind: PointKind | undefined): void {
    this.options.refusals?.add({
      reason,
      pointId: point.id.slice(0, 64),
      ...(kind === undefined ? {} : { kind }),
      detail,
      at: Date.now(),
    });
  }

  /** Pushes this device's changes logged after `state.pushedSeq`, the latest version of each record. */
  async push(): Promise<void> {
    const { host, options, state } = this;
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
      await this.send(await host.records([...latest.values()], true));
      state.pushedSeq = entries[entries.length - 1]!.seq;
      await this.saveState();
    }
  }

  /** Sends records in batches, each point with the next push counter of this device. */
  private async send(records: readonly SyncRecord[]): Promise<void> {
    const { host, options, state } = this;
    const { signal } = options;
    for (let i = 0; i < records.length; i += options.batchSize) {
      throwIfAborted(signal);
      const batch = records.slice(i, i + options.batchSize);
      // Reserve the push counters before sending: a retried batch takes new ones, so no
      // device that saw part of a failed batch can skip a point of it.
      const first = state.pushCounter + 1;
      state.pushCounter += batch.length;
      await this.saveState();
      const points: SyncPoint[] = [];
      for (const [j, record] of batch.entries()) points.push(await encodePoint(record, first + j, this.cipher));
      await this.call(() => options.target.upsert(points, { signal }));
      // This device has seen its own points.
      for (const g of state.pull) g.cursors = { ...g.cursors, [host.deviceId]: state.pushCounter };
      this.result.uploaded += batch.length;
      this.progress('push', this.result.uploaded);
    }
  }
}
