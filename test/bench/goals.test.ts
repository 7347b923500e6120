import { describe, expect, it } from 'vitest';
import {
  formatMeasured,
  goalsOf,
  goalsTable,
  markdownTable,
  meetsTarget,
  metMark,
  prettyTarget,
  tally,
} from '../../bench/report/goals.js';

describe('goalsOf', () => {
  it('reads the list shape of recall-search, ingest and cold-open', () => {
    const rows = goalsOf({
      goals: [
        { goal: 'index vs scan at 100k', target: '>= 10x', measured: 272.8, met: true },
        { goal: 'add() / raw embedder', target: '>= 0.8x', measured: 0.05, met: false },
        { goal: 'no verdict in file', target: '<= 3x', measured: 2.1 },
      ],
    });
    expect(rows.map((r) => [r.target, r.unit, r.met])).toEqual([
      ['≥ 10x', 'x', true],
      ['≥ 0.8x', 'x', false],
      ['≤ 3x', 'x', true],
    ]);
  });

  it('reads the per-dataset shape of vector, with goals that do not apply at a size', () => {
    const rows = goalsOf({
      goals: {
        'clustered-10k×384': {
          ef: 64,
          recallAt10: { value: 0.93, goal: '>= 0.95', met: false },
          speedupVsExact: { value: 18.2, goal: 'reported (goal set at 100k)', met: null },
          slowdownVsNative: null,
          snapshotOpenVsRebuild: { value: 46.8, goal: '>= 10', met: true },
        },
      },
    });
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({
      goal: 'clustered-10k×384: HNSW recall@10 (efSearch 64)',
      target: '≥ 0.95',
      unit: '',
      met: false,
    });
    expect(rows[1]).toMatchObject({ met: null, note: 'goal set at 100k', target: 'reported only' });
    expect(rows[2]).toMatchObject({ target: '≥ 10x', unit: 'x', met: true, measured: 46.8 });
  });

  it('returns nothing for files without goals', () => {
    expect(goalsOf({ results: [] })).toEqual([]);
    expect(goalsOf(null)).toEqual([]);
  });
});

describe('goals table', () => {
  it('marks met ✔, unmet ✘ and not applicable –', () => {
    const table = goalsTable([
      { goal: 'a', target: '≥ 10x', measured: 12, unit: 'x', met: true },
      { goal: 'b', target: '≥ 0.8x', measured: 0.05, unit: 'x', met: false },
      { goal: 'c', target: 'reported only', measured: 18.2, unit: 'x', met: null, note: 'goal set at 100k' },
      { goal: 'd', target: '≥ 0.95', measured: 0.9995, unit: '', met: true },
    ]);
    const lines = table.split('\n');
    expect(lines[0]).toBe('| goal | target | measured | met |');
    expect(lines[2]).toBe('| a | ≥ 10x | 12.0x | ✔ |');
    expect(lines[3]).toBe('| b | ≥ 0.8x | 0.05x | ✘ |');
    expect(lines[4]).toBe('| c | reported only | 18.2x | – (goal set at 100k) |');
    expect(lines[5]).toBe('| d | ≥ 0.95 | 0.9995 | ✔ |');
    expect(goalsTable([])).toMatch(/No goal/);
  });

  it('counts met goals among those that apply', () => {
    expect(
      tally([
        { goal: 'a', target: '', measured: 1, unit: 'x', met: true },
        { goal: 'b', target: '', measured: 1, unit: 'x', met: false },
        { goal: 'c', target: '', measured: 1, unit: 'x', met: null },
      ]),
    ).toEqual({ met: 1, total: 2 });
  });

  it('formats and compares', () => {
    expect(formatMeasured(272.817, 'x')).toBe('273x');
    expect(formatMeasured(2.1208, 'x')).toBe('2.12x');
    expect(formatMeasured(null, 'x')).toBe('–');
    expect(metMark(true)).toBe('✔');
    expect(metMark(false)).toBe('✘');
    expect(metMark(null)).toBe('–');
    expect(prettyTarget('>= 20', 'x')).toBe('≥ 20x');
    expect(meetsTarget(3, '<= 3x')).toBe(true);
    expect(meetsTarget(0.94, '≥ 0.95')).toBe(false);
    expect(meetsTarget(1, 'reported')).toBeNull();
  });

  it('escapes pipes in Markdown cells', () => {
    expect(markdownTable(['a|b'], [['x|y']])).toBe('| a\\|b |\n| --- |\n| x\\|y |');
  });
});
