/**
 * Browser side of bench/ingest: add() throughput (embedding in the worker,
 * duplicate checks, one transaction per batch with vectors, history, change log
 * and keyword terms, index update) against each of its stages measured alone on
 * the same number of texts in the same run: the raw embedder, the IndexedDB
 * write of the same rows through the store's write path, and the vector index
 * insert of the same vectors.
 */
import { Engram, TransformersEmbedder } from '../../lib/index.js';
import { EngineStore } from '../../lib/engine/engine-store.js';
import { openStore } from '../../lib/engine/open-store.js';
import { memoryHash } from '../../lib/engine/memories.js';
import { createIndex, promote } from '../../lib/vector/choose-index.js';
import type { MemoryRow } from '../../lib/store/rows.js';
import type { RowChange } from '../../lib/store/write.js';
import { newId } from '../../lib/util/id.js';
import { generateSentences } from '../util/sentences.js';
import type { IngestResult } from './results.js';

const log = (line: string): void => {
  console.log(line);
  document.getElementById('log')!.textContent += `${line}\n`;
};

/** The machine's busy CPU time so far (bench/browser.ts), or undefined outside the bench runner. */
async function machineCpu(): Promise<{ busyMs: number; cores: number } | undefined> {
  const probe = (window as unknown as { __benchCpu?: () => Promise<{ busyMs: number; cores: number }> }).__benchCpu;
  return probe === undefined ? undefined : probe();
}

/** Cores kept busy per stage, by stage name, and the machine's core count. */
const busy = new Map<string, number>();
let machineCores = 0;

/** Wall seconds of `work`; the cores the machine kept busy meanwhile go to `busy` under `stage`. */
async function seconds(stage: string, work: () => Promise<void>): Promise<number> {
  const cpu0 = await machineCpu();
  const t0 = performance.now();
  await work();
  const wall = (performance.now() - t0) / 1000;
  const cpu1 = await machineCpu();
  if (cpu0 !== undefined && cpu1 !== undefined) {
    busy.set(stage, (cpu1.busyMs - cpu0.busyMs) / 1000 / wall);
    machineCores = cpu1.cores;
  }
  return wall;
}

/** The rows add() would write for `texts` (same fields, same vectors), in batches. */
function plannedRows(texts: readonly string[], vectors: readonly Float32Array[], embedderId: string, deviceId: string): RowChange[] {
  return texts.map((text, i) => {
    const now = Date.now();
    const row: MemoryRow = { id: newId(now), text, tier: 'long_term', userId: 'w', metadata: {}, hash: memoryHash('long_term', { userId: 'w' }, text), createdAt: now, updatedAt: now, accessCount: 0, version: 1, origin: deviceId };
    return { table: 'memories', op: 'add', id: row.id, after: row, vector: { id: row.id, vector: vectors[i]!, embedderId } };
  });
}

async function run(count: number, batch: number): Promise<IngestResult> {
  // Distinct texts for each side, so the embedder's cache never helps either.
  const all = [...new Set(generateSentences(count * 3 + 4 * batch, 11))];
  const rawTexts = all.slice(0, count);
  const addTexts = all.slice(count, 2 * count);
  const embedder = await TransformersEmbedder.create();
  await embedder.embed(all.slice(2 * count, 2 * count + batch)); // warm-up
  const vectors: Float32Array[] = [];
  const rawSeconds = await seconds('embedder', async () => {
    for (let i = 0; i < rawTexts.length; i += batch) vectors.push(...(await embedder.embed(rawTexts.slice(i, i + batch))));
  });
  log(`  raw embedder: ${(count / rawSeconds).toFixed(0)} texts/s`);

  // The IndexedDB write alone: the same rows add() writes (memory, vector, history, change log, terms, statistics), one transaction per batch.
  const { db, deviceId } = await openStore(`bench-ingest-write-${Date.now()}`);
  const core = new EngineStore(db, { maxContentBytes: 1_000_000, now: Date.now, deviceId });
  const changes = plannedRows(rawTexts, vectors, embedder.id, deviceId);
  const writeSeconds = await seconds('write', async () => {
    for (let i = 0; i < changes.length; i += batch) {
      const slice = changes.slice(i, i + batch);
      await core.write(() => Promise.resolve({ changes: slice, result: null }));
    }
  });
  db.close();
  log(`  IndexedDB write alone: ${(count / writeSeconds).toFixed(0)} rows/s`);

  // The vector index insert alone, as the vector state does it (exact below the crossover, then HNSW).
  let index = await createIndex({ dimensions: embedder.dimensions, expectedSize: 0 });
  const items = changes.map((c, i) => ({ id: c.id, vector: vectors[i]! }));
  const indexSeconds = await seconds('index', async () => {
    for (let i = 0; i < items.length; i += batch) {
      index.addMany(items.slice(i, i + batch));
      index = await promote(index);
    }
  });
  index.dispose();
  log(`  index insert alone: ${(count / indexSeconds).toFixed(0)} vectors/s`);

  const engram = await Engram.open({ name: `bench-ingest-${Date.now()}`, embedder });
  await engram.add(all.slice(2 * count + batch, 2 * count + 2 * batch).map((content) => ({ role: 'user', content })), { userId: 'warm' });
  const addSeconds = await seconds('add', async () => {
    for (let i = 0; i < addTexts.length; i += batch) {
      await engram.add(addTexts.slice(i, i + batch).map((content) => ({ role: 'user', content })), { userId: 'u' });
      if ((i / batch) % 10 === 0) log(`  add: ${i + batch} / ${count}`);
    }
  });
  log(`  add(): ${(count / addSeconds).toFixed(0)} texts/s`);
  await engram.close();
  const slowest = Math.max(rawSeconds, writeSeconds, indexSeconds);
  return {
    texts: count,
    batch,
    rawPerSecond: count / rawSeconds,
    writePerSecond: count / writeSeconds,
    indexPerSecond: count / indexSeconds,
    addPerSecond: count / addSeconds,
    ratio: rawSeconds / addSeconds,
    slowestStageRatio: slowest / addSeconds,
    ...(busy.size === 4 ? { cpu: { cores: machineCores, embedder: busy.get('embedder')!, write: busy.get('write')!, index: busy.get('index')!, add: busy.get('add')! } } : {}),
  };
}

async function main(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const count = Number(params.get('count') ?? '3000');
  const results: IngestResult[] = [];
  for (const batch of (params.get('batches') ?? '1,16,64').split(',').map(Number)) {
    log(`ingest: ${count} texts, batches of ${batch}`);
    results.push(await run(batch === 1 ? Math.min(count, 500) : count, batch));
  }
  (window as unknown as { __benchResult: unknown }).__benchResult = { results };
}

main().catch((e: unknown) => {
  (window as unknown as { __benchResult: unknown }).__benchResult = { error: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e) };
});
