/**
 * Browser side of bench/memory-search: search() end to end (embed the query
 * with the offline model in its worker, vector and keyword candidates, fusion,
 * the top rows read from IndexedDB), in hybrid, keyword-only and vector-only
 * mode, unscoped and scoped. Parts (`parts`, default all):
 * - `sweep`: one store of `sweepSize` varied sentences whose users hold 10, 100,
 *   1k, 4k, 10k and 50k memories (the rest in users of 1000): scoped search at
 *   every scope size, with recall@10 of vector mode against an exact scan of
 *   the scope;
 * - `users`: a store of 1,000 users of 100 memories each, every query scoped to
 *   another user;
 * - `chat`: repetitive chat-like text over a small vocabulary (the hard case
 *   for postings lists; its words are the offline model's, so that messages
 *   embed apart), scoped to one user of ten;
 * - `crossover`: the index alone (HnswIndex, 384-d clustered vectors): an exact
 *   scan of a scope (`searchAmong`) against the walk filtered to it
 *   (`searchWalk`), by scope size, which sets `scopeScanWins` in
 *   lib/vector/hnsw-index.ts.
 * Stores are filled through the real add() path.
 */
import {
  DEFAULT_EMBEDDING_MODEL,
  Engram,
  ExactIndex,
  HnswIndex,
  TransformersEmbedder,
  type Embedder,
  type EmbedOptions,
} from '../../lib/index.js';
import { stopwords as englishStopwords } from '@orama/stopwords/english';
import { conversationCorpus } from '../corpus.js';
import { mulberry32 } from '../util/rng.js';
import { generateSentences } from '../util/sentences.js';
import { percentile } from '../util/stats.js';
import { clusteredVectors } from '../util/vectors.js';
import type { MemorySearchResult, ScopeCrossoverRow, ScopeSweepRow, SearchTimes } from './results.js';

const log = (line: string): void => {
  console.log(line);
  document.getElementById('log')!.textContent += `${line}\n`;
};

const MODES = ['hybrid', 'keyword', 'vector'] as const;
type Mode = (typeof MODES)[number];
/** Scope sizes of the sweep, in a store of `sweepSize` memories. */
const SWEEP_SCOPES = [10, 100, 1000, 4000, 10_000, 50_000];
/** Results per search, and the candidates memory-search asks the index for (max(limit·4, 40)). */
const LIMIT = 10;
const POOL = 40;

/**
 * The offline model's words, most frequent first (its tokenizer numbers them
 * so, after three special tokens), without the English stopwords keyword search
 * drops: the common words all reach the postings, as the made-up ones did.
 */
async function modelVocabulary(): Promise<string[]> {
  const tokenizer = (await (await fetch(`/models/${DEFAULT_EMBEDDING_MODEL}/tokenizer.json`)).json()) as {
    model: { vocab: Record<string, number> };
  };
  const dropped = new Set(englishStopwords);
  return Object.entries(tokenizer.model.vocab)
    .filter(([word]) => !word.startsWith('[') && !dropped.has(word))
    .sort((a, b) => a[1] - b[1])
    .map(([word]) => word);
}

/**
 * The bench's embedder: the offline model, remembering every vector it made by
 * text, so that an exact scan of a scope can be computed beside engram (recall),
 * and the last single text it embedded (a query).
 */
class RecordingEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly vectors = new Map<string, Float32Array>();
  last: Float32Array | undefined;
  readonly #inner: Embedder;

  constructor(inner: Embedder) {
    this.#inner = inner;
    this.id = inner.id;
    this.dimensions = inner.dimensions;
  }

  async embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]> {
    const out = await this.#inner.embed(texts, options);
    texts.forEach((t, i) => this.vectors.set(t, out[i]!));
    if (texts.length === 1) this.last = out[0];
    return out;
  }

  dispose(): Promise<void> {
    return this.#inner.dispose();
  }
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

