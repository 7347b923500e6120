import { describe, expect, it } from 'vitest';
import { cpuBound } from '../../bench/util/cpu-bound.js';

describe('cpuBound', () => {
  const stages = { texts: 3000, rawPerSecond: 3000, writePerSecond: 1000, indexPerSecond: 10_000 };

  it('is undefined without CPU figures or a stage', () => {
    expect(cpuBound(stages)).toBeUndefined();
    expect(
      cpuBound({ ...stages, writePerSecond: undefined, cpu: { cores: 2, embedder: 1, write: 1, index: 1, add: 1 } }),
    ).toBeUndefined();
  });

  it('adds up the stages’ core-seconds over the cores: past the slowest stage’s time, the ceiling drops below 1', () => {
    // 1 s × 1.1 + 3 s × 1.7 + 0.3 s × 1 = 6.5 core-seconds over 2 cores: 3.25 s against the write's 3 s.
    const bound = cpuBound({ ...stages, cpu: { cores: 2, embedder: 1.1, write: 1.7, index: 1, add: 1.6 } })!;
    expect(bound.seconds).toBeCloseTo(3.25, 6);
    expect(bound.perSecond).toBeCloseTo(3000 / 3.25, 6);
    expect(bound.ceiling).toBeCloseTo(3 / 3.25, 6);
  });

  it('is the slowest stage itself when the cores can run the stages side by side', () => {
    const bound = cpuBound({ ...stages, cpu: { cores: 8, embedder: 1, write: 1, index: 1, add: 3 } })!;
    expect(bound.seconds).toBe(3);
    expect(bound.ceiling).toBe(1);
  });
});
