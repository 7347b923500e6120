/**
 * bench/peers: engram side by side with the libraries people would pick
 * instead, on the same corpus and queries (seeded 384-d unit vectors and short
 * texts, precomputed: no embedding is timed), in the same Chromium: Orama,
 * PGlite with pgvector, the bare hnswlib-wasm index, EntityDB. For each
 * system, each size and each round: a fresh browser profile (its own
 * directory); one browser process inserts every document to a durable state,
 * then a new browser process on that profile opens the persisted state and
 * answers (open to first answer, first hybrid query, vector and hybrid
 * latencies, the hits for recall@10 against the exact top-10, memory held).
 * engram-small, engram-resumed, engram-bulk and engram-import are engram again, its
 * store filled by add() of 100 per call (as an app adds), the same and then 1000
 * more in a second session, one add() of the corpus, and an import: the fill table compares each fill's search after the reopen with the
 * small batches' (a search must not be slower for how its store was filled).
 * idb-floor, idb-floor-vectors and idb-floor-blocks are no peers but floors: engram's rows for the corpus written
 * with IndexedDB alone, only IndexedDB's work timed, in its layout and in two it does not have (vectors, or vectors,
 * terms and change-log entries, one row per transaction): what no engine could go below.
 * The system order rotates between rounds. Nothing may come from the network:
 * every request the browser makes is checked to be the bench's own server.
 * Run: npx tsx bench/peers.ts [--sizes 10000,50000] [--queries 200] [--rounds 2]
 *      [--systems engram,engram-small,engram-resumed,engram-bulk,engram-import,orama,pglite,hnswlib-wasm,entitydb,idb-floor,idb-floor-vectors,idb-floor-blocks] [--entitydb-queries 20]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright';
import { ExactIndex } from '../lib/vector/exact-index.js';
import { BENCH_CHROMIUM_ARGS, requireChromium, startBenchServer } from './browser.js';
import type { PeerPhaseResult } from './pages/results.js';
import { numberList, numberOption, option } from './util/args.js';
import { peerCorpus, PEER_DIMS } from './util/peer-corpus.js';
import {
  fillTable,
  peerFigures,
  peerGoals,
  peerTable,
  peerWins,
  rotated,
  type PeerFigures,
  type PeerRound,
} from './util/peer-table.js';
import { printTable, writeResult } from './util/report.js';

const SYSTEMS = [
  'engram',
  'engram-small',
  'engram-resumed',
  'engram-bulk',
  'engram-import',
  'orama',
  'pglite',
  'hnswlib-wasm',
  'entitydb',
  'idb-floor',
  'idb-floor-vectors',
  'idb-floor-blocks',
] as const;
const K = 10;

const sizes = numberList('sizes', [10_000, 50_000]);
const queries = numberOption('queries', 200);
const rounds = numberOption('rounds', 2);
/** EntityDB reads and scores every row per query (seconds each at 50k): it answers fewer queries. */
const entityQueries = numberOption('entitydb-queries', 20);
const systems = (
  option('systems')
    ?.split(',')
    .map((s) => s.trim()) ?? [...SYSTEMS]
).filter((s) => s !== '');
const unknown = systems.filter((s) => !(SYSTEMS as readonly string[]).includes(s));
if (unknown.length > 0) throw new RangeError(`unknown system(s) ${unknown.join(', ')}; known: ${SYSTEMS.join(', ')}`);
if (!systems.includes('engram')) throw new RangeError('--systems must include engram: every row is a ratio to it');

/** The exact top-10 document indexes of every query (cosine over unit vectors, by the exact index). */
function exactTruth(n: number): number[][] {
  const corpus = peerCorpus(n, queries);
  const exact = ExactIndex.create({ dimensions: PEER_DIMS, capacity: n });
  exact.addMany(corpus.vectors.map((vector, i) => ({ id: String(i), vector })));
  const truth = corpus.queryVectors.map((q) => exact.search(q, K).map((hit) => Number(hit.id)));
  exact.dispose();
  return truth;
}

/**
 * Opens `page` of the bench server in a browser process on profile `dir`,
 * waits for its result, closes the browser. Any request that leaves the
 * bench's own server fails the run.
 */
