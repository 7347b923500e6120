/**
 * Browser side of bench/cold-open: time from Engram.open() to the first answered
 * search on stores of N memories (384-d clustered vectors), opening from the
 * index snapshot against a forced rebuild from the stored vectors.
 */
import { Engram, type Embedder } from '../../lib/index.js';
import { EngramDb } from '../../lib/store/schema.js';
import { deleteSnapshot } from '../../lib/store/snapshot-chunks.js';
import { clusteredVectors } from '../util/vectors.js';
import type { ColdOpenResult } from './results.js';
import { wasmBytes } from './wasm-memories.js';

const log = (line: string): void => {
  console.log(line);
  document.getElementById('log')!.textContent += `${line}\n`;
};

const DIMS = 384;

/** JS heap in use (after a garbage collection when the page may ask for one) and WASM memory, in bytes. */
function memoryInUse(): { heapBytes: number; wasmBytes: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const heapBytes =
    (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? Number.NaN;
  return { heapBytes, wasmBytes: wasmBytes() };
}

/** Looks vectors up by text: the store fills at IndexedDB speed, not model speed. */
class TableEmbedder implements Embedder {
  readonly id = 'bench-table-384';
  readonly dimensions = DIMS;
  constructor(private readonly table: Map<string, Float32Array>) {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    await Promise.resolve();
    return texts.map((t) => this.table.get(t)!);
  }
  async dispose(): Promise<void> {}
}

function normalised(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  const s = 1 / Math.sqrt(n);
  return v.map((x) => x * s);
}

async function openAndSearch(name: string, embedder: Embedder, query: string): Promise<number> {
  const t0 = performance.now();
  const e = await Engram.open({ name, embedder });
  const { results } = await e.search(query, { mode: 'vector', limit: 10 });
  const ms = performance.now() - t0;
  if (results.length !== 10) throw new Error(`expected 10 results, got ${results.length}`);
  await e.close();
  return ms;
}

async function run(n: number, rebuildRuns: number): Promise<ColdOpenResult> {
  const vectors = clusteredVectors({ count: n + 1, dimensions: DIMS, seed: 5 }).map(normalised);
  const texts = vectors.map((_, i) => `memory ${i}`);
  const embedder = new TableEmbedder(new Map(texts.map((t, i) => [t, vectors[i]!])));
  const name = `bench-cold-${n}-${Date.now()}`;
  const t0 = performance.now();
  const e = await Engram.open({ name, embedder });
  for (let i = 0; i < n; i += 1000) {
    await e.add(
      texts.slice(i, Math.min(n, i + 1000)).map((content) => ({ role: 'user', content })),
      { userId: 'u', dedupe: 'off' },
    );
    if ((i / 1000) % 10 === 0) log(`  ${n}: stored ${Math.min(n, i + 1000)}`);
  }
  await e.flush(); // merges what waits in the exact buffer into HNSW, writes the snapshot
  await e.close();
  const fillSeconds = (performance.now() - t0) / 1000;
  log(`  ${n}: filled in ${fillSeconds.toFixed(1)} s`);
  const query = texts[n]!;
  const snapshotMs: number[] = [];
  for (let r = 0; r < 3; r++) snapshotMs.push(await openAndSearch(name, embedder, query));
  log(`  ${n}: open from snapshot ${snapshotMs.map((x) => x.toFixed(0)).join(', ')} ms`);
  // The same page's memory after the fill, for reference only: it holds this page's table of every vector
  // and WASM memory's high-water mark from the fill (WASM memory never shrinks). The memory goal is
  // measured in a fresh document that only opens the store (measure() below).
  const open = await Engram.open({ name, embedder });
  await open.search(query, { mode: 'vector', limit: 10 });
  const afterFill = { ...memoryInUse(), rawVectorBytes: n * DIMS * 4 };
  log(
    `  ${n}: in this page after the fill: JS heap ${(afterFill.heapBytes / 2 ** 20).toFixed(0)} MiB, WASM ${(afterFill.wasmBytes / 2 ** 20).toFixed(0)} MiB, raw vectors ${(afterFill.rawVectorBytes / 2 ** 20).toFixed(0)} MiB`,
  );
  await open.close();
  const rebuildMs: number[] = [];
  for (let r = 0; r < rebuildRuns; r++) {
    const db = new EngramDb(name);
    await db.open();
    await deleteSnapshot(db, 'indexSnapshot');
    db.close();
    rebuildMs.push(await openAndSearch(name, embedder, query));
  }
  log(`  ${n}: open with rebuild ${rebuildMs.map((x) => x.toFixed(0)).join(', ')} ms`);
  // The store stays (with the snapshot the last open wrote) for measure() in a fresh document.
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return {
    memories: n,
    fillSeconds,
    snapshotMs,
    rebuildMs,
    ratio: median(rebuildMs) / median(snapshotMs),
    memoryAfterFill: afterFill,
    store: name,
  };
}

const PENDING = 'engram-bench-cold-open';
/** Fresh documents the open is timed in (the memory is measured in the first). */
const FRESH_RUNS = 3;

/** V8 heap in use after a collection, without ArrayBuffer backing stores (DevTools' Runtime.getHeapUsage, through bench/browser.ts). */
async function v8Heap(): Promise<number> {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = await (
    window as unknown as { __benchHeapUsage: () => Promise<{ usedSize: number }> }
  ).__benchHeapUsage();
  return usage.usedSize;
}

/**
 * In a fresh document (this page loaded again: a new JS heap and a new WASM
 * instance), the time from open() to the first answered search, as an app
 * start sees it, and (in the first such document) the memory a user's page
 * holds with the store open from its snapshot and answering: JS heap (after a
 * collection) plus WASM memory.
 */
async function measure(results: ColdOpenResult[], run: number): Promise<void> {
  // The first document's heap is collected some time after the navigation: collect until the heap stops shrinking.
  let last = Infinity;
  for (let round = 0; round < 20; round++) {
    const now = memoryInUse().heapBytes;
    if (now > last * 0.98) break;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  for (const r of results) {
    const query = `memory ${r.memories}`;
    const vector = normalised(clusteredVectors({ count: r.memories + 1, dimensions: DIMS, seed: 5 })[r.memories]!);
    const embedder = new TableEmbedder(new Map([[query, vector]]));
    // The JS heap engram holds is what it adds to the page's own (the first document's garbage may linger in the same process),
    // read through DevTools without ArrayBuffer backing stores: performance.memory counts WASM memory's buffer once it has grown.
    const before = run === 0 ? await v8Heap() : 0;
    const t0 = performance.now();
    const e = await Engram.open({ name: r.store!, embedder });
    const { results: hits } = await e.search(query, { mode: 'vector', limit: 10 });
    const ms = performance.now() - t0;
    if (hits.length !== 10) throw new Error(`expected 10 results, got ${hits.length}`);
    r.freshOpenMs = [...(r.freshOpenMs ?? []), ms];
    log(`  ${r.memories}: fresh page ${run + 1}: open to first search ${ms.toFixed(0)} ms`);
    if (run === 0) {
      const held = memoryInUse();
      r.memory = {
        heapBytes: (await v8Heap()) - before,
        wasmBytes: held.wasmBytes,
        rawVectorBytes: r.memories * DIMS * 4,
      };
      log(
        `  ${r.memories}: fresh page, store open: JS heap held ${(r.memory.heapBytes / 2 ** 20).toFixed(0)} MiB, WASM ${(r.memory.wasmBytes / 2 ** 20).toFixed(0)} MiB, raw vectors ${(r.memory.rawVectorBytes / 2 ** 20).toFixed(0)} MiB`,
      );
    }
    await e.close();
    if (run === FRESH_RUNS - 1) {
      indexedDB.deleteDatabase(r.store!);
      delete r.store;
    }
  }
}

async function main(): Promise<void> {
  const params = new URLSearchParams(location.search);
  if (params.has('measure')) {
    const results = JSON.parse(sessionStorage.getItem(PENDING) ?? '[]') as ColdOpenResult[];
    const run = Number(params.get('measure'));
    await measure(results, run);
    if (run + 1 < FRESH_RUNS) {
      // The next timing in another fresh document.
      sessionStorage.setItem(PENDING, JSON.stringify(results));
      params.set('measure', String(run + 1));
      location.search = params.toString();
      return;
    }
    sessionStorage.removeItem(PENDING);
    (window as unknown as { __benchResult: unknown }).__benchResult = { results };
    return;
  }
  const sizes = (params.get('sizes') ?? '10000,100000').split(',').map(Number);
  const results: ColdOpenResult[] = [];
  for (const n of sizes) {
    log(`cold-open: ${n} memories`);
    results.push(await run(n, n >= 100_000 ? 1 : 3));
  }
  // Smallest first, so the largest store's figures are not raised by an earlier one's WASM high-water mark.
  sessionStorage.setItem(PENDING, JSON.stringify(results.sort((a, b) => a.memories - b.memories)));
  params.set('measure', '0');
  location.search = params.toString();
}

main().catch((e: unknown) => {
  (window as unknown as { __benchResult: unknown }).__benchResult = {
    error: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e),
  };
});
