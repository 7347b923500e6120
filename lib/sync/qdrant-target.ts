/**
 * The Qdrant side of sync: the only file that imports `@qdrant/js-client-rest`.
 * It speaks Qdrant's REST API (the same for one node or a cluster) and turns
 * every failure of the client into a `SyncError` with the original in `cause`.
 */
import {
  QdrantClient,
  QdrantClientResourceExhaustedError,
  QdrantClientTimeoutError,
  QdrantClientUnexpectedResponseError,
} from '@qdrant/js-client-rest';
import { AbortError, EngramError, SyncError, type SyncFailure } from '../errors.js';
import {
  FIELD,
  HEADER_POINT_ID,
  VECTOR_NAME,
  type CollectionHeader,
  type Payload,
  type PointKind,
  type PullCursors,
  type ScrollOptions,
  type SyncPoint,
  type SyncTarget,
  type TargetCallOptions,
} from './sync-target.js';
import { readHeaderPayload, headerPayload } from './header-codec.js';

/** Options of {@link QdrantTarget}. */
export interface QdrantTargetOptions {
  /**
   * Base URL of the Qdrant REST API.
   * @example 'http://127.0.0.1:6333'
   */
  url: string;
  /** Qdrant API key, sent as the `api-key` header. */
  apiKey?: string;
  /**
   * Collection name.
   * @default 'engram'
   */
  collection?: string;
  /**
   * Milliseconds before a request is given up as timed out.
   * @default 30000
   */
  timeoutMs?: number;
}

type QdrantFilter = Record<string, unknown>;

function kindsFilter(kinds: readonly PointKind[]): QdrantFilter {
  return { key: FIELD.kind, match: { any: [...kinds] } };
}

/** Reads a status code from the openapi-fetch error the client rethrows. */
function statusOf(e: unknown): number | undefined {
  const status = (e as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** The Retry-After header of an ApiError, in milliseconds. */
function retryAfterOf(e: unknown): number | undefined {
  const headers = (e as { headers?: unknown } | null)?.headers;
  if (!(headers instanceof Headers)) return undefined;
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function serverMessage(e: unknown): string {
  const data = (e as { data?: unknown } | null)?.data;
  const error = (data as { status?: { error?: unknown } } | null | undefined)?.status?.error;
  if (typeof error === 'string') return error;
  return e instanceof Error ? e.message : String(e);
}

/** Translates anything the client throws into a SyncError. */
export function toSyncError(e: unknown, what: string): EngramError {
  if (e instanceof EngramError) return e;
  const fail = (reason: SyncFailure, detail: string, retryAfterMs?: number): SyncError =>
    new SyncError(`${what}: ${detail}`, { cause: e, reason, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
  if (e instanceof QdrantClientTimeoutError) return fail('timeout', 'the server did not answer in time');
  if (e instanceof QdrantClientResourceExhaustedError)
    return fail('rate-limited', 'the server asked to slow down', e.retry_after * 1000);
  if (e instanceof QdrantClientUnexpectedResponseError) return fail('bad-response', e.message);
  const status = statusOf(e);
  if (status !== undefined) {
    if (status === 429) return fail('rate-limited', 'the server asked to slow down', retryAfterOf(e));
    if (status >= 500) return fail('server', `server error ${status}: ${serverMessage(e)}`);
    return fail('rejected', `request rejected with ${status}: ${serverMessage(e)}`);
  }
  if (e instanceof SyntaxError) return fail('bad-response', `malformed JSON: ${e.message}`);
  if (e instanceof TypeError) {
    // fetch() reports refused connections, resets and bodies cut short as TypeError ('fetch failed', 'terminated').
    return fail('unreachable', `the server could not be reached: ${e.message}`);
  }
  return fail('bad-response', e instanceof Error ? e.message : String(e));
}

function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) return Promise.reject(new AbortError('sync aborted', { cause: signal.reason }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      reject(new AbortError('sync aborted', { cause: signal.reason }));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new SyncError(String(err), { reason: 'bad-response' }));
      },
    );
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A record from the wire as a SyncPoint; rejects shapes engram never writes. */
function toPoint(record: unknown, what: string): SyncPoint {
  if (!isObject(record) || typeof record['id'] !== 'string' || !isObject(record['payload'])) {
    throw new SyncError(`${what}: the server returned a point without a UUID id or payload`, {
      reason: 'bad-response',
    });
  }
  const point: SyncPoint = { id: record['id'], payload: record['payload'] as Payload };
  const vector = record['vector'];
  if (isObject(vector)) {
    const named = vector[VECTOR_NAME];
    if (Array.isArray(named)) point.vector = named as number[];
  }
  return point;
}

/** Bytes a scroll answer may have when the caller sets no bound. */
export const DEFAULT_MAX_SCROLL_BYTES = 64 * 1024 * 1024;

/** Bytes an answer of one small point (the header, a push counter) may have. */
const SMALL_ANSWER_BYTES = 1024 * 1024;

/** An HTTP failure shaped like the client's ApiError, for toSyncError. */
function httpFailure(status: number, headers: Headers, data: unknown): Error {
  return Object.assign(new Error(`HTTP ${status}`), { status, headers, data });
}

/**
 * Reads a response body of at most `maxBytes`: a larger one (by its Content-Length,
 * or as it streams in) is cancelled, never held whole, and is a SyncError ('too-large').
 */
async function boundedText(response: Response, maxBytes: number, what: string): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw tooLarge(what, maxBytes);
  }
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  return new TextDecoder().decode(await readAtMost(reader, maxBytes, what));
}

/** An answer larger than the caller's bound. */
function tooLarge(what: string, maxBytes: number): SyncError {
  return new SyncError(`${what}: the answer is larger than ${maxBytes} bytes`, { reason: 'too-large' });
}

/** Reads a body to its end in one array; past `maxBytes` it is cancelled and a SyncError ('too-large'). */
async function readAtMost(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  maxBytes: number,
  what: string,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(what, maxBytes);
    }
    chunks.push(value);
  }
  return joinChunks(chunks, size);
}

