/**
 * Browser side of bench/ingest: add() throughput (embedding in the worker,
 * duplicate checks, one transaction per batch with vectors, change log
 * and keyword terms, index update) against each of its stages measured alone on
 * the same number of texts in the same run: the raw embedder, the IndexedDB
 * write of the same rows through the store's write path, and the vector index
 * insert of the same vectors.
 */
import { Dexie } from 'dexie';
import { Engram, TransformersEmbedder, type Embedder } from '../../lib/index.js';
import { normalizeText } from '../../lib/search/analyze.js';
import { retrievalProfile, textToEmbed } from '../../lib/search/retrieval-profile.js';
import { EngineStore } from '../../lib/engine/engine-store.js';
import { openStore } from '../../lib/engine/open-store.js';
import { memoryHash } from '../../lib/engine/memories/memories.js';
import { createIndex, promote } from '../../lib/vector/choose-index.js';
import type { MemoryRow } from '../../lib/store/rows.js';
import type { RowChange } from '../../lib/store/write.js';
import { newId } from '../../lib/util/id.js';
import { generateSentences } from '../util/sentences.js';
import { BENCH_MODELS, benchModelOf } from '../util/bench-model.js';
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

/** Wall seconds per stage, summed over the rounds. */
const wall = new Map<string, number>();
/** The machine's busy CPU seconds per stage, and the wall seconds of the windows they were read over, summed over the rounds. */
const busyCpu = new Map<string, { busy: number; window: number }>();
let machineCores = 0;

/**
 * Times `work` under `stage`, adding its wall time to the stage's total, and
 * the machine's busy CPU time over a window that spans it. The window is read
 * by its own clock: each reading of the CPU counters is a round trip to the
 * bench runner (milliseconds), and a stage of a round may last only tens of them.
 */
async function timed(stage: string, work: () => Promise<void>): Promise<void> {
  const w0 = performance.now();
  const cpu0 = await machineCpu();
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = await machineCpu();
  const window = (performance.now() - w0) / 1000;
  wall.set(stage, (wall.get(stage) ?? 0) + seconds);
  if (cpu0 !== undefined && cpu1 !== undefined) {
    const sum = busyCpu.get(stage) ?? { busy: 0, window: 0 };
    busyCpu.set(stage, { busy: sum.busy + (cpu1.busyMs - cpu0.busyMs) / 1000, window: sum.window + window });
    machineCores = cpu1.cores;
  }
}

/** The rows add() would write for `texts` (same fields, same vectors), in batches. */
function plannedRows(
  texts: readonly string[],
  vectors: readonly Float32Array[],
  embedderId: string,
  deviceId: string,
): RowChange[] {
  return texts.map((text, i) => {
    const now = Date.now();
    const row: MemoryRow = {
      id: newId(now),
      text,
      tier: 'long_term',
      userId: 'w',
      metadata: {},
      hash: memoryHash('long_term', { userId: 'w' }, text),
      createdAt: now,
      updatedAt: now,
      accessCount: 0,
      version: 1,
      origin: deviceId,
    };
    return {
      table: 'memories',
      op: 'add',
      id: row.id,
      after: row,
      vector: { id: row.id, vector: vectors[i]!, embedderId },
    };
  });
}

/**
 * An embedder that answers from vectors the real one computed before the
 * timing (texts as the store's analyzer normalizes them): add() with it does
 * everything but the model's work, which shows add()'s own cost apart from the
 * CPU the embedding takes from the other stages.
 */
async function precomputed(embedder: Embedder, texts: readonly string[], batch: number): Promise<Embedder> {
  // As engram embeds a memory: normalized, then marked as a passage (e5's "passage: ").
  const profile = retrievalProfile(embedder.id);
  const keys = texts.map((t) => textToEmbed(profile, 'passage', normalizeText(t)));
  const known = new Map<string, Float32Array>();
  for (let i = 0; i < keys.length; i += batch) {
    const vectors = await embedder.embed(keys.slice(i, i + batch));
    vectors.forEach((v, j) => known.set(keys[i + j]!, v));
  }
  return {
    id: embedder.id,
    dimensions: embedder.dimensions,
    embed: async (asked) => {
      await new Promise((resolve) => setTimeout(resolve, 0)); // a worker's answer comes in a later task
      return asked.map((t) => {
        const v = known.get(t);
        if (v === undefined) throw new Error(`bench: no precomputed vector for "${t}"`);
        return v;
      });
    },
    dispose: () => Promise.resolve(),
  };
}

/**
 * The stages run in this many rounds, in turn, each on its share of the texts:
 * the machine's speed swings from one second to the next (on the 2-core
 * machine of the report, the same code measured 0.56x to 0.77x in runs of one
 * round each), and rounds in turn let the swings weigh on every stage alike.
 */
const ROUNDS = 6;

