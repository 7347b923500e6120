/**
 * Browser side of bench/convert: a plain store of n memories (384-d) converted to encrypted at
 * rest and back in place (Engram.encryptStore / decryptStore: one IndexedDB upgrade transaction
 * over the whole store), in Chromium: the time of each, the page's JS heap during it, how soon a
 * cancel at half-way returns (and that the store is then as it was), and the opens after it (the
 * first reads the index snapshots the conversion carried over, sealed or opened as the store now is).
 */
import { Engram, HashEmbedder } from '../../lib/index.js';
import { generateSentences } from '../util/sentences.js';
import type { ConvertResult } from './results.js';

const log = (line: string): void => {
  console.log(line);
  document.getElementById('log')!.textContent += `${line}\n`;
};

const DIMS = 384;
const BATCH = 64;

/** The page's JS heap in MB (Chromium's performance.memory), 0 where there is none. */
function heapMb(): number {
  const memory = (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory;
  return memory === undefined ? 0 : memory.usedJSHeapSize / 2 ** 20;
}

async function run(n: number): Promise<ConvertResult> {
  const embedder = new HashEmbedder({ dimensions: DIMS });
  const name = `bench-convert-${n}-${Date.now()}`;
  const texts = generateSentences(n, 26).map((s, i) => `${s} (${i})`);
  const fill = await Engram.open({ name, embedder });
  for (let from = 0, round = 0; from < n; from += BATCH, round++) {
    const batch = texts.slice(from, from + BATCH).map((content) => ({ role: 'user' as const, content }));
    await fill.add(batch, { userId: `u${round % 50}`, dedupe: 'off' });
    if (round % 300 === 0) log(`  ${n}: added ${from + BATCH}`);
  }
  await fill.close();
  const timedOpen = async (encryption?: { key: CryptoKey }): Promise<number> => {
    const t0 = performance.now();
    const e = await Engram.open({ name, embedder, ...(encryption === undefined ? {} : { encryption }) });
    await e.search(texts[0]!, { mode: 'hybrid', limit: 10 });
    const ms = performance.now() - t0;
    await e.close();
    return ms;
  };
  const plainOpenMs = await timedOpen();
  const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);

  // A cancel at half-way: how long until the call returns, and the store as it was.
  const controller = new AbortController();
  let abortedAt = 0;
  const t0 = performance.now();
  const cancelled = await Engram.encryptStore(name, {
    encryption: { key },
    signal: controller.signal,
    onProgress: ({ done, total }) => {
      if (abortedAt === 0 && done >= total / 2) {
        abortedAt = performance.now();
        controller.abort();
      }
    },
  }).then(
    () => 'converted',
    (e: unknown) => (e as Error).name,
  );
  const cancelReturnMs = performance.now() - abortedAt;
  const cancelRunMs = performance.now() - t0;
  const after = await Engram.open({ name, embedder });
  const intact = cancelled === 'AbortError' && (await after.stats()).memories === n;
  await after.close();
  log(`  ${n}: cancel at half-way: ${cancelled}, returned in ${cancelReturnMs.toFixed(0)} ms, store intact ${intact}`);

  let peak = heapMb();
  const heapBefore = peak;
  let reports = 0;
  const e0 = performance.now();
  const encrypted = await Engram.encryptStore(name, {
    encryption: { key },
    onProgress: () => {
      reports++;
      peak = Math.max(peak, heapMb());
    },
  });
  const encryptMs = performance.now() - e0;
  log(`  ${n}: encrypted ${encrypted.rows} rows in ${encryptMs.toFixed(0)} ms`);
  const firstOpenMs = await timedOpen({ key });
  const secondOpenMs = await timedOpen({ key });
  let decryptPeak = heapMb();
  const d0 = performance.now();
  const decrypted = await Engram.decryptStore(name, {
    encryption: { key },
    onProgress: () => {
      decryptPeak = Math.max(decryptPeak, heapMb());
    },
  });
  const decryptMs = performance.now() - d0;
  log(`  ${n}: decrypted ${decrypted.rows} rows in ${decryptMs.toFixed(0)} ms`);
  const plainAgainOpenMs = await timedOpen();
  await Engram.open({ name, embedder }).then(async (e) => {
    if ((await e.stats()).memories !== n) throw new Error('memories lost in the round trip');
    await e.close();
  });
  return {
    memories: n,
    rows: encrypted.rows,
    progressReports: reports,
    encryptMs,
    decryptMs,
    heapBeforeMb: heapBefore,
    encryptPeakHeapMb: peak,
    decryptPeakHeapMb: decryptPeak,
    cancelRunMs,
    cancelReturnMs,
    cancelIntact: intact,
    plainOpenMs,
    firstOpenMs,
    secondOpenMs,
    plainAgainOpenMs,
  };
}

const params = new URLSearchParams(location.search);
const sizes = (params.get('sizes') ?? '10000').split(',').map(Number);
try {
  const results: ConvertResult[] = [];
  for (const n of sizes) results.push(await run(n));
  (window as unknown as { __benchResult: unknown }).__benchResult = { results };
} catch (e) {
  log(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  (window as unknown as { __benchResult: unknown }).__benchResult = { error: String(e) };
}
