/**
 * Writes bench/results/REPORT.md and the SVG charts next to it from the
 * benchmarks' bench/results/<name>.json files (and bench/results/run.json,
 * left by bench/run.ts, for the machine and each benchmark's status).
 * bench/run.ts calls this after the benchmarks; run it alone to redo the report:
 *
 *   npx tsx bench/report.ts
 */
import { relative } from 'node:path';
import { writeReport } from './report/generate.js';

const { path, report } = writeReport();
for (const c of report.charts) console.log(`wrote ${relative(process.cwd(), path.replace(/REPORT\.md$/, c.file))}`);
console.log(`wrote ${relative(process.cwd(), path)}`);
