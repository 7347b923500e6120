/**
 * bench/convert: converting an existing plain store to encrypted at rest and back in place
 * (issue 26), in Chromium: whether one IndexedDB transaction over the whole store is acceptable at
 * 10k and 100k memories (time, the page's memory, how soon a cancel returns).
 * Run: npx tsx bench/convert.ts [--sizes 10000,100000]
 */
import { runPage } from './browser.js';
import { option } from './util/args.js';
import { printTable, writeResult } from './util/report.js';
import type { ConvertResult } from './pages/results.js';

const sizes = option('sizes') ?? '10000';
console.log(`convert: sizes ${sizes} (Chromium)`);
const out = await runPage<{ results?: ConvertResult[]; error?: string }>('bench/pages/convert.html', { sizes });
if (out.results === undefined) {
  console.error(`convert failed: ${out.error ?? 'no result'}`);
  process.exit(1);
}
const results = out.results;
printTable(
  'encryptStore / decryptStore in place (Chromium, one upgrade transaction)',
  results.map((r) => ({
    memories: r.memories,
    rows: r.rows,
    'encrypt s': (r.encryptMs / 1000).toFixed(1),
    'decrypt s': (r.decryptMs / 1000).toFixed(1),
    'rows/s (encrypt)': ((r.rows / r.encryptMs) * 1000).toFixed(0),
    'JS heap MB before / peak encrypt / peak decrypt': `${r.heapBeforeMb.toFixed(0)} / ${r.encryptPeakHeapMb.toFixed(0)} / ${r.decryptPeakHeapMb.toFixed(0)}`,
    'progress reports': r.progressReports,
  })),
);
printTable(
  'cancel at half-way, and the opens around the conversion (open to first hybrid search)',
  results.map((r) => ({
    memories: r.memories,
    'cancel: run s': (r.cancelRunMs / 1000).toFixed(1),
    'abort() to AbortError ms': r.cancelReturnMs.toFixed(0),
    'store intact': r.cancelIntact ? 'yes' : 'NO',
    'plain open ms': r.plainOpenMs.toFixed(0),
    'first encrypted open ms (after the conversion)': r.firstOpenMs.toFixed(0),
    'second encrypted open ms': r.secondOpenMs.toFixed(0),
    'plain again open ms (after the conversion)': r.plainAgainOpenMs.toFixed(0),
  })),
);
writeResult('convert', { results });
