/**
 * bench/sync: engram.sync() against the Qdrant-compatible test server on
 * loopback (in this process, request validation off so the server's cost is
 * small, as a real Qdrant's would be), stores over fake-indexeddb in Node.
 *
 * 1. Pushing `--count` memories (default 10k) in batches (128 points per request,
 *    the default) against one point per request. Goal: batching at least 10x
 *    faster. Reported for the whole first sync() and for the upload phase alone
 *    (the first sync also reads every row from IndexedDB, the same work both ways).
 * 2. An incremental sync of `--changes` changes (default 100: half edits, half new
 *    memories) in a store of the smallest against one of the largest `--sizes`
 *    (default 1k and 50k): the pushing device's sync() and the other device's
 *    sync() that pulls them. Goal: the larger store costs at most 2x, because the
 *    work follows the changes, not the store size. Median of `--rounds` rounds.
 *    The goal is set on engram's side of the sync: its wall time minus the time the
 *    in-process test server spent answering. The test server scans every point of
 *    the collection for each scroll and collection-info request (a real Qdrant
 *    answers them from its payload indexes), so its share grows with the collection;
 *    the wall time including it is reported beside.
 *
 * Run: npx tsx bench/sync.ts [--count 10000] [--sizes 1000,50000] [--changes 100] [--rounds 5]
 */
import 'fake-indexeddb/auto';
import { performance } from 'node:perf_hooks';
import { Engram, HashEmbedder } from '../lib/index.js';
import type { SyncOptions, SyncProgress } from '../lib/index.js';
import { startQdrantServer, type QdrantServer } from '../test/sync/qdrant-server.js';
import { numberList, option } from './util/args.js';
import { printTable, writeResult } from './util/report.js';
import { percentile } from './util/stats.js';

const DIMS = 100; // the offline model's dimension
const count = Number(option('count') ?? '10000');
const sizes = numberList('sizes', [1_000, 50_000]);
const changes = Number(option('changes') ?? '100');
const rounds = Number(option('rounds') ?? '5');

let stores = 0;
let clock = Date.UTC(2026, 0, 1);

/** A store with a fixed-size hash embedder and a clock that moves 1 ms per read. */
async function openStore(): Promise<Engram> {
  stores += 1;
  return Engram.open({
    name: `bench-sync-${process.pid}-${stores}`,
    embedder: new HashEmbedder({ dimensions: DIMS }),
    now: () => (clock += 1),
  });
}

/** Fills a store with `n` distinct memories, 500 per add(). */
async function fill(engram: Engram, n: number, tag: string): Promise<void> {
  for (let i = 0; i < n; i += 500) {
    const texts = Array.from({ length: Math.min(500, n - i) }, (_, j) => ({
      role: 'user' as const,
      content: `${tag} memory ${i + j}: the note about item ${((i + j) * 7919) % 100_003}`,
    }));
    await engram.add(texts, { userId: 'bench', infer: false });
  }
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(2);
}

/** Milliseconds the test server has spent answering so far. */
function serverBusy(): number {
  let sum = 0;
  for (const v of server.busyMs.values()) sum += v;
  return sum;
}

/** Times one sync (wall, and engram's side: wall minus the server's answering); also the upload phase. */
async function timedSync(
  engram: Engram,
  options: SyncOptions,
): Promise<{ ms: number; engramMs: number; uploadMs: number; result: Awaited<ReturnType<Engram['sync']>> }> {
  const busy = serverBusy();
  let firstPush: number | undefined;
  let lastPush = 0;
  const start = performance.now();
  let uploadStart = start;
  const onProgress = (p: SyncProgress): void => {
    if (p.phase === 'push') {
      firstPush ??= performance.now();
      lastPush = performance.now();
    } else uploadStart = performance.now();
  };
  const result = await engram.sync({ ...options, onProgress });
  const ms = performance.now() - start;
  // The upload phase: from the end of the last non-push step to the last batch acknowledged.
  const uploadMs = firstPush === undefined ? 0 : lastPush - Math.min(uploadStart, firstPush);
  return { ms, engramMs: ms - (serverBusy() - busy), uploadMs, result };
}

