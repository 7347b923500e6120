/**
 * Browser side of bench/model-search: search() end to end with a sentence
 * model (all-MiniLM-L6-v2 or e5-small-v2, int8) embedding every query in its worker, over one
 * store of varied sentences filled through add() in batches of 1000, ten users,
 * in hybrid, keyword-only and vector-only mode, unscoped and scoped to one user.
 * The store's vectors are not the model's own: each is a mix of two of the
 * model's real vectors of 512 sentences plus a little noise, picked by the
 * text's hash (the model would take tens of minutes to embed 100k texts here);
 * every timed query goes to the model, each (scope, mode) with queries of its
 * own, so no query vector comes from the embedding cache.
 */
import { Engram, TransformersEmbedder, retrievalProfile, textToEmbed, type Embedder } from '../../lib/index.js';
import { BENCH_MODELS, benchModelOf } from '../util/bench-model.js';
import { generateSentences } from '../util/sentences.js';
import { percentile } from '../util/stats.js';
import type { ModelSearchResult, SearchTimes } from './results.js';

const log = (line: string): void => {
  console.log(line);
  document.getElementById('log')!.textContent += `${line}\n`;
};

const USERS = 10;
const MODES = ['hybrid', 'keyword', 'vector'] as const;
const BASE_SENTENCES = 512;

/** A 32-bit FNV-1a hash of a text: picks its base vectors and seeds its noise. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * The store's embedder: until `searching()`, each text gets a mix of two of
 * the model's vectors of `base` sentences plus noise; afterwards every text
 * (the queries) goes to the model itself.
 */
async function fillThenModel(model: Embedder, base: readonly string[]): Promise<Embedder & { searching(): void }> {
  // Marked as engram marks a memory (e5's "passage: "), so the store looks like one the model filled.
  const basis = await model.embed(base.map((t) => textToEmbed(retrievalProfile(model.id), 'passage', t)));
  const dims = model.dimensions;
  let filling = true;
  return {
    id: model.id,
    dimensions: dims,
    embed: async (texts, options) => {
      if (!filling) return model.embed(texts, options);
      await Promise.resolve();
      return texts.map((text) => {
        let h = hashOf(text);
        const a = basis[h % basis.length]!;
        const b = basis[(h >>> 8) % basis.length]!;
        const v = new Float32Array(dims);
        let norm = 0;
        for (let d = 0; d < dims; d++) {
          h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0;
          v[d] = 0.8 * a[d]! + 0.5 * b[d]! + 0.02 * ((h / 2 ** 32) * 2 - 1);
          norm += v[d]! ** 2;
        }
        const scale = 1 / Math.sqrt(norm);
        for (let d = 0; d < dims; d++) v[d] = v[d]! * scale;
        return v;
      });
    },
    dispose: () => Promise.resolve(),
    searching: () => {
      filling = false;
    },
  };
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

function summary(times: number[]): SearchTimes {
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

async function main(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const n = Number(params.get('size') ?? '100000');
  const queryCount = Number(params.get('queries') ?? '100');
  const modelId = BENCH_MODELS[benchModelOf(params.get('model') ?? 'minilm')].id;
  const loadStart = performance.now();
  const model = await TransformersEmbedder.create({ model: modelId });
  const loadMs = performance.now() - loadStart;
  const firstStart = performance.now();
  await model.embed(['the first query after the model loaded']);
  const firstEmbedMs = performance.now() - firstStart;
  log(`model-search: ${modelId} create() ${loadMs.toFixed(0)} ms, first embed ${firstEmbedMs.toFixed(0)} ms`);

  const cells = 2 * MODES.length;
  const texts = generateSentences(n, 31);
  const queries = [
    ...new Set(generateSentences(queryCount * (cells + 1), 32).map((s) => s.split(' ').slice(1, 6).join(' '))),
  ];
  const embedder = await fillThenModel(model, generateSentences(BASE_SENTENCES, 34));
  const name = `bench-model-search-${n}-${Date.now()}`;
  const engram = await Engram.open({ name, embedder });
  const t0 = performance.now();
  const batch = 1000;
  for (let i = 0; i < texts.length; i += batch) {
    await engram.add(
      texts.slice(i, i + batch).map((content) => ({ role: 'user', content })),
      { userId: `u${(i / batch) % USERS}`, dedupe: 'off' },
    );
    if ((i / batch) % 10 === 0) log(`  stored ${Math.min(n, i + batch)}`);
  }
  const fillSeconds = (performance.now() - t0) / 1000;
  log(`  filled ${n} in ${fillSeconds.toFixed(1)} s`);
  embedder.searching();
  const firstSearchMs = await time(() => engram.search(queries[0]!, { limit: 10 }));
  for (const q of queries.slice(1, 6)) for (const mode of MODES) await engram.search(q, { mode, limit: 10 });
  await engram.flush();
  const per = Math.floor((queries.length - 6) / cells);
  const result: ModelSearchResult = {
    model: modelId,
    memories: n,
    queries: per,
    fillSeconds,
    firstSearchMs,
    loadMs,
    firstEmbedMs,
    unscoped: {},
    scoped: {},
  };
  let cell = 0;
  for (const scoped of [false, true]) {
    for (const mode of MODES) {
      const mine = queries.slice(6 + cell * per, 6 + (cell + 1) * per);
      cell++;
      const times: number[] = [];
      for (const q of mine)
        times.push(await time(() => engram.search(q, { mode, limit: 10, ...(scoped ? { userId: 'u3' } : {}) })));
      const s = summary(times);
      (scoped ? result.scoped : result.unscoped)[mode] = s;
      log(`  ${scoped ? 'scoped' : 'unscoped'} ${mode}: p50 ${s.p50.toFixed(2)} ms, p95 ${s.p95.toFixed(2)} ms`);
    }
  }
  await engram.close();
  await model.dispose();
  await Promise.resolve(indexedDB.deleteDatabase(name));
  (window as unknown as { __benchResult: unknown }).__benchResult = { results: [result] };
}

main().catch((e: unknown) => {
  (window as unknown as { __benchResult: unknown }).__benchResult = {
    error: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e),
  };
});
