// The goals of bench/results/REPORT.md, met or not, and which changed status since another version of it
// (issue 25: "the benchmark report shows no goal moving", made checkable).
//   node scripts/report-goals.mjs [--ref <commit>] [--to <commit>] [--all] [--file <path>]
// Without --ref it lists every goal row with its status and counts them. With --ref it compares the report
// as committed at <commit> with the working tree's (or the one at --to <commit>) and lists the goals whose
// status changed (met → not met, not met → met), and those only one side has; --all lists every row as well.
// A goal row is a row of any Markdown table whose header has a `goal` and a `met` column. It is named by
// where it stands: the summary's "All goals" table by its `benchmark` column, any other by the headings
// above it (section › subsection; a heading "Goals" left out); a row that repeats another's goal with the
// same figures (the summary's copy of a section's row) counts once, and a goal several runs' tables share
// (at-rest's) is compared as the list of its rows' statuses (`✔✘✘`). Status: met (✔, yes), not met (✘, no), reported only (–, anything else).
// Exits 1 when, with --ref, a goal has fewer rows met than before, so a script can check "no goal moving".
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
/** @param {string} name */
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const file = option('--file') ?? 'bench/results/REPORT.md';
const ref = option('--ref');
const to = option('--to');
const all = args.includes('--all');

/** @param {string | undefined} at a commit, or undefined for the working tree */
function reportAt(at) {
  if (at === undefined) return readFileSync(file, 'utf8');
  return execFileSync('git', ['show', `${at}:${file}`], { encoding: 'utf8', maxBuffer: 1 << 28 });
}

/** The cells of a table row, split on unescaped pipes. @param {string} line */
const cells = (line) =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());

/** @param {string} met @returns {Status} */
function statusOf(met) {
  const m = met.toLowerCase();
  if (m === '✔' || m === 'yes') return 'met';
  if (m === '✘' || m === 'no') return 'not met';
  return 'reported only';
}

/**
 * Every goal row of a report, grouped by the name of where it stands (a name several runs' tables share,
 * as at-rest's, holds each of their rows, in order).
 * @param {string} text
 * @returns {Map<string, GoalRow[]>}
 */
function goalsOf(text) {
  const lines = text.split('\n');
  /** @type {string[]} */
  const headings = [];
  /** @type {Map<string, GoalRow[]>} */
  const goals = new Map();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const heading = /^(#{2,6})\s+(.*)$/.exec(line);
    if (heading !== null) {
      headings.length = (heading[1] ?? '##').length - 2;
      headings.push((heading[2] ?? '').trim());
      continue;
    }
    if (!line.startsWith('|') || !/^\|\s*:?-/.test(lines[i + 1] ?? '')) continue;
    const header = cells(line).map((c) => c.toLowerCase());
    const goal = header.indexOf('goal');
    const met = header.indexOf('met');
    const bench = header.indexOf('benchmark');
    let j = i + 2;
    for (; j < lines.length && (lines[j] ?? '').startsWith('|'); j++) {
      if (goal < 0 || met < 0) continue;
      const row = cells(lines[j] ?? '');
      // A "Goals" heading says nothing the table does not: a section's goals are named as the summary names them.
      const where = bench >= 0 ? [row[bench] ?? ''] : headings.filter((h) => h && !/^goals$/i.test(h));
      const name = [...where, row[goal] ?? ''].join(' › ');
      /** @type {GoalRow} */
      const goalRow = {
        status: statusOf(row[met] ?? ''),
        target: row[header.indexOf('target')] ?? '',
        measured: row[header.indexOf('measured')] ?? '',
      };
      const rows = goals.get(name) ?? [];
      // The same goal with the same figures (the summary's copy of a section's row) is one goal.
      if (!rows.some((r) => r.status === goalRow.status && r.measured === goalRow.measured)) rows.push(goalRow);
      goals.set(name, rows);
    }
    i = j - 1;
  }
  return goals;
}

/** @typedef {{ status: Status; target: string; measured: string }} GoalRow */
/** @typedef {'met' | 'not met' | 'reported only'} Status */
const MARK = { met: '✔', 'not met': '✘', 'reported only': '–' };

/** @param {{ status: Status }[]} rows @param {Status} status */
const count = (rows, status) => rows.filter((r) => r.status === status).length;

/** @param {string} label @param {ReturnType<typeof goalsOf>} goals */
function printCounts(label, goals) {
  const rows = [...goals.values()].flat();
  console.log(
    `${label}: ${rows.length} goal rows: ${count(rows, 'met')} met, ${count(rows, 'not met')} not met, ${count(rows, 'reported only')} reported only`,
  );
}

/** @param {ReturnType<typeof goalsOf>} goals */
function printRows(goals) {
  for (const [name, rows] of goals)
    for (const r of rows) console.log(`  ${MARK[r.status]} ${name}  (${r.measured}; target ${r.target})`);
}

/** The statuses of a goal's rows, as marks: `✔`, or `✔✘✘` for three runs' tables. @param {{ status: Status }[]} rows */
const marks = (rows) => rows.map((r) => MARK[r.status]).join('');

/**
 * The goals whose status changed between two reports: those with fewer rows met than before (lost),
 * the other changes, and the goals only one report has.
 * @param {ReturnType<typeof goalsOf>} before @param {ReturnType<typeof goalsOf>} after
 */
function changes(before, after) {
  /** @type {string[]} */
  const lost = [];
  /** @type {string[]} */
  const other = [];
  for (const [name, rows] of after) {
    const was = before.get(name);
    if (was === undefined || marks(was) === marks(rows)) continue;
    const figures = `${was.map((r) => r.measured).join(', ')} → ${rows.map((r) => r.measured).join(', ')}`;
    const line = `  ${marks(was)} → ${marks(rows)} ${name}  (${figures}; target ${rows[0]?.target ?? ''})`;
    (count(rows, 'met') < count(was, 'met') ? lost : other).push(line);
  }
  const onlyBefore = [...before.keys()].filter((n) => !after.has(n));
  const onlyAfter = [...after.keys()].filter((n) => !before.has(n));
  return { lost, other, onlyBefore, onlyAfter };
}

const here = goalsOf(reportAt(to));
const hereName = to ?? 'the working tree';
if (ref === undefined) {
  printCounts(`${file} at ${hereName}`, here);
  printRows(here);
} else {
  const before = goalsOf(reportAt(ref));
  printCounts(`${file} at ${ref}`, before);
  printCounts(`${file} at ${hereName}`, here);
  if (all) printRows(here);
  const { lost, other, onlyBefore, onlyAfter } = changes(before, here);
  console.log(`\nfewer rows met (met → not met): ${lost.length}`);
  for (const line of lost) console.log(line);
  console.log(`other status changes: ${other.length}`);
  for (const line of other) console.log(line);
  console.log(`only at ${ref}: ${onlyBefore.length}`);
  for (const n of onlyBefore) console.log(`  ${marks(before.get(n) ?? [])} ${n}`);
  console.log(`only at ${hereName}: ${onlyAfter.length}`);
  for (const n of onlyAfter) console.log(`  ${marks(here.get(n) ?? [])} ${n}`);
  if (lost.length > 0) process.exitCode = 1;
}
