// A sync whose Qdrant target cannot be made (its module does not load, or its client throws):
// the failure is reported like any failed sync, and the store is not left "running".
import { describe, expect, it, vi } from 'vitest';
import { device, FAST } from './sync-helpers.js';

vi.mock('../../lib/sync/qdrant-target.js', () => ({
  QdrantTarget: class {
    constructor() {
      throw new Error('the Qdrant client could not be made');
    }
  },
}));

describe('engram.sync() when its target cannot be made', () => {
  it('sync() rejects, syncStatus() reports the error and no sync running, and the next sync runs', async () => {
    const a = await device();
    try {
      const options = { url: 'http://127.0.0.1:9', collection: 'c', ...FAST };
      await expect(a.engram.sync(options)).rejects.toThrow(/could not be made/);
      const status = await a.engram.syncStatus();
      expect(status.running).toBe(false);
      expect(status.lastError?.message).toMatch(/could not be made/);
      expect(status.lastSyncAt).toBeTypeOf('number');
      // The chain of syncs goes on: the next one runs (and fails the same way) instead of waiting forever.
      await expect(a.engram.sync(options)).rejects.toThrow(/could not be made/);
      expect((await a.engram.syncStatus()).running).toBe(false);
    } finally {
      await a.engram.close();
    }
  });
});