async function run(count: number, batch: number, model: string): Promise<IngestResult> {
  wall.clear();
  busyCpu.clear();
  // Distinct texts for each stage, so the embedder's cache never helps any.
  const all = [...new Set(generateSentences(count * 4 + 4 * batch, 11))];
  const rawTexts = all.slice(0, count);
  // The raw embedder gets what add() gives it: the text marked as a passage for a model that wants it (e5).
  const rawMarked = rawTexts.map((t) => textToEmbed(retrievalProfile(model), 'passage', t));
  const addTexts = all.slice(count, 2 * count);
  const precomputedTexts = all.slice(2 * count, 3 * count);
  const spare = all.slice(3 * count);
  // The model's first load: create() (worker, runtime, model files) and the first embedding (session warm-up).
  const loadStart = performance.now();
  const embedder = await TransformersEmbedder.create({ model });
  const loadMs = performance.now() - loadStart;
  const firstStart = performance.now();
  await embedder.embed(spare.slice(0, batch)); // warm-up
  const firstEmbedMs = performance.now() - firstStart;
  log(`  ${model}: create() ${loadMs.toFixed(0)} ms, first embed of ${batch} texts ${firstEmbedMs.toFixed(0)} ms`);
  const quick = await precomputed(embedder, [...precomputedTexts, ...spare.slice(2 * batch, 3 * batch)], batch);

  const names = [
    `bench-ingest-write-${Date.now()}`,
    `bench-ingest-${Date.now()}`,
    `bench-ingest-precomputed-${Date.now()}`,
  ] as const;
  const { db, deviceId } = await openStore(names[0]);
  const core = new EngineStore(db, { maxContentBytes: 1_000_000, now: Date.now, deviceId });
  let index = await createIndex({ dimensions: embedder.dimensions, expectedSize: 0 });
  const engram = await Engram.open({ name: names[1], embedder });
  const engramQuick = await Engram.open({ name: names[2], embedder: quick });
  const messages = (texts: readonly string[]): { role: 'user'; content: string }[] =>
    texts.map((content) => ({ role: 'user', content }));
  await engram.add(messages(spare.slice(batch, 2 * batch)), { userId: 'warm' });
  await engramQuick.add(messages(spare.slice(2 * batch, 3 * batch)), { userId: 'warm' });

  // Each round's share: whole batches.
  const share = Math.ceil(count / ROUNDS / batch) * batch;
  for (let from = 0; from < count; from += share) {
    const to = Math.min(count, from + share);
    const vectors: Float32Array[] = [];
    // The raw embedder.
    await timed('embedder', async () => {
      for (let i = from; i < to; i += batch)
        vectors.push(...(await embedder.embed(rawMarked.slice(i, Math.min(to, i + batch)))));
    });
    // The IndexedDB write alone: the same rows add() writes (memory, vector, change log, terms, statistics; a creation writes no history entry), one transaction per batch.
    const changes = plannedRows(rawTexts.slice(from, to), vectors, embedder.id, deviceId);
    await timed('write', async () => {
      for (let i = 0; i < changes.length; i += batch) {
        const slice = changes.slice(i, i + batch);
        await core.write(() => Promise.resolve({ changes: slice, result: null }));
      }
    });
    // The vector index insert alone, as the vector state does it (exact below the crossover, then HNSW).
    const items = changes.map((c, i) => ({ id: c.id, vector: vectors[i]! }));
    await timed('index', async () => {
      for (let i = 0; i < items.length; i += batch) {
        index.addMany(items.slice(i, i + batch));
        index = await promote(index);
      }
    });
    // add(), then add() with the vectors precomputed. What each leaves for a pause in the writing (merges into
    // HNSW, a snapshot) is done before the next stage, untimed, so that it slows no other stage.
    for (const [stage, target, texts] of [
      ['add', engram, addTexts],
      ['precomputed', engramQuick, precomputedTexts],
    ] as const) {
      await timed(stage, async () => {
        for (let i = from; i < to; i += batch)
          await target.add(messages(texts.slice(i, Math.min(to, i + batch))), { userId: 'u' });
      });
      await target.flush();
    }
    log(`  ${to} / ${count}`);
  }
  db.close();
  index.dispose();
  await engram.close();
  await engramQuick.close();
  await embedder.dispose(); // close() leaves an embedder it was given to its owner
  // The next batch size starts as this one did: no store of an earlier one in the origin, no worker of an earlier embedder.
  for (const name of names) await Dexie.delete(name);
  const perSecond = (stage: string): number => count / wall.get(stage)!;
  log(
    `  raw embedder ${perSecond('embedder').toFixed(0)}/s, write alone ${perSecond('write').toFixed(0)}/s, index alone ${perSecond('index').toFixed(0)}/s, add() ${perSecond('add').toFixed(0)}/s, add() precomputed ${perSecond('precomputed').toFixed(0)}/s`,
  );
  const slowest = Math.max(wall.get('embedder')!, wall.get('write')!, wall.get('index')!);
  const cores = (stage: string): number => busyCpu.get(stage)!.busy / busyCpu.get(stage)!.window;
  return {
    model,
    loadMs,
    firstEmbedMs,
    texts: count,
    batch,
    rounds: Math.ceil(count / share),
    rawPerSecond: perSecond('embedder'),
    writePerSecond: perSecond('write'),
    indexPerSecond: perSecond('index'),
    addPerSecond: perSecond('add'),
    precomputedPerSecond: perSecond('precomputed'),
    ratio: wall.get('embedder')! / wall.get('add')!,
    slowestStageRatio: slowest / wall.get('add')!,
    precomputedStageRatio: slowest / wall.get('precomputed')!,
    ...(busyCpu.size === 5
      ? {
          cpu: {
            cores: machineCores,
            embedder: cores('embedder'),
            write: cores('write'),
            index: cores('index'),
            add: cores('add'),
          },
        }
      : {}),
  };
}

async function main(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const count = Number(params.get('count') ?? '3000');
  const model = BENCH_MODELS[benchModelOf(params.get('model'))].id;
  const results: IngestResult[] = [];
  for (const batch of (params.get('batches') ?? '1,16,64').split(',').map(Number)) {
    log(`ingest: ${count} texts, batches of ${batch}, ${model}`);
    results.push(await run(batch === 1 ? Math.min(count, 500) : count, batch, model));
  }
  (window as unknown as { __benchResult: unknown }).__benchResult = { results };
}

main().catch((e: unknown) => {
  (window as unknown as { __benchResult: unknown }).__benchResult = {
    error: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e),
  };
});
