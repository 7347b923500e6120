// What a pull accepts from a server that misbehaves (or is malicious) on a plain
// collection: every pulled record is held to the store's own limits, as add()
// holds its input, and malformed answers neither loop, nor stop later points, nor
// apply what was not asked for. Points are edited on the OpenAPI-checked test
// server where it can hold them; answers a Qdrant could not give (a page larger
// than asked, kinds outside the filter, a push counter that is not a number) come
// from a target that wraps the real one and rewrites its answers.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SyncError } from '../../lib/errors.js';
import { MemoryTarget } from '../../lib/sync/memory-target.js';
import { encodePoint } from '../../lib/sync/point-codec.js';
import { stampOf } from '../../lib/sync/stamp.js';
import type { SyncOptions } from '../../lib/sync/sync-options.js';
import type { PointKind, PullCursors, SyncPoint, SyncTarget } from '../../lib/sync/sync-target.js';
import { REAL_QDRANT_URL, type TargetFixture } from './targets.js';
import { DIM, FAST, device, httpTarget, on, type Device } from './sync-helpers.js';

/** `inner` with its scroll answers rewritten by `rewrite`. */
function rewriting(
  inner: SyncTarget,
  rewrite: (points: SyncPoint[], kinds: readonly PointKind[], limit: number) => SyncPoint[],
): SyncTarget {
  return {
    ensureCollection: (d, o) => inner.ensureCollection(d, o),
    readHeader: (o) => inner.readHeader(o),
    writeHeader: (h, o) => inner.writeHeader(h, o),
    upsert: (p, o) => inner.upsert(p, o),
    scrollSince: async (cursors: PullCursors, kinds, limit, o) =>
      rewrite(await inner.scrollSince(cursors, kinds, limit, o), kinds, limit),
    maxPushSeq: (origin, o) => inner.maxPushSeq(origin, o),
    retrieve: (ids, o) => inner.retrieve(ids, o),
    delete: (ids, o) => inner.delete(ids, o),
    count: (o) => inner.count(o),
    close: () => inner.close(),
  };
}

