// End-to-end encrypted sync in Chromium, whose WebCrypto (PBKDF2 bits, AES-GCM with
// additional data, HMAC point ids) is what the desktop renderer and the browser use:
// two stores in real IndexedDB converge through the in-memory target, and a server
// that changes a readable field or the header is refused.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { SyncError } from '../../lib/errors.js';
import { Engram } from '../../lib/index.js';
import { MemoryTarget } from '../../lib/sync/memory-target.js';
import { stampOf } from '../../lib/sync/stamp.js';
import type { SyncTarget } from '../../lib/sync/sync-target.js';
import { idToUuid } from '../../lib/util/id.js';

/** The in-memory target with some answers replaced, as a server could. */
function serving(inner: MemoryTarget, over: Partial<SyncTarget>): SyncTarget {
  return {
    ensureCollection: (d) => inner.ensureCollection(d),
    readHeader: () => inner.readHeader(),
    writeHeader: (h) => inner.writeHeader(h),
    upsert: (p) => inner.upsert(p),
    scrollSince: (c, k, l) => inner.scrollSince(c, k, l),
    maxPushSeq: (o) => inner.maxPushSeq(o),
    retrieve: (ids) => inner.retrieve(ids),
    delete: (ids) => inner.delete(ids),
    count: () => inner.count(),
    close: () => inner.close(),
    ...over,
  };
}

const options = (target: SyncTarget) => ({
  target,
  encryption: { passphrase: 'correct horse battery staple' },
  kdfIterations: 1_000,
  retry: { attempts: 1 },
});

describe('encrypted sync in Chromium', () => {
  let a: Engram;
  let b: Engram;
  let server: MemoryTarget;
  beforeEach(async () => {
    const embedder = () => new HashEmbedder({ dimensions: 16 });
    a = await Engram.open({ name: `sync-enc-a-${Date.now()}`, embedder: embedder() });
    b = await Engram.open({ name: `sync-enc-b-${Date.now()}`, embedder: embedder() });
    server = new MemoryTarget();
  });
  afterEach(async () => {
    await a.close();
    await b.close();
  });

  it('two stores converge; a point the server marked deleted deletes nothing; a changed header is refused', async () => {
    const id = (await a.add('Ana moved to Lisbon', { userId: 'u' })).results[0]!.id;
    await a.sync(options(server));
    const stored = server.stored().filter((p) => p.payload['kind'] === 'memory');
    expect(stored.map((p) => p.id)).not.toContain(idToUuid(id));
    expect((await b.sync(options(server))).downloaded).toBe(1);
    expect((await b.get(id))?.memory).toBe('Ana moved to Lisbon');

    // The server marks the point deleted with a newer stamp and the next push counter.
    const forged = serving(server, {
      scrollSince: async (_cursors, kinds, limit) =>
        (await server.scrollSince({}, kinds, limit)).map((p) => {
          const updatedAt = (p.payload['updatedAt'] as number) + 60_000;
          return {
            ...p,
            payload: {
              ...p.payload,
              deleted: true,
              updatedAt,
              stamp: stampOf(updatedAt, p.payload['origin'] as string),
              pushSeq: 99,
            },
          };
        }),
    });
    await b.sync(options(forged));
    expect((await b.get(id))?.memory).toBe('Ana moved to Lisbon');
    expect((await b.syncStatus()).refused.byReason.unauthenticated).toBe(1);

    const header = (await server.readHeader())!;
    const flipped = serving(server, {
      readHeader: () =>
        Promise.resolve({
          ...header,
          encryption: { ...header.encryption!, encryptVectors: !header.encryption!.encryptVectors },
        }),
    });
    const e = await b.sync(options(flipped)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SyncError);
    expect((e as SyncError).reason).toBe('incompatible');
  });
});
