// The targets the sync suites run against: the in-memory twin, QdrantTarget on the
// loopback test server and, when QDRANT_URL is set, QdrantTarget on a real Qdrant.
import { MemoryTarget } from '../../lib/sync/memory-target.js';
import { QdrantTarget } from '../../lib/sync/qdrant-target.js';
import type { SyncTarget } from '../../lib/sync/sync-target.js';
import { startQdrantServer, type QdrantServer } from './qdrant-server.js';

/** A real Qdrant to run the suite against, e.g. QDRANT_URL=http://127.0.0.1:6333. */
export const REAL_QDRANT_URL: string | undefined =
  process.env['QDRANT_URL'] === '' ? undefined : process.env['QDRANT_URL'];

let counter = 0;

/** A unique collection name per test. */
export function collectionName(): string {
  counter += 1;
  return `engram_test_${Date.now().toString(36)}_${counter}_${Math.random().toString(36).slice(2, 8)}`;
}

/** A target and what it runs on; `dispose` removes the collection and stops the server. */
export interface TargetFixture {
  target: SyncTarget;
  /** The test server, when the target talks to it (fault injection, stored payloads). */
  server?: QdrantServer;
  url: string;
  collection: string;
  dispose(): Promise<void>;
}

/** Removes a collection from a real Qdrant. */
export async function dropCollection(url: string, collection: string): Promise<void> {
  await fetch(`${url}/collections/${collection}`, { method: 'DELETE', signal: AbortSignal.timeout(10_000) });
}

/** QdrantTarget over HTTP: the real Qdrant when QDRANT_URL is set, else a fresh loopback test server. */
export async function httpTarget(options: { timeoutMs?: number } = {}): Promise<TargetFixture> {
  const collection = collectionName();
  if (REAL_QDRANT_URL !== undefined) {
    const url = REAL_QDRANT_URL;
    const target = new QdrantTarget({ url, collection, timeoutMs: options.timeoutMs ?? 10_000 });
    return { target, url, collection, dispose: () => dropCollection(url, collection) };
  }
  const server = await startQdrantServer();
  const target = new QdrantTarget({ url: server.url, collection, timeoutMs: options.timeoutMs ?? 5_000 });
  return { target, server, url: server.url, collection, dispose: () => server.close() };
}

/** Every kind of target, for contract tests that must hold for each. */
export const TARGET_KINDS: { name: string; make: () => Promise<TargetFixture> }[] = [
  {
    name: 'MemoryTarget',
    make: () =>
      Promise.resolve({
        target: new MemoryTarget(),
        url: 'memory:',
        collection: 'memory',
        dispose: () => Promise.resolve(),
      }),
  },
  {
    name: REAL_QDRANT_URL === undefined ? 'QdrantTarget (test server)' : 'QdrantTarget (real Qdrant)',
    make: () => httpTarget(),
  },
];