function summary(times: number[]): SearchTimes {
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

/** Fills a store through add(): `chunks` of (user, texts) in the order given. */
async function fill(
  engram: Engram,
  label: string,
  chunks: readonly { userId: string; texts: string[] }[],
): Promise<number> {
  const t0 = performance.now();
  let stored = 0;
  let logged = 0;
  for (const { userId, texts } of chunks) {
    await engram.add(
      texts.map((content) => ({ role: 'user' as const, content })),
      { userId, dedupe: 'off' },
    );
    stored += texts.length;
    if (stored - logged >= 10_000) {
      logged = stored;
      log(`  ${label}: stored ${stored}`);
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  log(`  ${label}: filled ${stored} in ${seconds.toFixed(1)} s`);
  return seconds;
}

/** Loads the keyword index, catches both indexes up and writes the snapshots the fill owes, before anything is timed. */
async function warm(engram: Engram, queries: readonly string[]): Promise<number> {
  const first = await time(() => engram.search(queries[0]!, { limit: LIMIT }));
  for (const q of queries.slice(0, 5)) for (const mode of MODES) await engram.search(q, { mode, limit: LIMIT });
  await engram.flush();
  return first;
}

/** Each query's vector as engram embeds it (its content words), caught on the way through the recording embedder. */
async function queryVectors(
  engram: Engram,
  embedder: RecordingEmbedder,
  queries: readonly string[],
): Promise<(Float32Array | undefined)[]> {
  const out: (Float32Array | undefined)[] = [];
  for (const q of queries) {
    embedder.last = undefined;
    await engram.search(q, { mode: 'vector', limit: 1 });
    // Undefined when engram's embedding cache answered (the text was embedded before): left out of recall.
    out.push(embedder.last);
  }
  return out;
}

/**
 * Recall@10 of one vector-mode answer against the exact scan of its scope: the
 * share of the exact top 10 that engram's hits match, counting a hit as found
 * when its similarity reaches the exact 10th (ties between equal texts are not
 * misses).
 */
function recallOf(similarities: readonly number[], exact: readonly { score: number }[]): number {
  const want = Math.min(LIMIT, exact.length);
  if (want === 0) return 1;
  const bar = exact[want - 1]!.score - 1e-5;
  return Math.min(want, similarities.filter((s) => s >= bar).length) / want;
}

/** Times every mode for each (query, scope) pair; recall of vector mode where the scope's exact index is given. */
async function timeScoped(
  engram: Engram,
  queries: readonly string[],
  scopeOf: (i: number) => { userId?: string },
  exact?: { vectors: readonly (Float32Array | undefined)[]; indexOf: (i: number) => ExactIndex },
): Promise<{ times: Partial<Record<Mode, SearchTimes>>; recallAt10?: number }> {
  const times: Partial<Record<Mode, SearchTimes>> = {};
  const recalls: number[] = [];
  for (const mode of MODES) {
    const samples: number[] = [];
    for (let i = 0; i < queries.length; i++) {
      let hits: { similarity?: number }[] = [];
      samples.push(
        await time(
          async () => (hits = (await engram.search(queries[i]!, { mode, limit: LIMIT, ...scopeOf(i) })).results),
        ),
      );
      const qv = exact?.vectors[i];
      if (mode === 'vector' && exact !== undefined && qv !== undefined)
        recalls.push(
          recallOf(
            hits.map((h) => h.similarity ?? -1),
            exact.indexOf(i).search(qv, LIMIT),
          ),
        );
    }
    times[mode] = summary(samples);
  }
  return recalls.length === 0 ? { times } : { times, recallAt10: recalls.reduce((a, b) => a + b, 0) / recalls.length };
}

/** An exact index of the vectors of `texts` (the ground truth of a scope). */
function exactOf(embedder: RecordingEmbedder, texts: readonly string[]): ExactIndex {
  const index = ExactIndex.create({ dimensions: embedder.dimensions, capacity: Math.max(1, texts.length) });
  index.addMany(texts.map((t, i) => ({ id: `t${i}`, vector: embedder.vectors.get(t)! })));
  return index;
}

async function sweepPart(embedder: RecordingEmbedder, n: number, queryCount: number): Promise<ScopeSweepRow[]> {
  const texts = generateSentences(n, 31);
  const queries = generateSentences(queryCount, 32).map((s) => s.split(' ').slice(1, 6).join(' '));
  const scopes = SWEEP_SCOPES.filter((s) => s <= n / 2);
  // Users of the sweep's sizes, the rest in users of 1000; their chunks (of at most 1000) interleaved, so every user's memories span the fill.
  const users: { userId: string; texts: string[] }[] = [];
  let at = 0;
  for (const size of scopes) {
    users.push({ userId: `s${size}`, texts: texts.slice(at, at + size) });
    at += size;
  }
  for (let f = 0; at < n; f++) {
    users.push({ userId: `f${f}`, texts: texts.slice(at, Math.min(n, at + 1000)) });
    at += 1000;
  }
  const queues = users.map((u) =>
    Array.from({ length: Math.ceil(u.texts.length / 1000) }, (_, i) => ({
      userId: u.userId,
      texts: u.texts.slice(i * 1000, (i + 1) * 1000),
    })),
  );
  const chunks: { userId: string; texts: string[] }[] = [];
  while (queues.some((q) => q.length > 0)) for (const q of queues) if (q.length > 0) chunks.push(q.shift()!);

  const name = `bench-msearch-sweep-${n}-${Date.now()}`;
  const engram = await Engram.open({ name, embedder });
  const fillSeconds = await fill(engram, `sweep ${n}`, chunks);
  const firstSearchMs = await warm(engram, queries);
  const vectors = await queryVectors(engram, embedder, queries);
  const everything = exactOf(embedder, texts);
  const unscoped = await timeScoped(engram, queries, () => ({}), { vectors, indexOf: () => everything });
  const rows: ScopeSweepRow[] = [];
  rows.push({ store: 'sweep', memories: n, scope: 'unscoped', scopeSize: n, ...unscoped, fillSeconds, firstSearchMs });
  everything.dispose();
  for (const size of scopes) {
    const user = users.find((u) => u.userId === `s${size}`)!;
    const exact = exactOf(embedder, user.texts);
    const measured = await timeScoped(engram, queries, () => ({ userId: user.userId }), {
      vectors,
      indexOf: () => exact,
    });
    exact.dispose();
    rows.push({ store: 'sweep', memories: n, scope: `one user of ${size}`, scopeSize: size, ...measured });
    log(
      `  sweep ${n}, scope ${size}: ${MODES.map((m) => `${m} p50 ${measured.times[m]!.p50.toFixed(2)} / p95 ${measured.times[m]!.p95.toFixed(2)} ms`).join(', ')}, recall@10 ${measured.recallAt10?.toFixed(3) ?? '–'}`,
    );
  }
  await engram.close();
  await Promise.resolve(indexedDB.deleteDatabase(name));
  return rows;
}

async function usersPart(
  embedder: RecordingEmbedder,
  userCount: number,
  perUser: number,
  queryCount: number,
): Promise<ScopeSweepRow[]> {
  const n = userCount * perUser;
  const texts = generateSentences(n, 34);
  const queries = generateSentences(queryCount, 35).map((s) => s.split(' ').slice(1, 6).join(' '));
  const chunks = Array.from({ length: userCount }, (_, u) => ({
    userId: `u${u}`,
    texts: texts.slice(u * perUser, (u + 1) * perUser),
  }));
  const name = `bench-msearch-users-${n}-${Date.now()}`;
  const engram = await Engram.open({ name, embedder });
  const fillSeconds = await fill(engram, `${userCount} users of ${perUser}`, chunks);
  const firstSearchMs = await warm(engram, queries);
  const vectors = await queryVectors(engram, embedder, queries);
  const unscoped = await timeScoped(engram, queries, () => ({}));
  // Query i searches user (i·7919 mod users): a different user each time.
  const userOf = (i: number): number => (i * 7919) % userCount;
  const exact = new Map<number, ExactIndex>();
  const indexOf = (i: number): ExactIndex => {
    const u = userOf(i);
    let index = exact.get(u);
    if (index === undefined) exact.set(u, (index = exactOf(embedder, chunks[u]!.texts)));
    return index;
  };
  const scoped = await timeScoped(engram, queries, (i) => ({ userId: `u${userOf(i)}` }), { vectors, indexOf });
  for (const index of exact.values()) index.dispose();
  await engram.close();
  await Promise.resolve(indexedDB.deleteDatabase(name));
  log(
    `  ${userCount} users: ${MODES.map((m) => `${m} p50 ${scoped.times[m]!.p50.toFixed(2)} / p95 ${scoped.times[m]!.p95.toFixed(2)} ms`).join(', ')}`,
  );
  return [
    { store: 'users', memories: n, scope: 'unscoped', scopeSize: n, ...unscoped, fillSeconds, firstSearchMs },
    { store: 'users', memories: n, scope: `one user of ${userCount}`, scopeSize: perUser, ...scoped },
  ];
}

/** The chat corpus, scoped to one user of ten (the goals set before the sweep). */
async function chatPart(embedder: Embedder, n: number, queryCount: number): Promise<MemorySearchResult> {
  const { messages, queries: make } = conversationCorpus(n, 33, await modelVocabulary());
  const texts = messages.map((m) => m.content);
  const queries = make(queryCount);
  const users = 10;
  const chunks = Array.from({ length: Math.ceil(n / 1000) }, (_, i) => ({
    userId: `u${i % users}`,
    texts: texts.slice(i * 1000, (i + 1) * 1000),
  }));
  const name = `bench-msearch-chat-${n}-${Date.now()}`;
  const engram = await Engram.open({ name, embedder });
  const fillSeconds = await fill(engram, `chat ${n}`, chunks);
  const firstSearchMs = await warm(engram, queries);
  const unscoped = await timeScoped(engram, queries, () => ({}));
  const scoped = await timeScoped(engram, queries, () => ({ userId: 'u3' }));
  await engram.close();
  await Promise.resolve(indexedDB.deleteDatabase(name));
  for (const [scope, t] of [
    ['unscoped', unscoped.times],
    ['scoped', scoped.times],
  ] as const)
    log(`  chat ${n} ${scope}: ${MODES.map((m) => `${m} p50 ${t[m]!.p50.toFixed(2)} ms`).join(', ')}`);
  return {
    corpus: 'chat',
    memories: n,
    queries: queries.length,
    fillSeconds,
    firstSearchMs,
    unscoped: unscoped.times,
    scoped: scoped.times,
  };
}

/**
 * The index alone: `searchAmong` (an exact scan of the scope, one call into
 * WASM) against `searchWalk` (hnswlib's walk filtered to the scope by a bitmap
 * in WASM memory), by scope size, on an HnswIndex of n 384-d clustered vectors; scopes are random
 * subsets. Recall@10 of the walk against the scan.
 */
async function crossoverPart(n: number, dimensions: number, queryCount: number): Promise<ScopeCrossoverRow[]> {
  const data = clusteredVectors({ count: n, dimensions, seed: 41 });
  const queries = clusteredVectors({ count: queryCount, dimensions, seed: 42 });
  const index = await HnswIndex.create({ dimensions, capacity: n });
  const t0 = performance.now();
  for (let i = 0; i < n; i += 5000)
    index.addMany(data.slice(i, i + 5000).map((vector, j) => ({ id: `m${i + j}`, vector })));
  log(`  crossover ${n}×${dimensions}: HNSW built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const ids = Array.from({ length: n }, (_, i) => `m${i}`);
  const rng = mulberry32(43);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  const rows: ScopeCrossoverRow[] = [];
  for (const share of [0.001, 0.005, 0.01, 0.02, 0.04, 0.08, 0.15, 0.25, 0.35, 0.5]) {
    const size = Math.round(n * share);
    const scope = new Set(ids.slice(0, size));
    const scan: number[] = [];
    const walk: number[] = [];
    let found = 0;
    let wanted = 0;
    // Alternating, so that the machine's swings weigh on both alike.
    for (const q of queries) {
      let t = performance.now();
      const exact = index.searchAmong(q, POOL, scope);
      scan.push(performance.now() - t);
      t = performance.now();
      const approx = index.searchWalk(q, POOL, scope);
      walk.push(performance.now() - t);
      const truth = new Set(exact.slice(0, LIMIT).map((h) => h.id));
      wanted += truth.size;
      found += approx.slice(0, LIMIT).filter((h) => truth.has(h.id)).length;
    }
    const row: ScopeCrossoverRow = {
      memories: n,
      dimensions,
      scopeSize: size,
      share,
      scan: summary(scan),
      walk: summary(walk),
      walkRecallAt10: wanted === 0 ? 1 : found / wanted,
    };
    rows.push(row);
    log(
      `  crossover ${n}×${dimensions}, scope ${size}: scan p50 ${row.scan.p50.toFixed(2)} ms, walk p50 ${row.walk.p50.toFixed(2)} ms, walk recall@10 ${row.walkRecallAt10.toFixed(3)}`,
    );
  }
  index.dispose();
  return rows;
}

async function main(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const parts = new Set((params.get('parts') ?? 'crossover,sweep,users,chat').split(','));
  const queryCount = Number(params.get('queries') ?? '100');
  const sweepSize = Number(params.get('sweepSize') ?? '100000');
  const userCount = Number(params.get('users') ?? '1000');
  const chatSize = Number(params.get('chatSize') ?? '100000');
  const crossoverSizes = (params.get('crossoverSizes') ?? '100000').split(',').map(Number);
  const out: { results: MemorySearchResult[]; sweep: ScopeSweepRow[]; crossover: ScopeCrossoverRow[] } = {
    results: [],
    sweep: [],
    crossover: [],
  };
  if (parts.has('crossover'))
    for (const n of crossoverSizes) out.crossover.push(...(await crossoverPart(n, 384, queryCount)));
  const embedder = new RecordingEmbedder(await TransformersEmbedder.create());
  if (parts.has('sweep')) {
    log(`memory-search: scope sweep in ${sweepSize} memories`);
    out.sweep.push(...(await sweepPart(embedder, sweepSize, queryCount)));
    embedder.vectors.clear();
  }
  if (parts.has('users')) {
    log(`memory-search: ${userCount} users of 100`);
    out.sweep.push(...(await usersPart(embedder, userCount, 100, queryCount)));
    embedder.vectors.clear();
  }
  if (parts.has('chat')) {
    log(`memory-search: chat, ${chatSize} memories`);
    out.results.push(await chatPart(embedder, chatSize, queryCount));
  }
  await embedder.dispose();
  (window as unknown as { __benchResult: unknown }).__benchResult = out;
}

main().catch((e: unknown) => {
  (window as unknown as { __benchResult: unknown }).__benchResult = {
    error: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e),
  };
});
