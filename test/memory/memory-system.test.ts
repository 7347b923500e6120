import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { ValidationError, type Engram } from '../../lib/index.js';
import { manualClock, openTemp } from '../helpers.js';

let engram: Engram;
let clock: ReturnType<typeof manualClock>;

beforeEach(async () => {
  clock = manualClock();
  engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 64 }), now: () => clock.now() });
});
afterEach(async () => {
  await engram.close();
});

describe('MemorySystem', () => {
  it('remember() / recall() per tier, recall looks short-term, then project, then long-term', async () => {
    const mem = engram.system({ sessionId: 's1', projectId: 'apollo' });
    await mem.remember('goal', 'global goal', { tier: 'long_term' });
    expect(await mem.recall('goal')).toBe('global goal');
    await mem.remember('goal', { text: 'ship beta', due: 3 }, { tier: 'project' });
    expect(await mem.recall('goal')).toEqual({ text: 'ship beta', due: 3 });
    await mem.remember('goal', 'finish this call');
    expect(await mem.recall('goal')).toBe('finish this call');
    expect(await mem.recall('goal', { tier: 'long_term' })).toBe('global goal');
    expect(await mem.recall('missing')).toBeUndefined();
    await mem.remember('goal', 'ship GA', { tier: 'project' });
    expect(await mem.recall('goal', { tier: 'project' })).toBe('ship GA');
    expect((await mem.retrieveAllProject()).map((m) => m.value)).toEqual(['ship GA']);
  });

  it('short-term entries expire after their TTL and are gone on read', async () => {
    const mem = engram.system({ sessionId: 's1', ttlMs: 1000 });
    await mem.remember('draft', 'v1');
    await mem.remember('pinned', 'long', { ttlMs: 10_000 });
    clock.advance(999);
    expect(await mem.recall('draft')).toBe('v1');
    clock.advance(1);
    expect(await mem.recall('draft')).toBeUndefined();
    expect(await mem.recall('pinned')).toBe('long');
    expect((await mem.getContext()).recentShortTerm.map((m) => m.key)).toEqual(['pinned']);
    expect((await engram.getAll({ filters: { tier: 'short_term' } })).results.map((m) => m.key)).toEqual(['pinned']);
  });

  it('short-term keeps maxEntries, evicting the least recently used, and counts accesses', async () => {
    const mem = engram.system({ sessionId: 's1', maxEntries: 3 });
    for (const k of ['a', 'b', 'c']) {
      await mem.remember(k, `value ${k}`);
      clock.advance(10);
    }
    expect(await mem.recall('a')).toBe('value a'); // a is now the most recently used
    clock.advance(10);
    await mem.remember('d', 'value d');
    expect(await mem.recall('b')).toBeUndefined();
    expect(await mem.recall('a')).toBe('value a');
    expect(await mem.recall('c')).toBe('value c');
    const stored = (await engram.getAll({ filters: { sessionId: 's1' } })).results;
    expect(stored.map((m) => m.key).sort()).toEqual(['a', 'c', 'd']);
    const history = await engram.history(stored.find((m) => m.key === 'a')!.id);
    expect(history.map((h) => h.op)).toEqual(['ADD']); // reads are not history
  });

  it('addTrace() / getTrace() keep the newest steps of the session', async () => {
    const mem = engram.system({ sessionId: 's1', maxEntries: 3 });
    for (let i = 0; i < 5; i++) {
      await mem.addTrace(`step ${i}`, `thinking ${i}`, { source: i }, 0.5);
      clock.advance(1);
    }
    const trace = await mem.getTrace();
    expect(trace.map((t) => t.step)).toEqual(['step 2', 'step 3', 'step 4']);
    expect(trace[0]).toMatchObject({ thinking: 'thinking 2', evidence: { source: 2 }, confidence: 0.5 });
    expect(await engram.system({ sessionId: 's2' }).getTrace()).toEqual([]);
    await expect(mem.addTrace('x', 'y', undefined, 2)).rejects.toThrow(/confidence/);
  });

  it('getContext() gathers recent entries and the trace', async () => {
    const mem = engram.system({ sessionId: 's1', projectId: 'p' });
    await mem.remember('k1', 'short one');
    clock.advance(1);
    await mem.remember('k2', 'short two');
    await mem.remember('plan', 'project plan', { tier: 'project' });
    await mem.addTrace('look', 'checked the plan');
    const ctx = await mem.getContext({ maxEntries: 1 });
    expect(ctx).toMatchObject({ sessionId: 's1', projectId: 'p' });
    expect(ctx.recentShortTerm.map((m) => m.key)).toEqual(['k2']);
    expect(ctx.recentProject.map((m) => m.key)).toEqual(['plan']);
    expect(ctx.reasoningTrace.map((t) => t.step)).toEqual(['look']);
  });

  it('search() spans tiers in their scopes; project tier stays within its project', async () => {
    const a = engram.system({ sessionId: 's1', projectId: 'alpha' });
    const b = engram.system({ sessionId: 's2', projectId: 'beta' });
    await a.remember('db', 'alpha uses postgres database', { tier: 'project' });
    await b.remember('db', 'beta uses sqlite database', { tier: 'project' });
    await a.remember('note', 'database migration tonight');
    await a.remember('pref', 'prefers database dumps gzipped', { tier: 'long_term' });
    const hits = await a.search('database');
    expect(hits.map((h) => h.memory).sort()).toEqual([
      'db: alpha uses postgres database',
      'note: database migration tonight',
      'pref: prefers database dumps gzipped',
    ]);
    expect((await a.searchProject('database')).map((h) => h.memory)).toEqual(['db: alpha uses postgres database']);
    expect(await a.deleteProject()).toBe(1);
    expect(await a.retrieveAllProject()).toEqual([]);
    expect((await b.retrieveAllProject()).map((m) => m.key)).toEqual(['db']);
  });

  it('system() caches per (session, project) and validates', async () => {
    expect(engram.system({ sessionId: 's', projectId: 'p' })).toBe(engram.system({ sessionId: 's', projectId: 'p' }));
    expect(engram.system({ sessionId: 's' })).not.toBe(engram.system({ sessionId: 's', projectId: 'p' }));
    expect(() => engram.system({ sessionId: '' })).toThrow(ValidationError);
    const noProject = engram.system({ sessionId: 's' });
    await expect(noProject.remember('k', 'v', { tier: 'project' })).rejects.toThrow(/projectId/);
    await expect(noProject.remember('k', 'v', { tier: 'forever' as never })).rejects.toThrow(/options.tier/);
    await expect(noProject.remember('', 'v')).rejects.toThrow(/key/);
  });
});
