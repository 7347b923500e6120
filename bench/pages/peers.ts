/**
 * Browser side of bench/peers. One system, one phase per page load, driven by
 * bench/peers.ts in a browser profile of that system's own:
 *  - `phase=ingest`: build the corpus, insert it to a durable state (timed), close.
 *  - `phase=open` (a new browser process on the same profile): open the
 *    persisted state and answer the first vector query (timed), then the first
 *    hybrid query, then every query in each mode (timed one by one), then the
 *    memory the open system holds.
 * Hits are document indexes; bench/peers.ts computes recall against the exact top-10.
 */
// First: its hooks must be in place before any system instantiates WebAssembly.
import { wasmBytes } from './wasm-memories.js';
import { peerCorpus } from '../util/peer-corpus.js';
import type { PeerSystem } from './peers/system.js';
import type { PeerPhaseResult, PeerMemory } from './results.js';

const K = 10;

const log = (line: string): void => {
  console.log(line);
  document.getElementById('log')!.textContent += `${line}\n`;
};

/** The system's adapter, loaded on its own so that no other system's code is in the page. */
async function load(system: string): Promise<PeerSystem> {
  switch (system) {
    case 'engram':
      return (await import('./peers/engram.js')).engramPeer('batched');
    case 'engram-small':
      return (await import('./peers/engram.js')).engramPeer('small');
    case 'engram-resumed':
      return (await import('./peers/engram.js')).engramPeer('resumed');
    case 'engram-bulk':
      return (await import('./peers/engram.js')).engramPeer('bulk');
    case 'engram-import':
      return (await import('./peers/engram.js')).engramPeer('import');
    case 'orama':
      return (await import('./peers/orama.js')).oramaPeer();
    case 'pglite':
      return (await import('./peers/pglite.js')).pglitePeer();
    case 'hnswlib-wasm':
      return (await import('./peers/hnswlib.js')).hnswlibPeer();
    case 'idb-floor':
      return (await import('./peers/idb-floor.js')).idbFloorPeer('rows');
    case 'idb-floor-vectors':
      return (await import('./peers/idb-floor.js')).idbFloorPeer('vectors');
    case 'idb-floor-blocks':
      return (await import('./peers/idb-floor.js')).idbFloorPeer('blocks');
    case 'entitydb':
      return (await import('./peers/entitydb.js')).entityDbPeer();
    default:
      throw new RangeError(`unknown system ${system}`);
  }
}

interface HeapUsage {
  usedSize: number;
  backingStorageSize?: number;
}

/**
 * JS heap in use after a collection and ArrayBuffer backing stores (DevTools' Runtime.getHeapUsage, which
 * counts no WebAssembly memory), and every WebAssembly memory's size.
 */
async function memoryNow(): Promise<{ heap: number; buffers: number; wasm: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((resolve) => setTimeout(resolve, 50));
  (globalThis as { gc?: () => void }).gc?.();
  const usage = await (window as unknown as { __benchHeapUsage: () => Promise<HeapUsage> }).__benchHeapUsage();
  return { heap: usage.usedSize, buffers: usage.backingStorageSize ?? Number.NaN, wasm: wasmBytes() };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t0 };
}

/** Each of `count` queries asked one after the other: its time and its answer. */
async function pass<T>(count: number, ask: (q: number) => Promise<T>): Promise<{ ms: number[]; answers: T[] }> {
  const ms: number[] = [];
  const answers: T[] = [];
  for (let q = 0; q < count; q++) {
    const { value, ms: took } = await timed(() => ask(q));
    ms.push(took);
    answers.push(value);
  }
  return { ms, answers };
}

async function ingest(system: PeerSystem, n: number, queries: number): Promise<PeerPhaseResult> {
  const corpus = peerCorpus(n, queries);
  log(`${n} documents built; inserting`);
  const { ms: whole } = await timed(() => system.ingest(corpus, log));
  const ms = system.ingestMs?.() ?? whole;
  log(`durable in ${(ms / 1000).toFixed(1)} s`);
  return { config: system.config, ingestMs: ms };
}

async function open(system: PeerSystem, n: number, queries: number): Promise<PeerPhaseResult> {
  const { queryVectors, queryTexts } = peerCorpus(n, queries, false);
  const before = await memoryNow();
  const first = await timed(async () => {
    await system.open(n);
    return system.vector(queryVectors[0]!, queryTexts[0]!, K);
  });
  if (first.value.length !== K) throw new RangeError(`first answer had ${first.value.length} hits, not ${K}`);
  log(`open to first answer ${first.ms.toFixed(0)} ms`);
  const result: PeerPhaseResult = { config: system.config, openMs: first.ms };
  const hybrid = system.hybrid;
  if (hybrid !== undefined) {
    result.firstHybridMs = (await timed(() => hybrid(queryVectors[1]!, queryTexts[1]!, K))).ms;
    log(`first hybrid query ${result.firstHybridMs.toFixed(0)} ms`);
  }
  const vector = (q: number) => system.vector(queryVectors[q]!, queryTexts[q]!, K);
  const vectors = await pass(queries, vector);
  result.vectorMs = vectors.ms;
  result.vectorHits = vectors.answers;
  const hybridOf = hybrid === undefined ? undefined : (q: number) => hybrid(queryVectors[q]!, queryTexts[q]!, K);
  if (hybridOf !== undefined) {
    const hybrids = await pass(queries, hybridOf);
    const empty = hybrids.answers.findIndex((hits) => hits.length === 0);
    if (empty >= 0) throw new RangeError(`hybrid query ${empty} found nothing`);
    result.hybridMs = hybrids.ms;
  }
  // Both again: the first passes run in IndexedDB's warm-up after the reopen (results.ts, vectorAgainMs).
  result.vectorAgainMs = (await pass(queries, vector)).ms;
  if (hybridOf !== undefined) result.hybridAgainMs = (await pass(queries, hybridOf)).ms;
  const after = await memoryNow();
  const memory: PeerMemory = {
    heapBytes: after.heap - before.heap,
    buffersBytes: after.buffers - before.buffers,
    wasmBytes: after.wasm - before.wasm,
  };
  result.memory = memory;
  log(
    `held: JS heap ${(memory.heapBytes / 2 ** 20).toFixed(0)} MiB, ArrayBuffers ${(memory.buffersBytes / 2 ** 20).toFixed(0)} MiB, WASM ${((after.wasm - before.wasm) / 2 ** 20).toFixed(0)} MiB`,
  );
  return result;
}

async function main(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const system = params.get('system') ?? '';
  const n = Number(params.get('n'));
  const queries = Number(params.get('queries'));
  const phase = params.get('phase');
  log(`peers: ${system}, ${n} documents, ${queries} queries, phase ${phase ?? '?'}`);
  const peer = await load(system);
  const result = phase === 'ingest' ? await ingest(peer, n, queries) : await open(peer, n, queries);
  (window as unknown as { __benchResult: unknown }).__benchResult = result;
}

main().catch((e: unknown) => {
  (window as unknown as { __benchResult: unknown }).__benchResult = {
    error: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e),
  };
});
