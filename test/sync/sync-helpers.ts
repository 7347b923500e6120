// Two-store fixtures for the sync suites: engram stores with a small deterministic
// embedder and manual clocks, and a collection on the test server (or a real Qdrant).
import { Engram, HashEmbedder, type EngramOptions } from '../../lib/index.js';
import type { SyncOptions } from '../../lib/sync/sync-options.js';
import { manualClock, openTemp } from '../helpers.js';
import { httpTarget, type TargetFixture } from './targets.js';

export const DIM = 16;

/** One device: a store and its clock. */
export interface Device {
  engram: Engram;
  clock: ReturnType<typeof manualClock>;
}

/** Opens a device whose clock starts at `start`. */
export async function device(start = Date.UTC(2026, 0, 1), options: Partial<EngramOptions> = {}): Promise<Device> {
  const clock = manualClock(start);
  const engram = await openTemp({ embedder: new HashEmbedder({ dimensions: DIM }), now: clock.now, ...options });
  return { engram, clock };
}

/** Fast retries and a fast key derivation, for tests. */
export const FAST: Pick<SyncOptions, 'retry' | 'kdfIterations' | 'timeoutMs'> = {
  retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 50 },
  kdfIterations: 1_000,
  timeoutMs: 2_000,
};

/** Sync options for a collection of the fixture. */
export function on(fixture: TargetFixture, extra: Partial<SyncOptions> = {}): SyncOptions {
  return { url: fixture.url, collection: fixture.collection, ...FAST, ...extra };
}

/**
 * The payloads as JSON, with each sealed field's ciphertext checked to be base64
 * and replaced by a marker. Ciphertext is random base64, which holds any short
 * word (say "ana" or "PIN") by chance now and then, so tests look for secrets in
 * what is sent unsealed; that the sealed part carries the data is proved by
 * decoding it with the key.
 */
export function unsealedWire(payloads: readonly (Record<string, unknown> | null | undefined)[]): string {
  return JSON.stringify(
    payloads.map((payload) => {
      if (payload === null || payload === undefined || !('sealed' in payload)) return payload;
      const sealed = payload['sealed'];
      if (typeof sealed !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(sealed))
        throw new TypeError(`sealed field is not base64: ${String(sealed)}`);
      return { ...payload, sealed: '<ciphertext>' };
    }),
  );
}

export { httpTarget };