async function runPhase(
  dir: string,
  port: number,
  query: Record<string, string>,
  timeoutMs: number,
): Promise<PeerPhaseResult> {
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: requireChromium(),
    args: [...BENCH_CHROMIUM_ARGS],
  });
  const external: string[] = [];
  context.on('request', (req) => {
    const url = new URL(req.url());
    if (
      !(url.hostname === '127.0.0.1' && url.port === String(port)) &&
      url.protocol !== 'data:' &&
      url.protocol !== 'blob:'
    )
      external.push(req.url());
  });
  try {
    const tab = context.pages()[0] ?? (await context.newPage());
    tab.on('console', (msg) => {
      console.log(`  [page] ${msg.text()}`);
    });
    tab.on('pageerror', (err) => {
      console.error(`  [page error] ${err.message}`);
    });
    const cdp = await context.newCDPSession(tab);
    await tab.exposeFunction('__benchHeapUsage', async () => (await cdp.send('Runtime.getHeapUsage')) as unknown);
    await tab.goto(`http://127.0.0.1:${port}/bench/pages/peers.html?${new URLSearchParams(query).toString()}`);
    await tab.waitForFunction(
      () => (window as unknown as { __benchResult?: unknown }).__benchResult !== undefined,
      undefined,
      { timeout: timeoutMs, polling: 500 },
    );
    const result = await tab.evaluate(() => (window as unknown as { __benchResult: unknown }).__benchResult);
    const failure = (result as { error?: string }).error;
    if (typeof failure === 'string') throw new Error(`${query['system'] ?? ''} ${query['phase'] ?? ''}: ${failure}`);
    if (external.length > 0)
      throw new Error(
        `${query['system'] ?? ''} fetched from outside the bench server: ${external.slice(0, 5).join(', ')}`,
      );
    return result as PeerPhaseResult;
  } finally {
    await context.close();
  }
}

const server = await startBenchServer();
const bySize: { n: number; queries: number; figures: PeerFigures[] }[] = [];
try {
  console.log(
    `peers: sizes ${sizes.join(', ')}, ${queries} queries (EntityDB ${Math.min(queries, entityQueries)}), ${rounds} round(s), systems ${systems.join(', ')} (Chromium, a fresh profile per system and round)`,
  );
  for (const [s, n] of sizes.entries()) {
    const truth = exactTruth(n);
    const collected = new Map<string, PeerRound[]>(systems.map((sys) => [sys, []]));
    for (let round = 0; round < rounds; round++) {
      const order = rotated(systems, round + s);
      console.log(`\n${n}: round ${round + 1} of ${rounds}: ${order.join(', ')}`);
      for (const system of order) {
        const dir = mkdtempSync(join(tmpdir(), `engram-peers-${system}-`));
        try {
          const asked = String(system === 'entitydb' ? Math.min(queries, entityQueries) : queries);
          const base = { system, n: String(n), queries: asked };
          const ingest = await runPhase(dir, server.port, { ...base, phase: 'ingest' }, 60 * 60_000);
          const open = await runPhase(dir, server.port, { ...base, phase: 'open' }, 60 * 60_000);
          collected.get(system)!.push({ ingest, open });
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }
    const figures = systems.map((sys) => peerFigures(sys, collected.get(sys)!, truth, K));
    bySize.push({ n, queries, figures });
    printTable(
      `peers at N = ${n.toLocaleString('en-US')} (each peer's figure, then its ratio to engram's)`,
      peerTable(figures, n),
    );
    const fills = fillTable(figures);
    if (fills.length > 0)
      printTable(
        `engram's search after the reopen by how the store was filled, N = ${n.toLocaleString('en-US')} (ratios to add() of 100 per call)`,
        fills,
      );
    // Written after every size, so that a long run stopped in a later size keeps what it measured.
    writeResult('peers', {
      rounds,
      entityQueries,
      sizes: bySize,
      goals: bySize.filter((b) => b.n >= 10_000).flatMap((b) => peerGoals(b.figures, b.n)),
    });
  }
} finally {
  await server.close();
}

for (const sys of systems) console.log(`\n${sys}: ${bySize[0]?.figures.find((f) => f.system === sys)?.config ?? ''}`);
const wins = bySize.flatMap((b) => peerWins(b.figures).map((w) => ({ n: b.n, ...w })));
if (wins.length > 0) {
  printTable(
    'rows where a peer beats engram',
    wins.map((w) => ({
      N: w.n,
      system: w.system,
      row: w.metric,
      engram: w.engram.toFixed(2),
      peer: w.peer.toFixed(2),
      'peer better by': `${w.factor.toFixed(2)}x`,
    })),
  );
}
// Goals are judged at the sizes of the issue (10k and up); a quick run's small sizes only show that everything works.
const goals = bySize.filter((b) => b.n >= 10_000).flatMap((b) => peerGoals(b.figures, b.n));
if (goals.length > 0)
  printTable(
    'goals',
    goals.map((g) => ({ goal: g.goal, target: g.target, measured: g.measured.toFixed(2), met: g.met ? 'yes' : 'NO' })),
  );
writeResult('peers', { rounds, entityQueries, sizes: bySize, goals });
