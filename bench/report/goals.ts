/**
 * Benchmark goals, read from each result file into one shape, and the
 * Markdown tables that print them (goal, target, measured ratio, met ✔/✘).
 */

/** One goal of one benchmark. `met` is null when the goal does not apply at this size. */
export interface GoalRow {
  goal: string;
  target: string;
  measured: number | null;
  /** 'x' for ratios (printed as 12.3x), '' for plain values such as recall. */
  unit: 'x' | '';
  met: boolean | null;
  /** Why `met` is null, e.g. 'goal set at 100k'. */
  note?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');

/** `>= 10x` → `≥ 10x`; adds the unit when the target is a bare number. */
export function prettyTarget(target: string, unit: 'x' | ''): string {
  let t = target
    .trim()
    .replace(/^>=\s*/, '≥ ')
    .replace(/^<=\s*/, '≤ ');
  if (unit === 'x' && /\d$/.test(t)) t = `${t}x`;
  return t;
}

/**
 * A measured value as printed: ratios with 'x' and 3 significant digits (no
 * more than one decimal from 10 up), plain values with up to 4 decimals.
 * @example
 * formatMeasured(272.817, 'x'); // '273x'
 * formatMeasured(0.9995, ''); // '0.9995'
 */
export function formatMeasured(value: number | null, unit: 'x' | ''): string {
  if (value === null || !Number.isFinite(value)) return '–';
  if (unit === '') return String(Number(value.toFixed(4)));
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toFixed(digits)}x`;
}

/** ✔ met, ✘ not met, – when the goal does not apply. */
export function metMark(met: boolean | null): string {
  return met === null ? '–' : met ? '✔' : '✘';
}

/**
 * Whether `measured` meets a target written as `>= 10x`, `<= 3`, `≥ 0.95`.
 * Returns null when the target has no comparison in it.
 * @example
 * meetsTarget(12, '>= 10x'); // true
 */
export function meetsTarget(measured: number, target: string): boolean | null {
  const m = /^\s*(>=|<=|≥|≤|>|<)\s*([\d.]+)/.exec(target);
  if (m === null) return null;
  const bound = Number(m[2]);
  switch (m[1]) {
    case '>=':
    case '≥':
      return measured >= bound;
    case '<=':
    case '≤':
      return measured <= bound;
    case '>':
      return measured > bound;
    default:
      return measured < bound;
  }
}

const VECTOR_LABELS: Record<string, { label: string; unit: 'x' | '' }> = {
  recallAt10: { label: 'HNSW recall@10', unit: '' },
  speedupVsExact: { label: 'HNSW vs exact scan, p50', unit: 'x' },
  slowdownVsNative: { label: 'HNSW (wasm) / hnswlib-node (native), p50', unit: 'x' },
  snapshotOpenVsRebuild: { label: 'snapshot open vs rebuild', unit: 'x' },
};

/**
 * The goals of one result file, whichever of the two shapes it uses:
 * a list `[{ goal, target, measured, met }]` (recall-search, ingest, cold-open),
 * or an object per dataset `{ [dataset]: { ef, recallAt10: { value, goal, met }, … } }` (vector).
 */
export function goalsOf(result: unknown): GoalRow[] {
  const goals = isRecord(result) ? result['goals'] : undefined;
  if (Array.isArray(goals)) {
    return goals.filter(isRecord).map((g) => {
      const target = text(g['target']);
      const unit: 'x' | '' = /x\s*$/.test(target) ? 'x' : '';
      const measured = typeof g['measured'] === 'number' ? g['measured'] : null;
      const met = typeof g['met'] === 'boolean' ? g['met'] : measured === null ? null : meetsTarget(measured, target);
      return { goal: text(g['goal']), target: prettyTarget(target, unit), measured, unit, met };
    });
  }
  if (!isRecord(goals)) return [];
  const rows: GoalRow[] = [];
  for (const [dataset, entry] of Object.entries(goals)) {
    if (!isRecord(entry)) continue;
    const ef = typeof entry['ef'] === 'number' ? ` (efSearch ${entry['ef']})` : '';
    for (const [key, value] of Object.entries(entry)) {
      if (!isRecord(value)) continue;
      const known = VECTOR_LABELS[key];
      const unit = known?.unit ?? 'x';
      const target = text(value['goal']);
      const measured = typeof value['value'] === 'number' ? value['value'] : null;
      const met = typeof value['met'] === 'boolean' ? value['met'] : null;
      const row: GoalRow = {
        goal: `${dataset}: ${known?.label ?? key}${key === 'recallAt10' || key === 'speedupVsExact' || key === 'slowdownVsNative' ? ef : ''}`,
        target: prettyTarget(target, unit),
        measured,
        unit,
        met,
      };
      if (met === null) {
        const why = /\(([^)]*)\)/.exec(target)?.[1];
        row.target = why === undefined ? 'reported' : 'reported only';
        row.note = why ?? 'no goal at this size';
      }
      rows.push(row);
    }
  }
  return rows;
}

/** Escapes a Markdown table cell. */
export function cell(value: string | number): string {
  return String(value).replaceAll('|', '\\|').replaceAll('\n', ' ');
}

/**
 * A Markdown table. `align` per column: 'l' (default) or 'r'.
 * @example
 * markdownTable(['n', 'ms'], [[10, '0.3']], ['r', 'r']);
 */
export function markdownTable(
  headers: readonly string[],
  rows: readonly (readonly (string | number)[])[],
  align: readonly ('l' | 'r')[] = [],
): string {
  const head = `| ${headers.map(cell).join(' | ')} |`;
  const rule = `| ${headers.map((_, i) => (align[i] === 'r' ? '---:' : '---')).join(' | ')} |`;
  const body = rows.map((r) => `| ${headers.map((_, i) => cell(r[i] ?? '')).join(' | ')} |`);
  return [head, rule, ...body].join('\n');
}

/** The goals table of one benchmark, or a sentence when it has none. */
export function goalsTable(rows: readonly GoalRow[]): string {
  if (rows.length === 0) return '_No goal evaluated at the sizes of this run._';
  return markdownTable(
    ['goal', 'target', 'measured', 'met'],
    rows.map((g) => [
      g.goal,
      g.target,
      formatMeasured(g.measured, g.unit),
      g.met === null && g.note !== undefined ? `– (${g.note})` : metMark(g.met),
    ]),
    ['l', 'l', 'r', 'l'],
  );
}

/** How many goals were met out of those that apply. */
export function tally(rows: readonly GoalRow[]): { met: number; total: number } {
  const applicable = rows.filter((g) => g.met !== null);
  return { met: applicable.filter((g) => g.met === true).length, total: applicable.length };
}