const server: QdrantServer = await startQdrantServer({ validate: false });
const base = { url: server.url, timeoutMs: 120_000 } satisfies Partial<SyncOptions>;
try {
  // 1. Batched vs one point per request.
  console.log(`sync: pushing ${count} memories, batched vs one point per request (test server on ${server.url})`);
  const source = await openStore();
  await fill(source, count, 'push');
  const push: Record<string, { batch: number; ms: number; uploadMs: number; requests: number }> = {};
  for (const [name, batch] of [
    ['batched', 128],
    ['one per request', 1],
  ] as const) {
    const before = server.requests.get('upsert') ?? 0;
    const { ms, uploadMs, result } = await timedSync(source, {
      ...base,
      collection: `push_${batch}`,
      batchSize: batch,
    });
    if (result.uploaded !== count) throw new TypeError(`expected ${count} uploaded, got ${result.uploaded}`);
    push[name] = { batch, ms, uploadMs, requests: (server.requests.get('upsert') ?? 0) - before };
    console.log(`  ${name}: ${seconds(ms)} s (upload ${seconds(uploadMs)} s, ${push[name].requests} requests)`);
  }
  await source.close();
  const batched = push['batched']!;
  const single = push['one per request']!;
  const pushRows = Object.entries(push).map(([name, p]) => ({
    push: name,
    memories: count,
    'points/request': p.batch,
    requests: p.requests,
    'first sync() s': seconds(p.ms),
    'upload phase s': seconds(p.uploadMs),
    'memories/s (sync)': Math.round(count / (p.ms / 1000)),
  }));
  printTable(`push ${count} memories: batched vs one point per request`, pushRows);

  // 2. Incremental sync of `changes` changes in stores of each size.
  const incremental: {
    size: number;
    pushMs: number;
    pullMs: number;
    pushWallMs: number;
    pullWallMs: number;
    pushed: number;
    pulled: number;
    pushMsAll: number[];
    pullMsAll: number[];
    pushWallMsAll: number[];
    pullWallMsAll: number[];
  }[] = [];
  for (const size of sizes) {
    console.log(`sync: incremental, ${changes} changes in a store of ${size}`);
    const collection = `incremental_${size}`;
    const a = await openStore();
    const b = await openStore();
    await fill(a, size, `store${size}`);
    await a.sync({ ...base, collection });
    await b.sync({ ...base, collection });
    const ids = (await a.getAll({ userId: 'bench', limit: changes })).results.map((m) => m.id);
    const pushMsAll: number[] = [];
    const pullMsAll: number[] = [];
    const pushWallMsAll: number[] = [];
    const pullWallMsAll: number[] = [];
    let pushed = 0;
    let pulled = 0;
    for (let round = 0; round < rounds; round++) {
      const edits = Math.floor(changes / 2);
      for (let i = 0; i < edits; i++) await a.update(ids[i % ids.length]!, `round ${round}: edited note ${i}`);
      await a.add(
        Array.from({ length: changes - edits }, (_, i) => ({
          role: 'user' as const,
          content: `round ${round}: new note ${i} for store ${size}`,
        })),
        { userId: 'bench', infer: false },
      );
      const up = await timedSync(a, { ...base, collection });
      const down = await timedSync(b, { ...base, collection });
      pushMsAll.push(up.engramMs);
      pullMsAll.push(down.engramMs);
      pushWallMsAll.push(up.ms);
      pullWallMsAll.push(down.ms);
      pushed = up.result.uploaded;
      pulled = down.result.downloaded;
      if (pushed !== changes || pulled !== changes)
        throw new TypeError(`round ${round}: pushed ${pushed}, pulled ${pulled}, expected ${changes}`);
    }
    incremental.push({
      size,
      pushMs: percentile(pushMsAll, 50),
      pullMs: percentile(pullMsAll, 50),
      pushWallMs: percentile(pushWallMsAll, 50),
      pullWallMs: percentile(pullWallMsAll, 50),
      pushed,
      pulled,
      pushMsAll,
      pullMsAll,
      pushWallMsAll,
      pullWallMsAll,
    });
    await a.close();
    await b.close();
  }
  const small = incremental[0]!;
  const large = incremental[incremental.length - 1]!;
  printTable(
    `incremental sync of ${changes} changes (median of ${rounds})`,
    incremental.map((r) => ({
      'store size': r.size,
      changes,
      'push: engram ms': r.pushMs.toFixed(1),
      'pull: engram ms': r.pullMs.toFixed(1),
      [`push vs ${small.size}`]: `${(r.pushMs / small.pushMs).toFixed(2)}x`,
      [`pull vs ${small.size}`]: `${(r.pullMs / small.pullMs).toFixed(2)}x`,
      'push: wall ms (with test server)': r.pushWallMs.toFixed(1),
      'pull: wall ms (with test server)': r.pullWallMs.toFixed(1),
    })),
  );

  const speedup = single.ms / batched.ms;
  const uploadSpeedup = single.uploadMs / batched.uploadMs;
  const pushGrowth = large.pushMs / small.pushMs;
  const pullGrowth = large.pullMs / small.pullMs;
  const goals = [
    {
      goal: `push ${count}: batched (128/request) vs one point per request, whole first sync()`,
      target: '>= 10x',
      measured: speedup,
      met: speedup >= 10,
    },
    {
      goal: `push ${count}: batched vs one point per request, upload phase`,
      target: '>= 10x',
      measured: uploadSpeedup,
      met: uploadSpeedup >= 10,
    },
    {
      goal: `incremental ${changes} changes, pushing device (engram's side): store of ${large.size} / ${small.size}`,
      target: '<= 2x',
      measured: pushGrowth,
      met: pushGrowth <= 2,
    },
    {
      goal: `incremental ${changes} changes, pulling device (engram's side): store of ${large.size} / ${small.size}`,
      target: '<= 2x',
      measured: pullGrowth,
      met: pullGrowth <= 2,
    },
    {
      goal: `incremental ${changes} changes, pushing device, wall time with the linear-scan test server (reported)`,
      target: 'reported',
      measured: large.pushWallMs / small.pushWallMs,
      met: null,
    },
    {
      goal: `incremental ${changes} changes, pulling device, wall time with the linear-scan test server (reported)`,
      target: 'reported',
      measured: large.pullWallMs / small.pullWallMs,
      met: null,
    },
  ];
  printTable(
    'goals',
    goals.map((g) => ({
      goal: g.goal,
      target: g.target,
      measured: `${g.measured.toFixed(2)}x`,
      met: g.met === null ? '–' : g.met ? 'yes' : 'NO',
    })),
  );
  writeResult('sync', {
    server: 'test/sync/qdrant-server.ts on loopback, in process, request validation off',
    dims: DIMS,
    results: [
      ...pushRows.map((r) => ({ part: 'push', ...r })),
      ...incremental.map((r) => ({
        part: 'incremental',
        'store size': r.size,
        changes,
        'push: engram ms (median)': Number(r.pushMs.toFixed(1)),
        'pull: engram ms (median)': Number(r.pullMs.toFixed(1)),
        'push: wall ms (median)': Number(r.pushWallMs.toFixed(1)),
        'pull: wall ms (median)': Number(r.pullWallMs.toFixed(1)),
      })),
    ],
    push,
    incremental,
    goals,
  });
} finally {
  await server.close();
}
