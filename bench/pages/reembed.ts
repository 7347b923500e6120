/**
 * Browser side of bench/reembed: a store of n memories (filled through add() with a hash
 * embedder, at IndexedDB speed) re-embedded on the open store by engram.reembed() to a new
 * model, while the same engram searches (hybrid, limit 10) back to back. Times the run, its
 * staging (texts/s), the switch (last staged batch to the new index's first rebuild report:
 * the log check and the flip of the recorded model), the new index's rebuild with the rows' rewrite
 * after it (first rebuild report to the return), and search
 * latency before, during staging and over the switch and rebuild.
 */
import { Engram, HashEmbedder, MINILM_EMBEDDING_MODEL, TransformersEmbedder, type Embedder } from '../../lib/index.js';
import { generateSentences } from '../util/sentences.js';
import { percentile } from '../util/stats.js';
import type { ReembedBenchResult, ReembedWindow } from './results.js';

const log = (line: string): void => {
  console.log(line);
  document.getElementById('log')!.textContent += `${line}\n`;
};

const BATCH = 64;

function windowOf(samples: readonly { start: number; ms: number }[], from: number, to: number): ReembedWindow {
  const ms = samples.filter((s) => s.start >= from && s.start < to).map((s) => s.ms);
  if (ms.length === 0) return { searches: 0, p50Ms: 0, p95Ms: 0, maxMs: 0 };
  return { searches: ms.length, p50Ms: percentile(ms, 50), p95Ms: percentile(ms, 95), maxMs: Math.max(...ms) };
}

async function newModel(kind: string): Promise<{ model: Embedder; loadMs: number }> {
  const t0 = performance.now();
  const model =
    kind === 'minilm'
      ? await TransformersEmbedder.create({ model: MINILM_EMBEDDING_MODEL })
      : new HashEmbedder({ dimensions: 384 });
  await model.embed(['the first text after the model loaded']);
  return { model, loadMs: performance.now() - t0 };
}

async function run(n: number, kind: string): Promise<ReembedBenchResult> {
  const texts = generateSentences(n, 22).map((s, i) => `${s} (${i})`);
  const queries = generateSentences(400, 23).map((s) => s.split(' ').slice(1, 6).join(' '));
  const name = `bench-reembed-${kind}-${n}-${Date.now()}`;
  const engram = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 256 }) });
  const t0 = performance.now();
  for (let from = 0, round = 0; from < n; from += BATCH, round++) {
    const batch = texts.slice(from, Math.min(n, from + BATCH)).map((content) => ({ role: 'user' as const, content }));
    await engram.add(batch, { userId: `u${round % 50}`, dedupe: 'off' });
    if (round % 300 === 0) log(`  ${n}: added ${from + batch.length}`);
  }
  await engram.flush();
  log(`  ${n}: filled in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const { model, loadMs } = await newModel(kind);

  const samples: { start: number; ms: number }[] = [];
  const searches = { running: true };
  let q = 0;
  const searching = (async () => {
    while (searches.running) {
      const start = performance.now();
      await engram.search(queries[q++ % queries.length]!, { limit: 10 });
      samples.push({ start, ms: performance.now() - start });
    }
  })();
  // Idle searches first: the baseline.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const runStart = performance.now();
  let firstStaged = Number.NaN;
  let lastStaged = Number.NaN;
  let rebuildStart = Number.NaN;
  const report = await engram.reembed(model, {
    onProgress: (p) => {
      const now = performance.now();
      if (p.phase === 'reembed') {
        if (Number.isNaN(firstStaged)) firstStaged = now;
        lastStaged = now;
      } else if (p.phase === 'rebuild' && Number.isNaN(rebuildStart)) rebuildStart = now;
    },
  });
  const runEnd = performance.now();
  searches.running = false;
  await searching;
  const longestOverSwitch = Math.max(
    0,
    ...samples.filter((s) => s.start < rebuildStart && s.start + s.ms > lastStaged).map((s) => s.ms),
  );
  await engram.close();
  if (kind === 'minilm') await model.dispose();
  const stagingMs = lastStaged - firstStaged;
  log(`  ${n} ${model.id}: ${report.embedded} embedded, run ${(runEnd - runStart).toFixed(0)} ms`);
  return {
    memories: n,
    model: model.id,
    modelLoadMs: loadMs,
    totalMs: runEnd - runStart,
    stagingMs,
    textsPerSecond: (report.embedded / stagingMs) * 1000,
    switchMs: rebuildStart - lastStaged,
    rebuildMs: runEnd - rebuildStart,
    before: windowOf(samples, 0, runStart),
    staging: windowOf(samples, runStart, lastStaged),
    switching: windowOf(samples, lastStaged, runEnd),
    longestOverSwitchMs: longestOverSwitch,
  };
}

const params = new URLSearchParams(location.search);
const configs = (params.get('configs') ?? '10000:hash,2000:minilm,100000:hash').split(',').map((c) => {
  const [size, kind] = c.split(':');
  return { n: Number(size), kind: kind ?? 'hash' };
});
try {
  const results: ReembedBenchResult[] = [];
  for (const { n, kind } of configs) results.push(await run(n, kind));
  (window as unknown as { __benchResult: unknown }).__benchResult = { results };
} catch (e) {
  log(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  (window as unknown as { __benchResult: unknown }).__benchResult = { error: String(e) };
}
