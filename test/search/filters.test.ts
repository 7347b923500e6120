import { describe, expect, it } from 'vitest';
import { compileFilters } from '../../lib/search/filters.js';
import type { MemoryRow } from '../../lib/store/rows.js';

const row = (over: Partial<MemoryRow>): MemoryRow => ({
  id: 'm',
  text: 't',
  tier: 'long_term',
  metadata: {},
  hash: 'h',
  createdAt: 100,
  updatedAt: 100,
  accessCount: 0,
  version: 1,
  origin: 'd',
  ...over,
});

describe('compileFilters', () => {
  it('compileFilters() matches scope, tier, metadata and dates', () => {
    const f = compileFilters(
      {
        tier: ['project', 'long_term'],
        metadata: { a: 1, tags: { in: [['x'], 'y'] } },
        createdAt: { from: 50, to: 150 },
      },
      { userId: 'u' },
    );
    expect(f.empty).toBe(false);
    expect(f.matches(row({ userId: 'u', metadata: { a: 1, tags: ['x'] } }), 0)).toBe(true);
    expect(f.matches(row({ userId: 'u', metadata: { a: 1, tags: 'y' } }), 0)).toBe(true);
    expect(f.matches(row({ userId: 'v', metadata: { a: 1, tags: 'y' } }), 0)).toBe(false);
    expect(f.matches(row({ userId: 'u', metadata: { a: 2, tags: 'y' } }), 0)).toBe(false);
    expect(f.matches(row({ userId: 'u', tier: 'short_term', metadata: { a: 1, tags: 'y' } }), 0)).toBe(false);
    expect(f.matches(row({ userId: 'u', createdAt: 200, metadata: { a: 1, tags: 'y' } }), 0)).toBe(false);
  });

  it('compileFilters() never matches tombstones or expired rows', () => {
    const f = compileFilters(undefined);
    expect(f.empty).toBe(true);
    expect(f.matches(row({}), 0)).toBe(true);
    expect(f.matches(row({ deletedAt: 5 }), 0)).toBe(false);
    expect(f.matches(row({ expiresAt: 10 }), 10)).toBe(false);
    expect(f.matches(row({ expiresAt: 10 }), 9)).toBe(true);
  });

  it('compileFilters() rejects unknown fields and malformed conditions', () => {
    expect(() => compileFilters({ owner: 'x' })).toThrow(/filters.owner/);
    expect(() => compileFilters({ metadata: { a: { gt: 1 } } })).toThrow(/filters.metadata.a.gt/);
    expect(() => compileFilters({ metadata: { a: { in: 3 } } })).toThrow(/filters.metadata.a.in/);
    expect(() => compileFilters({ createdAt: { from: 'soon' } })).toThrow(/createdAt.from/);
    expect(() => compileFilters({ tier: [] })).toThrow(/tier/);
    expect(() => compileFilters([])).toThrow(/filters/);
  });
});
