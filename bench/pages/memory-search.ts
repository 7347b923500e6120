/**
 * Browser side of bench/memory-search: search() end to end (embed the query
 * with the offline model in its worker, vector and keyword candidates, fusion,
 * the top rows read from IndexedDB) over N memories, in hybrid, keyword-only
 * and vector-only mode, unscoped and scoped to one user of ten, on two corpora:
 * varied sentences, and repetitive chat-like text over a small vocabulary (the
 * hard case for postings lists; its words are the offline model's, so that
 * messages embed apart). The store is filled through the real add() path in
 * batches of 1000. `kinds` picks the corpora (default both).
 */
import { DEFAULT_EMBEDDING_MODEL, Engram, TransformersEmbedder, type Embedder } from '../../lib/index.js';
import { stopwords as englishStopwords } from '@orama/stopwords/english';
import { conversationCorpus } from '../corpus.js';
import { generateSentences } from '../util/sentences.js';
import { percentile } from '../util/stats.js';
import type { MemorySearchResult, SearchTimes } from './results.js';

const log = (line: string): void => {
  console.log(line);
  document.getElementById('log')!.textContent += `${line}\n`;
};

const USERS = 10;
const MODES = ['hybrid', 'keyword', 'vector'] as const;

/**
 * The offline model's words, most frequent first (its tokenizer numbers them
 * so, after three special tokens), without the English stopwords keyword search
 * drops: the common words all reach the postings, as the made-up ones did.
 */
async function modelVocabulary(): Promise<string[]> {
  const tokenizer = (await (await fetch(`/models/${DEFAULT_EMBEDDING_MODEL}/tokenizer.json`)).json()) as { model: { vocab: Record<string, number> } };
  const dropped = new Set(englishStopwords);
  return Object.entries(tokenizer.model.vocab)
    .filter(([word]) => !word.startsWith('[') && !dropped.has(word))
    .sort((a, b) => a[1] - b[1])
    .map(([word]) => word);
}

/** The corpus's memory texts and its queries. */
async function corpusOf(kind: 'sentences' | 'chat', n: number, queries: number): Promise<{ texts: string[]; queries: string[] }> {
  if (kind === 'sentences') return { texts: generateSentences(n, 31), queries: generateSentences(queries, 32).map((s) => s.split(' ').slice(1, 6).join(' ')) };
  // Chat-like: the 3000 most frequent words of the model's vocabulary that are not stopwords, Zipf-distributed, and per-thread topic words
  // from its rarer part; every query word is in the store.
  const { messages, queries: make } = conversationCorpus(n, 33, await modelVocabulary());
  return { texts: messages.map((m) => m.content), queries: make(queries) };
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

function summary(times: number[]): SearchTimes {
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

async function runCorpus(embedder: Embedder, kind: 'sentences' | 'chat', n: number, queryCount: number): Promise<MemorySearchResult> {
  const name = `bench-msearch-${kind}-${n}-${Date.now()}`;
  const { texts, queries } = await corpusOf(kind, n, queryCount);
  const engram = await Engram.open({ name, embedder });
  const t0 = performance.now();
  const batch = 1000;
  for (let i = 0; i < texts.length; i += batch) {
    const userId = `u${(i / batch) % USERS}`;
    await engram.add(texts.slice(i, i + batch).map((content) => ({ role: 'user', content })), { userId, dedupe: 'off' });
    if ((i / batch) % 10 === 0) log(`  ${kind} ${n}: stored ${Math.min(n, i + batch)}`);
  }
  const fillSeconds = (performance.now() - t0) / 1000;
  log(`  ${kind} ${n}: filled in ${fillSeconds.toFixed(1)} s`);
  // Warm-up: loads the keyword index and brings both indexes up to date with the fill.
  const warm = await time(() => engram.search(queries[0]!, { limit: 10 }));
  log(`  ${kind} ${n}: first search (index catch-up) ${warm.toFixed(0)} ms`);
  for (const q of queries.slice(0, 5)) for (const mode of MODES) await engram.search(q, { mode, limit: 10 });
  // The snapshots the fill and the first search owe are written now, not during the timed searches.
  await engram.flush();
  const result: MemorySearchResult = { corpus: kind, memories: n, queries: queries.length, fillSeconds, firstSearchMs: warm, unscoped: {}, scoped: {} };
  for (const scoped of [false, true]) {
    for (const mode of MODES) {
      const times: number[] = [];
      for (const q of queries) times.push(await time(() => engram.search(q, { mode, limit: 10, ...(scoped ? { userId: 'u3' } : {}) })));
      const s = summary(times);
      (scoped ? result.scoped : result.unscoped)[mode] = s;
      log(`  ${kind} ${n} ${scoped ? 'scoped' : 'unscoped'} ${mode}: p50 ${s.p50.toFixed(2)} ms, p95 ${s.p95.toFixed(2)} ms`);
    }
  }
  await engram.close();
  await Promise.resolve(indexedDB.deleteDatabase(name));
  return result;
}

async function main(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const sizes = (params.get('sizes') ?? '100000').split(',').map(Number);
  const queryCount = Number(params.get('queries') ?? '100');
  const embedder = await TransformersEmbedder.create();
  const results: MemorySearchResult[] = [];
  for (const n of sizes) {
    for (const kind of (params.get('kinds') ?? 'sentences,chat').split(',') as ('sentences' | 'chat')[]) {
      log(`memory-search: ${kind}, ${n} memories`);
      results.push(await runCorpus(embedder, kind, n, queryCount));
    }
  }
  await embedder.dispose();
  (window as unknown as { __benchResult: unknown }).__benchResult = { results };
}

main().catch((e: unknown) => {
  (window as unknown as { __benchResult: unknown }).__benchResult = { error: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e) };
});
