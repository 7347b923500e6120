import { describe, expect, it } from 'vitest';
import { ScopeTable } from '../../lib/engine/vectors/scope-table.js';
import { compileFilters } from '../../lib/search/filters.js';
import type { MemoryRow } from '../../lib/store/rows.js';
import { rng } from '../helpers.js';

function row(id: string, random: () => number): MemoryRow {
  const pick = (p: string, n: number): string | undefined =>
    random() < 0.8 ? `${p}${Math.floor(random() * n)}` : undefined;
  const r: MemoryRow = {
    id,
    text: id,
    tier: random() < 0.5 ? 'long_term' : 'project',
    metadata: {},
    hash: id,
    createdAt: 1,
    updatedAt: 1,
    accessCount: 0,
    version: 1,
    origin: 'd',
  };
  const userId = pick('u', 4);
  const agentId = pick('a', 3);
  const runId = pick('r', 2);
  if (userId !== undefined) r.userId = userId;
  if (agentId !== undefined) r.agentId = agentId;
  if (runId !== undefined) r.runId = runId;
  if (random() < 0.1) r.expiresAt = 50;
  return r;
}

/** What matching() must return: every entry checked. */
function brute(rows: Map<string, MemoryRow>, scope: Record<string, string>, now: number): Set<string> {
  const filter = compileFilters({}, scope);
  return new Set([...rows.values()].filter((r) => filter.matchesEntry(r, now)).map((r) => r.id));
}

describe('ScopeTable', () => {
  it('matching() returns exactly the entries a full check returns, through sets, replacements, deletes and a snapshot', () => {
    const random = rng(8);
    const table = new ScopeTable();
    const rows = new Map<string, MemoryRow>();
    const scopes: Record<string, string>[] = [
      {},
      { userId: 'u1' },
      { userId: 'u2', agentId: 'a0' },
      { agentId: 'a2', runId: 'r1' },
      { userId: 'nobody' },
    ];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 400; i++) {
        const r = row(`m${Math.floor(random() * 600)}`, random);
        rows.set(r.id, r);
        table.set(r);
      }
      for (const id of [...rows.keys()].filter(() => random() < 0.1)) {
        rows.delete(id);
        table.delete(id);
      }
      for (const scope of scopes) {
        for (const now of [10, 100])
          expect(table.matching(compileFilters({}, scope), now), JSON.stringify(scope)).toEqual(
            brute(rows, scope, now),
          );
      }
    }
    const copy = ScopeTable.fromTuples(table.toTuples());
    const columns = ScopeTable.fromColumns(table.toColumns())!;
    for (const scope of scopes) expect(columns.matching(compileFilters({}, scope), 10)).toEqual(brute(rows, scope, 10));
    const replaced = new ScopeTable();
    replaced.set(row('stale', random));
    replaced.replaceWith(copy);
    for (const scope of scopes) {
      expect(copy.matching(compileFilters({}, scope), 10)).toEqual(brute(rows, scope, 10));
      expect(replaced.matching(compileFilters({}, scope), 10)).toEqual(brute(rows, scope, 10));
    }
    table.clear();
    expect(table.matching(compileFilters({}, { userId: 'u1' }), 10).size).toBe(0);
  });

  it('matching() of one scope value leaves out expired entries and applies tier and date conditions beside it', () => {
    const table = new ScopeTable();
    const base: MemoryRow = {
      id: '',
      text: '',
      tier: 'long_term',
      metadata: {},
      hash: '',
      createdAt: 1,
      updatedAt: 1,
      accessCount: 0,
      version: 1,
      origin: 'd',
      userId: 'ana',
    };
    table.set({ ...base, id: 'a' });
    table.set({ ...base, id: 'b', tier: 'project', createdAt: 5 });
    table.set({ ...base, id: 'c', expiresAt: 50 });
    table.set({ ...base, id: 'd', userId: 'bo', expiresAt: 20 });
    const ids = (filters: object, now: number): string[] => [...table.matching(compileFilters(filters), now)].sort();
    expect(ids({ userId: 'ana' }, 10)).toEqual(['a', 'b', 'c']);
    // Another user's entry expiring changes nothing for ana; her own expiring does.
    expect(ids({ userId: 'ana' }, 30)).toEqual(['a', 'b', 'c']);
    expect(ids({ userId: 'ana' }, 60)).toEqual(['a', 'b']);
    expect(ids({ userId: 'ana', tier: 'project' }, 10)).toEqual(['b']);
    expect(ids({ userId: 'ana', createdAt: { to: 2 } }, 10)).toEqual(['a', 'c']);
    table.delete('c');
    expect(ids({ userId: 'ana' }, 60)).toEqual(['a', 'b']);
    expect(ids({ userId: 'bo' }, 30)).toEqual([]);
  });

  it('withStatement() returns exactly the ids recorded with a statement key, through sets, replacements, deletes and a snapshot', () => {
    const random = rng(9);
    const table = new ScopeTable();
    const statements = new Map<string, number | undefined>();
    for (let i = 0; i < 2000; i++) {
      const id = `m${Math.floor(random() * 500)}`;
      if (random() < 0.15) {
        table.delete(id);
        statements.delete(id);
        continue;
      }
      const statement = random() < 0.2 ? undefined : Math.floor(random() * 40);
      table.set(row(id, random), statement);
      statements.set(id, statement);
    }
    const expected = (key: number): Set<string> =>
      new Set([...statements].filter(([, s]) => s === key).map(([id]) => id));
    const copy = ScopeTable.fromTuples(table.toTuples());
    const columns = ScopeTable.fromColumns(table.toColumns())!;
    for (let k = 0; k < 41; k++) {
      expect(new Set(table.withStatement(k))).toEqual(expected(k));
      expect(new Set(copy.withStatement(k))).toEqual(expected(k));
      expect(new Set(columns.withStatement(k))).toEqual(expected(k));
    }
    // Columns that do not hold together are refused, not half read.
    const good = table.toColumns();
    expect(ScopeTable.fromColumns({ ...good, codes: good.codes.subarray(1) })).toBeUndefined();
    expect(ScopeTable.fromColumns({ ...good, strings: [] })).toBeUndefined();
    expect(ScopeTable.fromColumns({ ...good, ids: good.ids.map(() => 7) })).toBeUndefined();
    expect(ScopeTable.fromColumns(null)).toBeUndefined();
    table.clear();
    expect(table.withStatement(1).size).toBe(0);
  });
});
