/**
 * Printing and saving benchmark results (Node side).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** A table row: column name -> printed value. */
export type Row = Record<string, string | number>;

/**
 * Prints rows as an aligned Markdown table under a title.
 * @example
 * printTable('vector search', [{ n: 10000, 'p50 ms': '0.31' }])
 */
export function printTable(title: string, rows: readonly Row[]): string {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = rows.map((r) => columns.map((c) => String(r[c] ?? '')));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]): string => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  const text = [
    `\n### ${title}\n`,
    line(columns),
    `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...cells.map(line),
  ].join('\n');
  console.log(text);
  return text;
}

/** Writes `bench/results/<name>.json` and returns its path. */
export function writeResult(name: string, data: unknown): string {
  const dir = resolve(import.meta.dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  const path = resolve(dir, `${name}.json`);
  writeFileSync(path, `${JSON.stringify({ name, at: new Date().toISOString(), ...(data as object) }, null, 2)}\n`);
  console.log(`wrote ${path}`);
  return path;
}
