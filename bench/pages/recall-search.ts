/**
 * Browser side of bench/recall-search: fills a real IndexedDB store with a
 * synthetic conversation log, then times recall text search (keyword terms index)
 * against a full scan of the same messages that ranks with the same BM25.
 */
import { Engram } from '../../lib/index.js';
import { EngramDb } from '../../lib/store/schema.js';
import { analyzeDocument as termFrequencies, analyzeQuery as queryTerms } from '../../lib/search/analyze.js';
import { conversationCorpus } from '../corpus.js';
import { percentile } from '../util/stats.js';
import type { RecallSearchResult } from './results.js';

const log = (line: string): void => {
  console.log(line);
  document.getElementById('log')!.textContent += `${line}\n`;
};

/** Full scan: read every message, tokenize, BM25 with the same formula, top 10. */
async function scanSearch(db: EngramDb, query: string): Promise<string[]> {
  const rows = await db.messages.toArray();
  const terms = queryTerms(query);
  const docs = rows.map((r) => ({ id: r.id, ...termFrequencies(r.content) }));
  const avg = docs.reduce((s, d) => s + d.length, 0) / Math.max(docs.length, 1);
  const scores = new Map<string, number>();
  for (const t of terms) {
    const having = docs.filter((d) => d.terms.has(t));
    const df = having.length;
    if (df === 0) continue;
    const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
    for (const d of having) {
      const f = d.terms.get(t)!;
      scores.set(d.id, (scores.get(d.id) ?? 0) + (idf * (f * 2.2)) / (f + 1.2 * (0.25 + (0.75 * d.length) / avg)));
    }
  }
  return [...scores]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, 10)
    .map(([id]) => id);
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const value = await fn();
  return [performance.now() - t0, value];
}

async function runSize(n: number, queryCount: number, scanCount: number): Promise<RecallSearchResult> {
  const name = `bench-recall-${n}-${Date.now()}`;
  const engram = await Engram.open({ name });
  const { messages, queries } = conversationCorpus(n);
  const t0 = performance.now();
  const batch = 1000;
  for (let i = 0; i < messages.length; i += batch) {
    const slice = messages.slice(i, i + batch);
    const byThread = new Map<string, { role: 'user'; content: string }[]>();
    for (const m of slice) {
      const list = byThread.get(m.threadId) ?? [];
      list.push({ role: 'user', content: m.content });
      byThread.set(m.threadId, list);
    }
    for (const [threadId, list] of byThread)
      await engram.conversation(threadId, { userId: 'owner', allowDuplicates: true }).add(list);
    if ((i / batch) % 10 === 0) log(`  ${n}: stored ${i + slice.length} messages`);
  }
  const buildSeconds = (performance.now() - t0) / 1000;
  const qs = queries(queryCount);
  for (const q of qs.slice(0, 5)) await engram.recall.textSearch(q); // warm-up: loads the keyword index
  // The snapshot the first load owes is written now, not during the timed searches.
  await engram.flush();
  const indexTimes: number[] = [];
  const indexTop = new Map<string, string[]>();
  for (const q of qs) {
    const [ms, page] = await timed(() => engram.recall.textSearch(q, { count: 10 }));
    indexTimes.push(ms);
    indexTop.set(
      q,
      page.results.map((r) => r.id),
    );
  }
  log(`  ${n}: index p50 ${percentile(indexTimes, 50).toFixed(2)} ms`);
  // The same queries scoped to the user who owns every message: the filter passes everything.
  const scopedTimes: number[] = [];
  for (const q of qs.slice(0, 50)) {
    const [ms] = await timed(() => engram.recall.textSearch(q, { count: 10, userId: 'owner' }));
    scopedTimes.push(ms);
  }
  const db = new EngramDb(name);
  await db.open();
  const scanTimes: number[] = [];
  let agree = 0;
  for (const q of qs.slice(0, scanCount)) {
    const [ms, top] = await timed(() => scanSearch(db, q));
    scanTimes.push(ms);
    const mine = indexTop.get(q) ?? [];
    agree += top.filter((id) => mine.includes(id)).length / Math.max(top.length, 1);
  }
  log(`  ${n}: scan p50 ${percentile(scanTimes, 50).toFixed(2)} ms`);
  db.close();
  await engram.close();
  await Promise.resolve(indexedDB.deleteDatabase(name));
  const indexP50 = percentile(indexTimes, 50);
  const scanP50 = percentile(scanTimes, 50);
  return {
    messages: n,
    queries: qs.length,
    indexP50,
    indexP95: percentile(indexTimes, 95),
    scanP50,
    scanP95: percentile(scanTimes, 95),
    speedup: scanP50 / indexP50,
    agreement: agree / Math.max(scanTimes.length, 1),
    buildSeconds,
    scopedP50: percentile(scopedTimes, 50),
    scopedP95: percentile(scopedTimes, 95),
  };
}

async function main(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const sizes = (params.get('sizes') ?? '10000,100000').split(',').map(Number);
  const results: RecallSearchResult[] = [];
  for (const n of sizes) {
    log(`recall-search: ${n} messages`);
    results.push(await runSize(n, 200, n >= 100_000 ? 15 : 30));
  }
  (window as unknown as { __benchResult: unknown }).__benchResult = { results };
}

main().catch((e: unknown) => {
  (window as unknown as { __benchResult: unknown }).__benchResult = {
    error: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e),
  };
});