/** The chunks read, one after another in one array of `size` bytes. */
function joinChunks(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return all;
}

/** The `result` of a 200 answer's JSON; another status is an HTTP failure with the answer's JSON (or text) as data. */
function answerResult(response: Response, text: string): unknown {
  if (response.status !== 200) {
    let data: unknown = text;
    try {
      data = JSON.parse(text);
    } catch {
      // an error page that is not JSON: its text is the message
    }
    throw httpFailure(response.status, response.headers, data);
  }
  return (JSON.parse(text) as { result?: unknown } | null)?.result;
}

/** The `update_filter` of an upsert of `points`. */
function olderPointsFilter(points: readonly SyncPoint[]): QdrantFilter {
  // Replace a stored point only when it is older: stamp smaller, or the same stamp from the same origin (a retry).
  return {
    should: points.map((p) => ({
      must: [
        { has_id: [p.id] },
        {
          should: [
            { key: FIELD.stamp, range: { lt: p.payload[FIELD.stamp] } },
            {
              must: [
                { key: FIELD.stamp, match: { value: p.payload[FIELD.stamp] } },
                { key: FIELD.origin, match: { value: p.payload[FIELD.origin] } },
              ],
            },
          ],
        },
      ],
    })),
  };
}

/**
 * The filter of a pull: points of `kinds` pushed after the cursor of their origin,
 * and every point of an origin with no cursor yet.
 */
function sinceFilter(cursors: PullCursors, kinds: readonly PointKind[]): QdrantFilter[] {
  const known = Object.keys(cursors);
  const must: QdrantFilter[] = [kindsFilter(kinds)];
  if (known.length > 0) {
    must.push({
      should: [
        ...known.map((origin) => ({
          must: [
            { key: FIELD.origin, match: { value: origin } },
            { key: FIELD.pushSeq, range: { gt: cursors[origin] } },
          ],
        })),
        { must_not: [{ key: FIELD.origin, match: { any: known } }] },
      ],
    });
  }
  return must;
}

/** The push counter a point of a scroll answer carries (0 when none, or not a count). */
function pushSeqOf(point: unknown): number {
  const seq = ((point as { payload?: unknown } | undefined)?.payload as Record<string, unknown> | null | undefined)?.[
    FIELD.pushSeq
  ];
  return typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : 0;
}

/**
 * Checks a collection's vectors are what engram needs: `dimensions` of them under
 * VECTOR_NAME with cosine distance (a SyncError 'incompatible' otherwise).
 */
function checkVectorShape(info: unknown, name: string, dimensions: number): void {
  const vectors = (info as { config?: { params?: { vectors?: unknown } } }).config?.params?.vectors;
  const named = isObject(vectors) ? vectors[VECTOR_NAME] : undefined;
  const size = isObject(named) ? named['size'] : undefined;
  if (size !== dimensions || (isObject(named) && named['distance'] !== 'Cosine')) {
    throw new SyncError(
      `collection "${name}" holds vectors of another shape (${VECTOR_NAME}: ${JSON.stringify(named ?? vectors ?? null)}), engram needs ${dimensions} dimensions with cosine distance`,
      { reason: 'incompatible' },
    );
  }
}