describe.skipIf(REAL_QDRANT_URL !== undefined)('engram.sync() pulls only what add() would accept (test server)', () => {
  let fixture: TargetFixture;
  let a: Device;
  let b: Device;
  const server = () => fixture.server!;
  beforeEach(async () => {
    fixture = await httpTarget();
    a = await device(undefined, { maxContentBytes: 4 * 1024 * 1024 });
    b = await device();
  });
  afterEach(async () => {
    await a.engram.close();
    await b.engram.close();
    expect(server().violations).toEqual([]);
    await fixture.dispose();
  });

  it("a pulled memory over the store's maxContentBytes is refused, the rest applied", async () => {
    const big = await a.engram.add(`big ${'x'.repeat(3 * 1024 * 1024)}`, { userId: 'u' });
    const small = await a.engram.add('a small memory', { userId: 'u' });
    await a.engram.sync(on(fixture));
    const result = await b.engram.sync(on(fixture));
    expect(result.downloaded).toBe(1);
    expect(await b.engram.get(big.results[0]!.id)).toBeUndefined();
    expect((await b.engram.get(small.results[0]!.id))?.memory).toBe('a small memory');
    const { refused } = await b.engram.syncStatus();
    expect(refused.byReason['over-limit']).toBe(1);
    expect(refused.recent[0]?.detail).toMatch(/text: is \d+ bytes, over the maximum of 1048576/);
  });

  it('a pulled vector of another length is refused, not stored to be reported as damaged later', async () => {
    const { results } = await a.engram.add('the vector will be swapped', { userId: 'u' });
    await a.engram.sync(on(fixture));
    const [point] = server()
      .points(fixture.collection)
      .filter((p) => p.payload['kind'] === 'memory');
    server().replace(fixture.collection, {
      ...point!,
      vector: { text: Array.from({ length: 16_003 }, (_, i) => i / 16_003) },
    });
    await b.engram.sync(on(fixture));
    expect(await b.engram.get(results[0]!.id)).toBeUndefined();
    expect((await b.engram.syncStatus()).refused.byReason.malformed).toBe(1);
    expect((await b.engram.stats()).damagedRows).toEqual([]);
  });

  it('a pulled body cannot add fields a record does not have (a tombstone date on a live memory, foreign keys)', async () => {
    const { results } = await a.engram.add('a live memory', { userId: 'u' });
    await a.engram.sync(on(fixture));
    const [point] = server()
      .points(fixture.collection)
      .filter((p) => p.payload['kind'] === 'memory');
    const body = point!.payload['body'] as Record<string, unknown>;
    server().replace(fixture.collection, {
      ...point!,
      payload: { ...point!.payload, body: { ...body, deletedAt: 5, embedderId: 'x', junk: 'y' } },
    });
    await b.engram.sync(on(fixture));
    expect((await b.engram.get(results[0]!.id))?.memory).toBe('a live memory');
    expect((await b.engram.getAll({ userId: 'u' })).total).toBe(1);
  });

  it('a far-future updatedAt (stamps past 2^53) is refused', async () => {
    const { results } = await a.engram.add('meeting at 10', { userId: 'u' });
    await a.engram.sync(on(fixture));
    await b.engram.sync(on(fixture));
    const [point] = server()
      .points(fixture.collection)
      .filter((p) => p.payload['kind'] === 'memory');
    const far = 2 ** 50;
    const body = point!.payload['body'] as Record<string, unknown>;
    server().replace(fixture.collection, {
      ...point!,
      payload: {
        ...point!.payload,
        body: { ...body, text: 'meeting cancelled' },
        updatedAt: far,
        stamp: stampOf(far, point!.payload['origin'] as string),
        pushSeq: 1000,
      },
    });
    await b.engram.sync(on(fixture));
    expect((await b.engram.get(results[0]!.id))?.memory).toBe('meeting at 10');
    expect((await b.engram.syncStatus()).refused.byReason.malformed).toBe(1);
  });

  it('an answer larger than a pull reads is asked again for fewer points; one that stays too large ends the sync with a typed error', async () => {
    await a.engram.add(
      Array.from({ length: 5 }, (_, i) => ({ role: 'user' as const, content: `fact ${i}` })),
      { userId: 'u', infer: false },
    );
    await a.engram.sync(on(fixture));
    // 40 MiB, streamed without a Content-Length: more than any page of this store may take (32 MiB).
    const pull = (body: unknown): boolean => (body as { with_payload?: unknown }).with_payload === true; // not maxPushSeq's scroll
    server().fail(
      { kind: 'oversized', bytes: 40 * 1024 * 1024, declared: false },
      { op: 'scroll', times: 1, when: pull },
    );
    const before = server().requests.get('scroll') ?? 0;
    expect((await b.engram.sync(on(fixture))).downloaded).toBe(5);
    expect((server().requests.get('scroll') ?? 0) - before).toBeGreaterThanOrEqual(3); // maxPushSeq, the refused page, the page again
    // A server that always answers too large: pages halve down to one point, then the sync stops.
    const c = await device();
    try {
      server().fail(
        { kind: 'oversized', bytes: 40 * 1024 * 1024, declared: true },
        { op: 'scroll', times: 100, when: pull },
      );
      const e = await c.engram.sync(on(fixture, { signal: AbortSignal.timeout(20_000) })).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(SyncError);
      expect((e as SyncError).reason).toBe('too-large');
      server().clearFaults();
    } finally {
      await c.engram.close();
    }
  });

  it('an origin named "__proto__" is a device like any other: the pull ends, and its points are pulled once', async () => {
    // More than a page (256), so a cursor that does not move would serve the first page forever.
    const count = 300;
    const at = Date.UTC(2026, 0, 1);
    const vector = Array.from({ length: DIM }, (_, i) => (i === 0 ? 1 : 0));
    await a.engram.sync(on(fixture)); // makes the collection and its header
    for (let i = 0; i < count; i++) {
      const rid = `01KA${String(i).padStart(22, '0')}`;
      const body = {
        text: `from a device named __proto__, note ${i}`,
        tier: 'long_term',
        metadata: {},
        hash: `h${i}`,
        createdAt: at,
      };
      const point = await encodePoint(
        { kind: 'memory', rid, updatedAt: at, origin: '__proto__', version: 1, deleted: false, body, vector },
        i + 1,
        undefined,
      );
      server().replace(fixture.collection, { id: point.id, vector: { text: vector }, payload: point.payload });
    }
    const first = await b.engram.sync(on(fixture, { signal: AbortSignal.timeout(20_000) }));
    expect(first.downloaded).toBe(count);
    expect((await b.engram.get(`01KA${String(7).padStart(22, '0')}`))?.memory).toBe(
      'from a device named __proto__, note 7',
    );
    expect((await b.engram.sync(on(fixture, { signal: AbortSignal.timeout(20_000) }))).downloaded).toBe(0);
    const [state] = Object.values((await b.engram.syncStatus()).cursors);
    expect(Object.hasOwn(state!.pull[0]!.cursors, '__proto__')).toBe(true);
    expect(state!.pull[0]!.cursors['__proto__']).toBe(count);
  });
});

