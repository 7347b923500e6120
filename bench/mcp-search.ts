/**
 * bench/mcp-search: an MCP tool call answered through the desktop app, at
 * `--sizes` memories (default 10k). The app's real main-process parts
 * (McpHttpServer on 127.0.0.1, HubClients with a bearer token, HubCalls) and
 * its renderer half (answerHubCall on an Engram over fake-indexeddb with the
 * offline model) are wired as in the app; the one stand-in is Electron's IPC,
 * which here is a structured clone of the call and of the answer each way (what
 * IPC does to them) instead of a hop between processes. The client is the MCP
 * SDK's Client over Streamable HTTP, the way a local agent connects.
 *
 * For each size it times `--queries` calls (default 200, after 20 warm-up
 * calls) of `recall_from_memory` (one keyword sentence, limit 5: a hybrid search
 * in the token's scope), and the same tool run directly in the renderer (no
 * HTTP, no IPC), so the table shows what the hub adds; plus `tools/list`, the
 * round trip of the transport alone. Goal: p95 ≤ 30 ms for the search at 10k.
 *
 * Run: npx tsx bench/mcp-search.ts [--sizes 10000] [--queries 200]
 */
import 'fake-indexeddb/auto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { HubCalls } from '../desktop/main/hub-calls.js';
import { HubClients } from '../desktop/main/hub-clients.js';
import { McpHttpServer } from '../desktop/main/mcp-server.js';
import { CHANNELS, type HubCall } from '../desktop/preload/bridge-api.js';
import { answerHubCall } from '../desktop/renderer/hub-answer.js';
import type { ContentsSurface } from '../desktop/main/electron-surface.js';
import { Engram, TransformersEmbedder } from '../lib/index.js';
import { numberList, numberOption } from './util/args.js';
import { printTable, writeResult, type Row } from './util/report.js';
import { generateSentences } from './util/sentences.js';
import { mean, percentile } from './util/stats.js';

const sizes = numberList('sizes', [10_000]);
const queries = numberOption('queries', 200);
const WARMUP = 20;
const BATCH = 500;
const SCOPE = { agentId: 'bench-agent', userId: 'bench-user' };
/** The size the goal is set at, and the goal. */
const GOAL_SIZE = 10_000;
const GOAL_P95_MS = 30;

/** The window's webContents as the main process sees it: send() reaches the renderer's answer, through a clone. */
function rendererContents(engram: Engram, calls: () => HubCalls): ContentsSurface {
  return {
    send(channel: string, ...args: unknown[]): void {
      if (channel !== CHANNELS.hubCall) return;
      const call = structuredClone(args[0]) as HubCall;
      void answerHubCall(engram, call).then((result) => {
        calls().answer(call.id, structuredClone(result));
      });
    },
    setWindowOpenHandler: () => undefined,
    on() {
      return this;
    },
    getURL: () => 'app://engram/index.html',
  };
}

/** A path timed call by call: `run(i)` is its i-th call (warm-up calls first, untimed). */
interface TimedPath {
  label: string;
  run(i: number): Promise<unknown>;
  times: number[];
}

/**
 * Times the paths interleaved, call by call (path A's i-th call, then B's, …), so a
 * machine shared with other work slows them alike rather than whichever ran last.
 */
async function timeInterleaved(paths: TimedPath[]): Promise<void> {
  for (let i = 0; i < WARMUP; i++) for (const p of paths) await p.run(i);
  for (let i = 0; i < queries; i++) {
    for (const p of paths) {
      const started = performance.now();
      await p.run(WARMUP + i);
      p.times.push(performance.now() - started);
    }
  }
  for (const p of paths) console.log(`  ${p.label}: ${queries} calls, p50 ${percentile(p.times, 50).toFixed(2)} ms`);
}

function row(n: number, path: string, times: number[]): Row {
  return {
    memories: n,
    path,
    'p50 ms': percentile(times, 50).toFixed(2),
    'p95 ms': percentile(times, 95).toFixed(2),
    'p99 ms': percentile(times, 99).toFixed(2),
    'mean ms': mean(times).toFixed(2),
  };
}

