// Faults during engram.sync() on the test server: every one is retried or reported,
// no memory is lost or duplicated, and the next sync completes the work.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbortError, SyncError } from '../../lib/errors.js';
import type { QdrantOp } from './qdrant-server.js';
import { REAL_QDRANT_URL, type TargetFixture } from './targets.js';
import { device, httpTarget, on, type Device } from './sync-helpers.js';

const N = 40;

describe.skipIf(REAL_QDRANT_URL !== undefined)('engram.sync() under faults', () => {
  let fixture: TargetFixture;
  let a: Device;
  let b: Device;
  const server = () => fixture.server!;

  beforeEach(async () => {
    fixture = await httpTarget();
    a = await device();
    b = await device();
    await a.engram.add(
      Array.from({ length: N }, (_, i) => ({ role: 'user' as const, content: `fact number ${i}` })),
      { userId: 'u', infer: false },
    );
  });
  afterEach(async () => {
    await a.engram.close();
    await b.engram.close();
    expect(server().violations).toEqual([]);
    await fixture.dispose();
  });

  /** The other device ends with exactly a's memories: nothing lost, nothing twice. */
  async function converged(): Promise<void> {
    await b.engram.sync(on(fixture));
    const mine = (await a.engram.getAll({ userId: 'u', limit: 1000 })).results;
    const theirs = (await b.engram.getAll({ userId: 'u', limit: 1000 })).results;
    expect(theirs).toHaveLength(N);
    expect(theirs).toEqual(mine);
    expect(
      server()
        .points(fixture.collection)
        .filter((p) => p.payload['kind'] === 'memory'),
    ).toHaveLength(N);
  }

  it('server down: sync() reports unreachable, keeps its cursors, and the next sync completes', async () => {
    await server().stop();
    const e = await a.engram.sync(on(fixture)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SyncError);
    expect((e as SyncError).reason).toBe('unreachable');
    expect((await a.engram.syncStatus()).lastError?.reason).toBe('unreachable');
    await server().restart();
    expect((await a.engram.sync(on(fixture))).uploaded).toBe(N);
    expect((await a.engram.syncStatus()).lastError).toBeUndefined();
    await converged();
  });

  it.each<[string, Parameters<NonNullable<TargetFixture['server']>['fail']>[0], QdrantOp]>([
    ['5xx', { kind: 'status', status: 503 }, 'upsert'],
    ['429 with Retry-After', { kind: 'rate-limit', retryAfterS: 0 }, 'upsert'],
    ['a timeout', { kind: 'stall' }, 'scroll'],
    ['malformed JSON', { kind: 'malformed' }, 'scroll'],
    ['truncated JSON', { kind: 'truncated' }, 'upsert'],
    ['a dropped connection', { kind: 'hang-up' }, 'upsert'],
  ])('%s is retried within the sync, which completes', async (_name, fault, op) => {
    server().fail(fault, { op, times: 2 });
    const result = await a.engram.sync(on(fixture, { timeoutMs: 500, batchSize: 16 }));
    expect(result.uploaded).toBe(N);
    expect(server().requests.get(op)).toBeGreaterThan(2);
    await converged();
  });

  it('a batch failing halfway: the sync fails, the next one completes without duplicates', async () => {
    server().fail({ kind: 'half-batch' }, { op: 'upsert' });
    await expect(a.engram.sync(on(fixture, { batchSize: 16, retry: { attempts: 1 } }))).rejects.toMatchObject({
      reason: 'server',
    });
    expect(server().points(fixture.collection).length).toBeLessThan(N);
    expect((await a.engram.sync(on(fixture, { batchSize: 16 }))).uploaded).toBe(N);
    await converged();
  });

  it('a sync stopped midway (abort) loses nothing; the next one finishes the work', async () => {
    const controller = new AbortController();
    const e = await a.engram
      .sync(
        on(fixture, {
          batchSize: 16,
          signal: controller.signal,
          onProgress: (p) => {
            if (p.phase === 'push' && p.done >= 16) controller.abort();
          },
        }),
      )
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AbortError);
    const partial = server()
      .points(fixture.collection)
      .filter((p) => p.payload['kind'] === 'memory').length;
    expect(partial).toBeGreaterThanOrEqual(16);
    expect(partial).toBeLessThan(N);
    // b pulls the partial state, then everything once a finishes.
    await b.engram.sync(on(fixture));
    await a.engram.sync(on(fixture));
    await converged();
  });

  it('a sync stopped between pull and push (the store closed) resumes from its cursors', async () => {
    await a.engram.sync(on(fixture));
    await b.engram.sync(on(fixture));
    const { results } = await a.engram.add('one more fact', { userId: 'u' });
    // The change is in a's log; the server is down, so nothing leaves.
    await server().stop();
    await expect(a.engram.sync(on(fixture, { retry: { attempts: 1 } }))).rejects.toThrow(SyncError);
    await server().restart();
    expect((await a.engram.sync(on(fixture))).uploaded).toBe(1);
    expect((await b.engram.sync(on(fixture))).downloaded).toBe(1);
    expect((await b.engram.get(results[0]!.id))?.memory).toBe('one more fact');
  });

  it('startAutoSync() backs off while the server is down and catches up when it returns', async () => {
    await server().stop();
    const errors: unknown[] = [];
    let synced = 0;
    await a.engram.startAutoSync({
      ...on(fixture, { retry: { attempts: 1 } }),
      intervalMs: 20,
      maxBackoffMs: 200,
      onError: (e) => errors.push(e),
      onSync: () => (synced += 1),
    });
    for (let i = 0; i < 100 && errors.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    const status = await a.engram.syncStatus();
    expect(status.auto).toBe(true);
    expect(status.failures).toBeGreaterThanOrEqual(3);
    expect(status.lastError?.reason).toBe('unreachable');
    // The pause grows with the failures (20 ms doubled per failure, capped at 200 ms).
    expect((status.nextSyncAt ?? 0) - Date.now()).toBeGreaterThan(20);
    await server().restart();
    for (let i = 0; i < 200 && synced === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(synced).toBeGreaterThan(0);
    await a.engram.stopAutoSync();
    expect((await a.engram.syncStatus()).auto).toBe(false);
    expect((await a.engram.syncStatus()).failures).toBe(0);
    await converged();
  });

  it('startAutoSync() stops on a failure that does not mend itself (wrong passphrase)', async () => {
    await a.engram.sync(on(fixture, { encryption: { passphrase: 'the first passphrase' } }));
    const errors: unknown[] = [];
    await b.engram.startAutoSync({
      ...on(fixture, { encryption: { passphrase: 'another passphrase' } }),
      intervalMs: 20,
      onError: (e) => errors.push(e),
    });
    for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(errors[0]).toMatchObject({ reason: 'wrong-passphrase' });
    expect((await b.engram.syncStatus()).auto).toBe(false);
    await a.engram.sync(on(fixture, { encryption: { passphrase: 'the first passphrase' } }));
    const mine = (await a.engram.getAll({ userId: 'u', limit: 1000 })).results;
    await b.engram.sync(on(fixture, { encryption: { passphrase: 'the first passphrase' } }));
    expect((await b.engram.getAll({ userId: 'u', limit: 1000 })).results).toEqual(mine);
  });
});
