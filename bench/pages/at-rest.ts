/**
 * Browser side of bench/at-rest: a plain and an encrypted store (a WebCrypto key, as the desktop
 * keychain hands it) fed the same memories side by side in one page, each step alternating which
 * store goes first: add() throughput at batch 64, hybrid search latency, and the time from open()
 * to the first answered search from the index snapshot.
 */
import { Dexie } from 'dexie';
import { Engram, HashEmbedder, type Embedder } from '../../lib/index.js';
import { generateSentences } from '../util/sentences.js';
import { percentile } from '../util/stats.js';
import { clusteredVectors } from '../util/vectors.js';
import type { AtRestResult, AtRestSide } from './results.js';

const log = (line: string): void => {
  console.log(line);
  document.getElementById('log')!.textContent += `${line}\n`;
};

const DIMS = 384;
const BATCH = 64;

/**
 * Looks vectors up by text: the stores fill at IndexedDB speed, not model speed. A query
 * (search embeds its content words, not the stored text) gets a hashed vector.
 */
class TableEmbedder implements Embedder {
  readonly id = 'bench-table-384';
  readonly dimensions = DIMS;
  readonly #hashed = new HashEmbedder({ dimensions: DIMS });
  constructor(private readonly table: Map<string, Float32Array>) {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const misses = texts.filter((t) => !this.table.has(t));
    const hashed = misses.length === 0 ? [] : await this.#hashed.embed(misses);
    let next = 0;
    return texts.map((t) => this.table.get(t) ?? hashed[next++]!);
  }
  async dispose(): Promise<void> {}
}

function normalised(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  const s = 1 / Math.sqrt(n);
  return v.map((x) => x * s);
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * How many times a store of `n` is filled for the add() figure: a 1k fill is 16 transactions, a 100k one 1,563.
 * With 9 fills at 1k, one run's ratio ranged 0.77-0.92 around a median of 0.84 (15 runs); with 21,
 * 0.82-0.85 (REPORT.md, at-rest, session 44).
 */
const fillsAt = (n: number): number => (n <= 3000 ? 21 : n <= 10_000 ? 3 : 1);

async function run(n: number, queries: number, opens: number): Promise<AtRestResult> {
  const texts = generateSentences(n + queries, 26).map((s, i) => `${s} (${i})`);
  const vectors = clusteredVectors({ count: n + queries, dimensions: DIMS, seed: 26 }).map(normalised);
  const embedder = new TableEmbedder(new Map(texts.map((t, i) => [t, vectors[i]!])));
  const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
  const stamp = Date.now();
  const sides = [
    { label: 'plain', name: `bench-at-rest-plain-${n}-${stamp}`, options: {} },
    { label: 'encrypted', name: `bench-at-rest-sealed-${n}-${stamp}`, options: { encryption: { key } } },
  ] as const;
  const open = (i: number, name: string = sides[i]!.name): Promise<Engram> =>
    Engram.open({ name, embedder, ...sides[i]!.options });
  /** Fills both stores side by side, batch by batch, each batch alternating which goes first: each store's ms. */
  const fill = async (stores: readonly Engram[]): Promise<number[]> => {
    const ms = [0, 0];
    for (let from = 0, round = 0; from < n; from += BATCH, round++) {
      const batch = texts.slice(from, Math.min(n, from + BATCH)).map((content) => ({ role: 'user' as const, content }));
      for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const t0 = performance.now();
        await stores[i]!.add(batch, { userId: `u${round % 50}`, dedupe: 'off' });
        ms[i]! += performance.now() - t0;
      }
      if (round % 200 === 0) log(`  ${n}: added ${from + BATCH}`);
    }
    return ms;
  };
  // Small fills are a few dozen transactions, where one slow commit moves the ratio: they are made
  // again on fresh store pairs and the add() figure is each store's median fill.
  const fillsMs: number[][] = [[], []];
  for (let r = 1; r < fillsAt(n); r++) {
    const names = sides.map((side): string => `${side.name}-fill${r}`);
    const pair = [await open(0, names[0]), await open(1, names[1])];
    const ms = await fill(pair);
    for (const i of [0, 1]) fillsMs[i]!.push(ms[i]!);
    for (const e of pair) await e.close();
    for (const name of names) await Dexie.delete(name);
  }
  const stores = [await open(0), await open(1)];
  const last = await fill(stores);
  for (const i of [0, 1]) fillsMs[i]!.push(last[i]!);
  const addMs = fillsMs.map(median);
  for (const s of stores) await s.flush();
  log(
    `  ${n}: filled ${fillsMs[0]!.length} time(s); add ${addMs.map((ms) => ((n / ms) * 1000).toFixed(0)).join(' / ')} memories/s`,
  );
  const searchMs: number[][] = [[], []];
  for (let q = 0; q < queries; q++) {
    const query = texts[n + q]!;
    for (const i of q % 2 === 0 ? [0, 1] : [1, 0]) {
      const t0 = performance.now();
      const { results } = await stores[i]!.search(query, { limit: 10 });
      searchMs[i]!.push(performance.now() - t0);
      if (results.length === 0) throw new Error('no results');
    }
  }
  for (const s of stores) await s.close();
  const openMs: number[][] = [[], []];
  const openOnlyMs: number[][] = [[], []];
  for (let r = 0; r < opens; r++)
    for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
      const t0 = performance.now();
      const e = await open(i);
      openOnlyMs[i]!.push(performance.now() - t0);
      await e.search(texts[n]!, { mode: 'vector', limit: 10 });
      openMs[i]!.push(performance.now() - t0);
      await e.close();
    }
  const side = (i: number): AtRestSide => ({
    addPerSecond: (n / addMs[i]!) * 1000,
    searchP50Ms: percentile(searchMs[i]!, 50),
    searchP95Ms: percentile(searchMs[i]!, 95),
    openMs: median(openMs[i]!),
    openOnlyMs: median(openOnlyMs[i]!),
    openRangeMs: [Math.min(...openMs[i]!), Math.max(...openMs[i]!)],
  });
  return { memories: n, queries, fills: fillsMs[0]!.length, plain: side(0), encrypted: side(1) };
}

const params = new URLSearchParams(location.search);
const sizes = (params.get('sizes') ?? '10000').split(',').map(Number);
const queries = Number(params.get('queries') ?? '1000');
const opens = Number(params.get('opens') ?? '9');
try {
  const results: AtRestResult[] = [];
  for (const n of sizes) results.push(await run(n, queries, opens));
  (window as unknown as { __benchResult: unknown }).__benchResult = { results };
} catch (e) {
  log(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  (window as unknown as { __benchResult: unknown }).__benchResult = { error: String(e) };
}