async function measure(n: number, dir: string): Promise<{ rows: Row[]; p95: number; overhead: number }> {
  const engram = await Engram.open({
    name: `bench-mcp-${process.pid}-${n}`,
    embedder: await TransformersEmbedder.create({ worker: false }),
  });
  const texts = generateSentences(n, 7);
  const started = performance.now();
  for (let i = 0; i < n; i += BATCH) {
    await engram.add(
      texts.slice(i, i + BATCH).map((content) => ({ role: 'user' as const, content })),
      { ...SCOPE, infer: false, dedupe: 'off' },
    );
  }
  await engram.search('warm the indexes', { ...SCOPE, limit: 5 });
  console.log(`  ${n} memories added and indexed in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const clients = await HubClients.load(join(dir, `clients-${n}.json`));
  const { token } = await clients.create('bench', SCOPE);
  const contents = rendererContents(engram, () => calls);
  const calls: HubCalls = new HubCalls(() => contents);
  const server = await McpHttpServer.start({ port: 0, clients, calls, version: 'bench' });
  const client = new Client({ name: 'engram-bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  // Each path asks its own questions, so none finds the other's query already embedded.
  const asked = (seed: number): ((i: number) => { keywords: string[]; limit: number }) => {
    const questions = generateSentences(WARMUP + queries, seed);
    return (i) => ({ keywords: [questions[i] ?? 'tea'], limit: 5 });
  };
  const throughArgs = asked(99);
  const directArgs = asked(101);
  try {
    const through: TimedPath = {
      label: 'recall_from_memory through the app',
      times: [],
      run: async (i) => {
        const result = await client.callTool({ name: 'recall_from_memory', arguments: throughArgs(i) });
        if (result.isError === true) throw new TypeError(JSON.stringify(result.content));
      },
    };
    const direct: TimedPath = {
      label: 'recall_from_memory in the renderer',
      times: [],
      run: async (i) => {
        const answer = await answerHubCall(engram, {
          id: String(i),
          scope: SCOPE,
          op: { kind: 'tool', name: 'recall_from_memory', args: directArgs(i) },
        });
        if (!answer.ok) throw new TypeError(answer.error.message);
      },
    };
    const list: TimedPath = { label: 'tools/list through the app', times: [], run: () => client.listTools() };
    await timeInterleaved([through, direct, list]);
    return {
      rows: [
        row(n, 'recall_from_memory: SDK client → HTTP → main → IPC → renderer', through.times),
        row(n, 'recall_from_memory in the renderer alone', direct.times),
        row(n, 'tools/list through the app (transport only)', list.times),
      ],
      p95: percentile(through.times, 95),
      // What the hub adds, as a ratio of one run (it holds on a loaded machine where the milliseconds do not).
      overhead: percentile(through.times, 50) / percentile(direct.times, 50),
    };
  } finally {
    await client.close();
    await server.close();
    await engram.close();
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'engram-bench-mcp-'));
  const rows: Row[] = [];
  const goals: { goal: string; target: string; measured: number; met?: boolean }[] = [];
  const loadBefore = loadavg()[0] ?? 0;
  try {
    for (const n of sizes) {
      console.log(`${n} memories`);
      const { rows: measured, p95, overhead } = await measure(n, dir);
      rows.push(...measured);
      if (n === GOAL_SIZE)
        goals.push({
          goal: `MCP search (recall_from_memory) through the app at ${n} memories, p95 ms`,
          target: `<= ${GOAL_P95_MS}`,
          measured: Number(p95.toFixed(2)),
          met: p95 <= GOAL_P95_MS,
        });
      goals.push({
        goal: `through the app p50 / in the renderer p50 at ${n} memories`,
        target: 'reported (what HTTP, the main process and IPC add)',
        measured: Number(overhead.toFixed(2)),
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const load = [loadBefore, loadavg()[0] ?? 0].map((l) => l.toFixed(1)).join(' → ');
  printTable(
    `MCP tool call through the app (loopback, ${queries} calls after ${WARMUP} warm-up, offline model; 1-min load average ${load})`,
    rows,
  );
  for (const g of goals)
    console.log(`goal: ${g.goal} ${g.target}: ${g.measured}${g.met === undefined ? '' : g.met ? ' met' : ' NOT met'}`);
  writeResult('mcp-search', { queries, warmup: WARMUP, loadAverage: load, results: rows, goals });
}

await main();
