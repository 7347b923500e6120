/**
 * bench/at-rest: what encryption at rest costs (issue 26). A plain and an encrypted store (a
 * WebCrypto key) in one Chromium page, fed the same memories (384-d vectors looked up by text),
 * every step alternating which store goes first. Goals, as ratios of one run (issue 26): add() at
 * batch 64 at least 0.8x the plain store's throughput, at every size; hybrid search p95 within 1.1x
 * and open from the snapshot to the first answered search within 1.25x, at 100k. At smaller sizes
 * those two ratios are printed as reported figures: the issue sets them at 100k, and a store of a
 * few thousand opens in a few hundred milliseconds, where one slow step decides the ratio.
 * The add() figure of a small store is each store's median of several fills of a fresh pair (9 up
 * to 3k, 3 at 10k): a 1k fill is 16 transactions, and single fills read 0.68-0.81x for one build
 * (REPORT.md, at-rest, sessions 39 and 40).
 * Run: npx tsx bench/at-rest.ts [--sizes 1000,3000,10000,100000] [--queries 1000] [--opens 9]
 */
import { runPage } from './browser.js';
import { option } from './util/args.js';
import { printTable, writeResult } from './util/report.js';
import type { AtRestResult } from './pages/results.js';

const sizes = option('sizes') ?? '1000,3000,10000,100000';
/** The size from which the search and open ratios are goals (issue 26 sets them at 100k). */
const GOAL_SIZE = 100_000;
/** The target of a ratio printed below {@link GOAL_SIZE}. */
const REPORTED = 'reported only (a goal at 100k)';
/** One row of the goals table (`met` absent: a reported figure). */
interface Goal {
  goal: string;
  target: string;
  measured: number;
  met?: boolean;
}
/**
 * 1,000 queries and 9 opens. About 5% of the searches of either store take two to five times the
 * median (pauses of the page: garbage collection, IndexedDB), so the p95 of 400 (the 20th slowest)
 * sat on the edge between the body and those pauses: runs of this session's and the last one's builds
 * read 1.02x to 1.31x; of 1,000, four passes in one page read 1.00x to 1.03x (REPORT.md, at-rest,
 * session 41). At 100k one
 * open's read of the index snapshot (about 170 MB) took from 0.65 to 1.6 s in either store within
 * one run, so a median of 5 opens moved the open ratio from 1.03x to 1.71x between runs of one
 * build (session 39).
 */
const queries = option('queries') ?? '1000';
const opens = option('opens') ?? '9';
console.log(`at-rest: sizes ${sizes}, ${queries} queries, ${opens} opens (Chromium)`);
/**
 * Each size in a browser of its own (a fresh profile): after a 10k pair in the same page, the
 * 100k fill was refused by the browser (QuotaExceededError, session 39; cause not found).
 */
const results: AtRestResult[] = [];
for (const size of sizes.split(',')) {
  const out = await runPage<{ results?: AtRestResult[]; error?: string }>('bench/pages/at-rest.html', {
    sizes: size,
    queries,
    opens,
  });
  if (out.results === undefined) {
    console.error(`at-rest failed at ${size}: ${out.error ?? 'no result'}`);
    process.exit(1);
  }
  results.push(...out.results);
}
printTable(
  'plain vs encrypted store (Chromium, side by side)',
  results.flatMap((r) =>
    (['plain', 'encrypted'] as const).map((kind) => ({
      memories: r.memories,
      store: kind,
      'add() batch 64, memories/s': r[kind].addPerSecond.toFixed(0),
      'fills (median)': r.fills ?? 1,
      'search p50 ms': r[kind].searchP50Ms.toFixed(2),
      'search p95 ms': r[kind].searchP95Ms.toFixed(2),
      'open() ms (median)': r[kind].openOnlyMs.toFixed(0),
      'open to first search ms (median)': r[kind].openMs.toFixed(0),
      'open to first search ms (fastest – slowest)': r[kind].openRangeMs.map((ms) => ms.toFixed(0)).join(' – '),
    })),
  ),
);
const goals = results.flatMap((r): Goal[] => {
  const add = r.encrypted.addPerSecond / r.plain.addPerSecond;
  const search = r.encrypted.searchP95Ms / r.plain.searchP95Ms;
  const open = r.encrypted.openMs / r.plain.openMs;
  const at = `at ${r.memories / 1000}k`;
  // A ratio that is a goal only from GOAL_SIZE on (below it, printed as a reported figure).
  const atGoalSize = (goal: string, measured: number, limit: number): Goal =>
    r.memories >= GOAL_SIZE
      ? { goal, target: `<= ${limit}x`, measured, met: measured <= limit }
      : { goal, target: REPORTED, measured };
  return [
    { goal: `add() batch 64 throughput, encrypted / plain ${at}`, target: '>= 0.8x', measured: add, met: add >= 0.8 },
    atGoalSize(`search p95, encrypted / plain ${at}`, search, 1.1),
    atGoalSize(`open from snapshot, encrypted / plain ${at}`, open, 1.25),
  ];
});
printTable(
  'goals',
  goals.map((g) => ({
    goal: g.goal,
    target: g.target,
    measured: `${g.measured.toFixed(2)}x`,
    met: g.met === undefined ? '–' : g.met ? 'yes' : 'no',
  })),
);
writeResult('at-rest', { results, goals });
