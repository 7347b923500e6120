/**
 * Memory search latency at 10k memories in Node (fake-indexeddb, the offline
 * model), per mode, scoped to one user and unscoped: the speed side of the
 * retrieval work. It uses only the public API, so the same file runs against
 * an older checkout of engram to compare (`--lib <path to lib/index.ts>`):
 *
 *   npx tsx bench/eval/search-speed.ts                      # this checkout
 *   npx tsx bench/eval/search-speed.ts --lib /tmp/old/lib/index.ts --name search-speed-before
 */
import 'fake-indexeddb/auto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { option } from '../util/args.js';
import { printTable, writeResult } from '../util/report.js';
import { mulberry32, pick } from '../util/rng.js';
import { generateSentences } from '../util/sentences.js';
import { percentile } from '../util/stats.js';
import type * as Engram from '../../lib/index.js';

const size = Number(option('size') ?? 10_000);
const queries = Number(option('queries') ?? 200);
const lib = option('lib') ?? resolve(import.meta.dirname, '..', '..', 'lib', 'index.ts');
const name = option('name') ?? 'search-speed';
const { Engram: EngramClass } = (await import(pathToFileURL(lib).href)) as typeof Engram;

const USERS = 20;
const rng = mulberry32(2027);
const texts = generateSentences(size, 17);
const engram = await EngramClass.open({ name: `speed-${process.pid}-${Date.now()}` });
for (let i = 0; i < size; i += 500) {
  const batch = texts.slice(i, i + 500);
  // One user per batch of 500, so a scoped search sees about size / USERS memories.
  await engram.add(
    batch.map((content) => ({ role: 'user', content })),
    { userId: `u${(i / 500) % USERS}` },
  );
}
const asked = generateSentences(queries, 99).map((s) =>
  rng() < 0.5 ? `What did I say about ${s.split(' ').slice(-3).join(' ')}?` : s,
);
const rows = [];
for (const mode of ['hybrid', 'vector', 'keyword'] as const) {
  for (const scoped of [false, true]) {
    // Warm-up: the model, the index and the JIT.
    for (const q of asked.slice(0, 20))
      await engram.search(q, { mode, limit: 10, ...(scoped ? { userId: 'u3' } : {}) });
    const times: number[] = [];
    for (const q of asked) {
      const userId = pick(rng, ['u1', 'u2', 'u3', 'u4']);
      const t0 = performance.now();
      await engram.search(q, { mode, limit: 10, ...(scoped ? { userId } : {}) });
      times.push(performance.now() - t0);
    }
    rows.push({
      mode,
      scoped: scoped ? 'one user' : 'all',
      'p50 ms': Number(percentile(times, 50).toFixed(2)),
      'p95 ms': Number(percentile(times, 95).toFixed(2)),
    });
  }
}
await engram.close();
printTable(`memory search at ${size} memories (${lib})`, rows);
writeResult(name, { options: { size, queries, lib }, results: rows });
