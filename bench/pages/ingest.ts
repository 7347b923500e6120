/**
 * Browser side of bench/ingest: add() throughput (embedding in the worker,
 * duplicate check, one transaction per batch with vectors, history, change log
 * and keyword terms, index update) against the raw embedder's throughput on the same
 * texts, in one run.
 */
import { Engram, TransformersEmbedder } from '../../lib/index.js';
import { generateSentences } from '../util/sentences.js';
import type { IngestResult } from './results.js';

const log = (line: string): void => {
  console.log(line);
  document.getElementById('log')!.textContent += `${line}\n`;
};


async function run(count: number, batch: number): Promise<IngestResult> {
  // Distinct texts for each side, so the embedder's cache never helps either.
  const all = [...new Set(generateSentences(count * 3, 11))];
  const rawTexts = all.slice(0, count);
  const addTexts = all.slice(count, 2 * count);
  const embedder = await TransformersEmbedder.create();
  await embedder.embed(all.slice(2 * count, 2 * count + batch)); // warm-up
  let t0 = performance.now();
  for (let i = 0; i < rawTexts.length; i += batch) await embedder.embed(rawTexts.slice(i, i + batch));
  const rawSeconds = (performance.now() - t0) / 1000;
  log(`  raw embedder: ${(count / rawSeconds).toFixed(0)} texts/s`);

  const engram = await Engram.open({ name: `bench-ingest-${Date.now()}`, embedder });
  await engram.add(all.slice(2 * count + batch, 2 * count + 2 * batch).map((content) => ({ role: 'user', content })), { userId: 'warm' });
  t0 = performance.now();
  for (let i = 0; i < addTexts.length; i += batch) {
    await engram.add(addTexts.slice(i, i + batch).map((content) => ({ role: 'user', content })), { userId: 'u' });
    if ((i / batch) % 10 === 0) log(`  add: ${i + batch} / ${count}`);
  }
  const addSeconds = (performance.now() - t0) / 1000;
  log(`  add(): ${(count / addSeconds).toFixed(0)} texts/s`);
  await engram.close();
  return { texts: count, batch, rawPerSecond: count / rawSeconds, addPerSecond: count / addSeconds, ratio: rawSeconds / addSeconds };
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