describe('engram.sync({ target }) against answers no Qdrant gives', () => {
  let inner: MemoryTarget;
  let a: Device;
  let b: Device;
  const plain = (target: SyncTarget, extra: Partial<SyncOptions> = {}): SyncOptions => ({ target, ...FAST, ...extra });
  beforeEach(async () => {
    inner = new MemoryTarget();
    a = await device();
    b = await device();
  });
  afterEach(async () => {
    await a.engram.close();
    await b.engram.close();
  });

  it('a push counter that is not a number is refused, and later points of that origin are still pulled', async () => {
    await a.engram.add('first', { userId: 'u' });
    await a.engram.add('second', { userId: 'u' });
    await a.engram.sync(plain(inner));
    let tamper = true;
    const hostile = rewriting(inner, (points) =>
      points.map((p) =>
        tamper && p.payload['pushSeq'] === 2 ? { ...p, payload: { ...p.payload, pushSeq: 'two' } } : p,
      ),
    );
    expect((await b.engram.sync(plain(hostile))).downloaded).toBe(1);
    expect((await b.engram.syncStatus()).refused.byReason.malformed).toBe(1);
    tamper = false;
    await a.engram.add('third', { userId: 'u' });
    await a.engram.sync(plain(inner));
    await b.engram.sync(plain(hostile));
    expect((await b.engram.getAll({ userId: 'u' })).results.map((m) => m.memory).sort()).toEqual([
      'first',
      'second',
      'third',
    ]);
  });

  it('messages a server sends when include has only memories are refused, not applied', async () => {
    await a.engram.add('a memory', { userId: 'u' });
    await a.engram.conversation('t1').add({ role: 'user', content: 'a private message' });
    await a.engram.sync(plain(inner, { include: ['memories', 'blocks', 'messages'] }));
    const hostile: SyncTarget = {
      ...rewriting(inner, (p) => p),
      scrollSince: (cursors, _kinds, limit) => inner.scrollSince(cursors, ['memory', 'block', 'message'], limit),
    };
    await b.engram.sync(plain(hostile, { include: ['memories'] }));
    expect(await b.engram.conversation('t1').getMessages()).toEqual([]);
    expect((await b.engram.getAll({ userId: 'u' })).total).toBe(1);
    expect((await b.engram.syncStatus()).refused.byReason.unrequested).toBe(1);
  });

  it('a page larger than asked is a bad-response SyncError, and nothing of it is applied', async () => {
    await a.engram.add('one memory', { userId: 'u' });
    await a.engram.sync(plain(inner));
    const hostile = rewriting(inner, (points, _kinds, limit) => Array.from({ length: limit + 1 }, () => points[0]!));
    const e = await b.engram.sync(plain(hostile, { retry: { attempts: 1 } })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SyncError);
    expect((e as SyncError).reason).toBe('bad-response');
    expect((await b.engram.getAll({ userId: 'u' })).total).toBe(0);
  });

  it('a server that ignores the cursors and serves one full page of refused points again and again does not keep the pull running', async () => {
    await a.engram.sync(plain(inner));
    const junk: SyncPoint = {
      id: '00000000-0000-8000-8000-000000000009',
      payload: { kind: 'memory', origin: 'x', pushSeq: 'bad', stamp: 0, updatedAt: 0, version: 1, deleted: false },
    };
    let scrolls = 0;
    const hostile = rewriting(inner, (_points, _kinds, limit) => {
      scrolls += 1;
      return Array.from({ length: limit }, () => junk);
    });
    await b.engram.sync(plain(hostile, { signal: AbortSignal.timeout(10_000) }));
    expect(scrolls).toBeLessThanOrEqual(2);
    expect((await b.engram.syncStatus()).refused.byReason.malformed).toBeGreaterThan(0);
  });
});
