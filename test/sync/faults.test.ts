// Each fault the issue lists, at the level of one request: QdrantTarget reports it
// as a typed SyncError (transient ones retried by withRetry), and a batch that fails
// halfway is completed by sending it again without duplicates.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SyncError } from '../../lib/errors.js';
import { DEFAULT_RETRY, withRetry } from '../../lib/sync/retry.js';
import { FIELD, type SyncPoint } from '../../lib/sync/sync-target.js';
import { QdrantTarget } from '../../lib/sync/qdrant-target.js';
import { startQdrantServer, type QdrantServer } from './qdrant-server.js';
import { REAL_QDRANT_URL, collectionName } from './targets.js';

function points(n: number, origin = 'a'): SyncPoint[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `00000000-0000-4000-8000-${(i + 1).toString(16).padStart(12, '0')}`,
    vector: [1, i, 0, 0],
    payload: { [FIELD.kind]: 'memory', [FIELD.stamp]: 1000 + i, [FIELD.origin]: origin, [FIELD.pushSeq]: i + 1 },
  }));
}

async function failure(p: Promise<unknown>): Promise<SyncError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(SyncError);
  return e as SyncError;
}

describe.skipIf(REAL_QDRANT_URL !== undefined)('faults', () => {
  let server: QdrantServer;
  let target: QdrantTarget;
  beforeEach(async () => {
    server = await startQdrantServer();
    target = new QdrantTarget({ url: server.url, collection: collectionName(), timeoutMs: 30_000 });
    await target.ensureCollection(4);
  });
  afterEach(async () => {
    expect(server.violations).toEqual([]);
    await server.close();
  });

  it('server down: a refused connection and a dropped one are SyncError unreachable', async () => {
    server.fail({ kind: 'hang-up' });
    expect((await failure(target.count())).reason).toBe('unreachable');
    await server.stop();
    const refused = await failure(target.count());
    expect(refused.reason).toBe('unreachable');
    expect(refused.transient).toBe(true);
    await server.restart();
    expect(await target.count()).toBe(0);
  });

  it('5xx is a transient SyncError server with the server message', async () => {
    server.fail({ kind: 'status', status: 503 }, { op: 'upsert' });
    const e = await failure(target.upsert(points(2)));
    expect(e.reason).toBe('server');
    expect(e.message).toMatch(/503/);
    expect(e.transient).toBe(true);
  });

  it('429 with Retry-After is rate-limited, and withRetry waits as asked', async () => {
    server.fail({ kind: 'rate-limit', retryAfterS: 1 }, { op: 'count' });
    const e = await failure(target.count());
    expect(e.reason).toBe('rate-limited');
    expect(e.retryAfterMs).toBe(1000);
    server.fail({ kind: 'rate-limit', retryAfterS: 1 }, { op: 'count' });
    const delays: number[] = [];
    expect(
      await withRetry(
        () => target.count(),
        { attempts: 3, baseDelayMs: 10, maxDelayMs: 2000 },
        undefined,
        (_e, ms) => delays.push(ms),
      ),
    ).toBe(0);
    expect(delays).toEqual([1000]);
  });

  it('a stalled answer is a SyncError timeout after timeoutMs', async () => {
    const impatient = new QdrantTarget({ url: server.url, collection: target.collection, timeoutMs: 300 });
    server.fail({ kind: 'stall' }, { op: 'scroll' });
    const e = await failure(impatient.scrollSince({}, ['memory'], 10));
    expect(e.reason).toBe('timeout');
  });

  it('malformed and truncated JSON are transient SyncErrors', async () => {
    server.fail({ kind: 'malformed' }, { op: 'scroll' });
    const malformed = await failure(target.scrollSince({}, ['memory'], 10));
    expect(malformed.reason).toBe('bad-response');
    expect(malformed.transient).toBe(true);
    server.fail({ kind: 'truncated' }, { op: 'scroll' });
    const truncated = await failure(target.scrollSince({}, ['memory'], 10));
    expect(truncated.transient).toBe(true);
  });

  it('scrollSince() reads no more of an answer than maxBytes: a larger one is a too-large SyncError, declared or streamed', async () => {
    for (const declared of [true, false]) {
      server.fail({ kind: 'oversized', bytes: 4 * 1024 * 1024, declared }, { op: 'scroll' });
      const e = await failure(target.scrollSince({}, ['memory'], 10, { maxBytes: 1024 * 1024 }));
      expect(e.reason).toBe('too-large');
      expect(e.transient).toBe(false);
    }
    // The header and a device's push counter are small answers: 1 MiB at most.
    server.fail({ kind: 'oversized', bytes: 4 * 1024 * 1024, declared: false }, { op: 'retrieve' });
    expect((await failure(target.readHeader())).reason).toBe('too-large');
    server.fail({ kind: 'oversized', bytes: 4 * 1024 * 1024, declared: false }, { op: 'scroll' });
    expect((await failure(target.maxPushSeq('device-a'))).reason).toBe('too-large');
    // Within the bound, the same padded answer is read as usual.
    server.fail({ kind: 'oversized', bytes: 1024, declared: false }, { op: 'scroll' });
    expect(await target.scrollSince({}, ['memory'], 10, { maxBytes: 1024 * 1024 })).toEqual([]);
  });

  it('a batch failing halfway is completed by sending it again, without duplicates', async () => {
    server.fail({ kind: 'half-batch' }, { op: 'upsert' });
    const batch = points(10);
    expect((await failure(target.upsert(batch))).reason).toBe('server');
    expect(await target.count()).toBe(5);
    await target.upsert(batch);
    expect(await target.count()).toBe(10);
    expect(new Set(server.points(target.collection).map((p) => p.id)).size).toBe(10);
  });

  it('withRetry() rides out transient faults and gives up after the policy attempts', async () => {
    server.fail({ kind: 'status', status: 502 }, { op: 'upsert', times: 2 });
    await withRetry(() => target.upsert(points(3)), { ...DEFAULT_RETRY, baseDelayMs: 5 });
    expect(await target.count()).toBe(3);
    const before = server.requests.get('count') ?? 0;
    server.fail({ kind: 'status', status: 500 }, { op: 'count', times: 5 });
    await expect(withRetry(() => target.count(), { attempts: 3, baseDelayMs: 5, maxDelayMs: 10 })).rejects.toThrow(
      SyncError,
    );
    expect((server.requests.get('count') ?? 0) - before).toBe(3);
    server.clearFaults();
  });

  it('a rejected request is not retried', async () => {
    let tries = 0;
    const e = await failure(
      withRetry(
        () => {
          tries += 1;
          return target.upsert([{ ...points(1)[0]!, vector: [1, 2] }]);
        },
        { ...DEFAULT_RETRY, baseDelayMs: 5 },
      ),
    );
    expect(e.reason).toBe('rejected');
    expect(tries).toBe(1);
  });

  it('an aborted call rejects at once with AbortError while the server stalls', async () => {
    server.fail({ kind: 'stall' }, { op: 'count' });
    const controller = new AbortController();
    const pending = target.count({ signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