/**
 * The Qdrant server as a {@link SyncTarget}.
 * @example
 * const target = new QdrantTarget({ url: 'http://127.0.0.1:6333', collection: 'engram' })
 */
export class QdrantTarget implements SyncTarget {
  readonly collection: string;
  readonly #client: QdrantClient;
  readonly #url: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;

  constructor(options: QdrantTargetOptions) {
    this.collection = options.collection ?? 'engram';
    this.#url = options.url.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    try {
      this.#client = new QdrantClient({
        url: options.url,
        ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
        timeout: options.timeoutMs ?? 30_000,
        checkCompatibility: false,
      });
    } catch (e) {
      throw new SyncError(`invalid Qdrant URL ${options.url}`, { cause: e, reason: 'rejected' });
    }
  }

  async #call<T>(what: string, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    try {
      return await abortable(work(), signal);
    } catch (e) {
      throw toSyncError(e, what);
    }
  }

  async ensureCollection(dimensions: number, options: TargetCallOptions = {}): Promise<{ created: boolean }> {
    const name = this.collection;
    const exists = await this.#call('collection exists', options.signal, () => this.#client.collectionExists(name));
    if (!isObject(exists) || typeof exists['exists'] !== 'boolean')
      throw new SyncError('collection exists: unexpected answer', { reason: 'bad-response' });
    const created = exists['exists'] ? false : await this.#createCollection(dimensions, options.signal);
    const info = await this.#call('collection info', options.signal, () => this.#client.getCollection(name));
    checkVectorShape(info, name, dimensions);
    await this.#createMissingIndexes(info, options.signal);
    return { created };
  }

  /** Creates the collection; false when another device created it meanwhile (a 409). */
  async #createCollection(dimensions: number, signal: AbortSignal | undefined): Promise<boolean> {
    const name = this.collection;
    try {
      await this.#call('create collection', signal, () =>
        this.#client.createCollection(name, { vectors: { [VECTOR_NAME]: { size: dimensions, distance: 'Cosine' } } }),
      );
      return true;
    } catch (e) {
      // Another device created it meanwhile: go on and check what it made.
      if (!(e instanceof SyncError && e.reason === 'rejected' && statusOf(e.cause) === 409)) throw e;
      return false;
    }
  }

  /** Creates the payload indexes the collection's `info` does not list yet, one at a time. */
  async #createMissingIndexes(info: unknown, signal: AbortSignal | undefined): Promise<void> {
    const name = this.collection;
    const schema = (info as { payload_schema?: unknown }).payload_schema;
    const indexed = isObject(schema) ? schema : {};
    // Pulls order by the push counter and filter on kind and origin; upserts compare stamps.
    for (const field of [FIELD.pushSeq, FIELD.stamp]) {
      if (indexed[field] !== undefined) continue;
      await this.#call(`create ${field} index`, signal, () =>
        this.#client.createPayloadIndex(name, {
          field_name: field,
          field_schema: { type: 'integer', lookup: true, range: true },
          wait: true,
        }),
      );
    }
    for (const field of [FIELD.kind, FIELD.origin]) {
      if (indexed[field] !== undefined) continue;
      await this.#call(`create ${field} index`, signal, () =>
        this.#client.createPayloadIndex(name, { field_name: field, field_schema: 'keyword', wait: true }),
      );
    }
  }

  async readHeader(options: TargetCallOptions = {}): Promise<CollectionHeader | undefined> {
    const records = await this.#call('read header', options.signal, () =>
      this.#boundedPost(
        `/collections/${encodeURIComponent(this.collection)}/points`,
        { ids: [HEADER_POINT_ID], with_payload: true, with_vector: false },
        SMALL_ANSWER_BYTES,
        'read header',
        options.signal,
      ),
    );
    const first: unknown = Array.isArray(records) ? records[0] : undefined;
    if (first === undefined) return undefined;
    return readHeaderPayload(toPoint(first, 'read header').payload);
  }

  async writeHeader(header: CollectionHeader, options: TargetCallOptions = {}): Promise<CollectionHeader> {
    await this.#call('write header', options.signal, () =>
      this.#client.upsert(this.collection, {
        wait: true,
        points: [{ id: HEADER_POINT_ID, vector: {}, payload: headerPayload(header) }],
        update_mode: 'insert_only',
      }),
    );
    const stored = await this.readHeader(options);
    if (stored === undefined)
      throw new SyncError('write header: the header is missing after writing it', { reason: 'bad-response' });
    return stored;
  }

  async upsert(points: readonly SyncPoint[], options: TargetCallOptions = {}): Promise<void> {
    if (points.length === 0) return;
    const update_filter = olderPointsFilter(points);
    const body = points.map((p) => ({
      id: p.id,
      vector: p.vector === undefined ? {} : { [VECTOR_NAME]: p.vector },
      payload: p.payload,
    }));
    const result = await this.#call('upsert', options.signal, () =>
      this.#client.upsert(this.collection, { wait: true, points: body, update_filter: update_filter as never }),
    );
    if (!isObject(result) || typeof result['status'] !== 'string')
      throw new SyncError('upsert: unexpected answer', { reason: 'bad-response' });
  }

  async scrollSince(
    cursors: PullCursors,
    kinds: readonly PointKind[],
    limit: number,
    options: ScrollOptions = {},
  ): Promise<SyncPoint[]> {
    const body = {
      filter: { must: sinceFilter(cursors, kinds) },
      order_by: { key: FIELD.pushSeq, direction: 'asc' },
      limit,
      with_payload: true,
      with_vector: [VECTOR_NAME],
    };
    const points = await this.#scroll(body, options.maxBytes ?? DEFAULT_MAX_SCROLL_BYTES, options.signal);
    return points.map((r) => toPoint(r, 'scroll'));
  }

  /** One scroll request, its answer read up to `maxBytes`: the points it holds, as they came. */
  async #scroll(body: unknown, maxBytes: number, signal: AbortSignal | undefined): Promise<unknown[]> {
    const result = await this.#call('scroll', signal, () =>
      this.#boundedPost(
        `/collections/${encodeURIComponent(this.collection)}/points/scroll`,
        body,
        maxBytes,
        'scroll',
        signal,
      ),
    );
    const points = (result as { points?: unknown } | null)?.points;
    if (!Array.isArray(points)) throw new SyncError('scroll: unexpected answer', { reason: 'bad-response' });
    return points as unknown[];
  }

  /**
   * A POST whose answer is read up to `maxBytes` (the client reads any answer whole,
   * so a server could send gigabytes): what the client does for one request, with
   * the same headers, timeout and errors (toSyncError reads status, headers and data).
   */
  async #boundedPost(
    path: string,
    body: unknown,
    maxBytes: number,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<unknown> {
    const headers = this.#headers();
    const timeout = new AbortController();
    const timer = setTimeout(() => {
      timeout.abort();
    }, this.#timeoutMs);
    try {
      const stop = signal === undefined ? timeout.signal : AbortSignal.any([timeout.signal, signal]);
      const response = await fetch(`${this.#url}${path}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: stop,
      });
      const text = await boundedText(response, maxBytes, what);
      return answerResult(response, text);
    } catch (e) {
      if (timeout.signal.aborted)
        throw new SyncError(`${what}: the server did not answer in time`, { cause: e, reason: 'timeout' });
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The headers of a request: JSON, and the API key when one is set. */
  #headers(): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.#apiKey !== undefined) headers['api-key'] = this.#apiKey;
    return headers;
  }

  async maxPushSeq(origin: string, options: TargetCallOptions = {}): Promise<number> {
    const body = {
      filter: { must: [{ key: FIELD.origin, match: { value: origin } }] },
      order_by: { key: FIELD.pushSeq, direction: 'desc' },
      limit: 1,
      with_payload: [FIELD.pushSeq],
      with_vector: false,
    };
    const points = await this.#scroll(body, SMALL_ANSWER_BYTES, options.signal);
    return pushSeqOf(points[0]);
  }

  async retrieve(ids: readonly string[], options: TargetCallOptions = {}): Promise<SyncPoint[]> {
    if (ids.length === 0) return [];
    const records = await this.#call('retrieve', options.signal, () =>
      this.#client.retrieve(this.collection, { ids: [...ids], with_payload: true, with_vector: [VECTOR_NAME] }),
    );
    if (!Array.isArray(records)) throw new SyncError('retrieve: unexpected answer', { reason: 'bad-response' });
    return records.map((r) => toPoint(r, 'retrieve'));
  }

  async delete(ids: readonly string[], options: TargetCallOptions = {}): Promise<void> {
    if (ids.length === 0) return;
    await this.#call('delete', options.signal, () =>
      this.#client.delete(this.collection, { wait: true, points: [...ids] }),
    );
  }

  async count(options: TargetCallOptions = {}): Promise<number> {
    const result = await this.#call('count', options.signal, () =>
      this.#client.count(this.collection, { exact: true, filter: { must: [{ key: FIELD.stamp, range: { gte: 0 } }] } }),
    );
    if (typeof (result as { count?: unknown } | null)?.count !== 'number')
      throw new SyncError('count: unexpected answer', { reason: 'bad-response' });
    return result.count;
  }

  async close(): Promise<void> {
    // The client keeps no state that needs freeing beyond idle keep-alive sockets, which time out.
  }
}
