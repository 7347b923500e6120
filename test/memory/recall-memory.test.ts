import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError, type Engram } from '../../lib/index.js';
import { openTemp } from '../helpers.js';

let engram: Engram;

beforeEach(async () => {
  engram = await openTemp();
});
afterEach(async () => {
  await engram.close();
});

describe('Recall', () => {
  it('textSearch() ranks by BM25, case-insensitive, ignoring punctuation', async () => {
    const chat = engram.conversation('t1', { agentId: 'a1', userId: 'u1' });
    await chat.add([
      { role: 'user', content: 'My sister lives in PARIS.' },
      { role: 'user', content: 'Paris, paris, Paris! I love Paris in spring.' },
      { role: 'assistant', content: 'Rome is nice too.' },
      { role: 'user', content: 'Shopping list: milk, eggs.' },
    ]);
    const { results, total } = await engram.recall.textSearch('paris!!');
    expect(total).toBe(2);
    expect(results[0]!.content).toMatch(/I love Paris/);
    expect(results[1]!.content).toMatch(/sister/);
    expect(results[0]).toMatchObject({ role: 'user', threadId: 't1' });
    expect(new Date(results[0]!.timestamp).toISOString()).toBe(results[0]!.timestamp);
    expect((await engram.recall.textSearch('MILK')).results.map((r) => r.content)).toEqual([
      'Shopping list: milk, eggs.',
    ]);
    expect((await engram.recall.textSearch('nothing-matches-this')).total).toBe(0);
    expect((await engram.recall.textSearch('   ')).total).toBe(0);
  });

  it('textSearch() pages with start and count and reports the total', async () => {
    const chat = engram.conversation('t1');
    await chat.add(
      Array.from({ length: 25 }, (_, i) => ({ role: 'user' as const, content: `note number ${i} about gardening` })),
    );
    const page1 = await engram.recall.textSearch('gardening', { count: 10 });
    const page3 = await engram.recall.textSearch('gardening', { count: 10, start: 20 });
    expect(page1.total).toBe(25);
    expect(page1.results).toHaveLength(10);
    expect(page3.results).toHaveLength(5);
    const all = await engram.recall.textSearch('gardening', { count: 100 });
    expect(new Set(all.results.map((r) => r.id)).size).toBe(25);
  });

  it('textSearch() filters by thread, agent, user and role', async () => {
    await engram.conversation('t1', { agentId: 'a1', userId: 'u1' }).add([
      { role: 'user', content: 'budget meeting monday' },
      { role: 'assistant', content: 'noted the budget meeting' },
    ]);
    await engram
      .conversation('t2', { agentId: 'a2', userId: 'u2' })
      .add({ role: 'user', content: 'budget for the trip' });
    const r = engram.recall;
    expect((await r.textSearch('budget')).total).toBe(3);
    expect((await r.textSearch('budget', { threadId: 't2' })).results.map((x) => x.content)).toEqual([
      'budget for the trip',
    ]);
    expect((await r.textSearch('budget', { agentId: 'a1' })).total).toBe(2);
    expect((await r.textSearch('budget', { userId: 'u2' })).total).toBe(1);
    expect((await r.textSearch('budget', { agentId: 'a1', role: 'assistant' })).results.map((x) => x.content)).toEqual([
      'noted the budget meeting',
    ]);
  });

  it('textSearch() forgets deleted messages', async () => {
    const chat = engram.conversation('t1');
    const m = await chat.add({ role: 'user', content: 'secret plan' });
    expect((await engram.recall.textSearch('secret')).total).toBe(1);
    await chat.delete(m.id);
    expect((await engram.recall.textSearch('secret')).total).toBe(0);
  });

  it('dateSearch() returns an inclusive range oldest first with a total', async () => {
    const chat = engram.conversation('t1', { userId: 'u' });
    const day = Date.UTC(2026, 4, 1);
    await chat.add([
      { role: 'user', content: 'd0', createdAt: day },
      { role: 'user', content: 'd1', createdAt: new Date(day + 86_400_000) },
      { role: 'assistant', content: 'd2', createdAt: new Date(day + 2 * 86_400_000).toISOString() },
      { role: 'user', content: 'd3', createdAt: day + 3 * 86_400_000 },
    ]);
    await engram.conversation('t2').add({ role: 'user', content: 'other', createdAt: day + 86_400_000 });
    const r = await engram.recall.dateSearch(day + 86_400_000, new Date(day + 2 * 86_400_000));
    expect(r.results.map((x) => x.content)).toEqual(['d1', 'other', 'd2']);
    expect(r.total).toBe(3);
    const t1 = await engram.recall.dateSearch(new Date(day).toISOString(), day + 3 * 86_400_000, {
      threadId: 't1',
      start: 1,
      count: 2,
    });
    expect(t1.results.map((x) => x.content)).toEqual(['d1', 'd2']);
    expect(t1.total).toBe(4);
    expect(
      (await engram.recall.dateSearch(day, day + 10 * 86_400_000, { role: 'assistant' })).results.map((x) => x.content),
    ).toEqual(['d2']);
    expect((await engram.recall.dateSearch(day + 5, day)).total).toBe(0);
  });

  it('rejects invalid dates, counts and options with ValidationError', async () => {
    const r = engram.recall;
    await expect(r.dateSearch('yesterday-ish', Date.now())).rejects.toThrow(/from/);
    await expect(r.dateSearch(0, Number.NaN)).rejects.toThrow(/to/);
    await expect(r.textSearch('x', { count: -1 })).rejects.toThrow(ValidationError);
    await expect(r.textSearch('x', { count: 1.5 })).rejects.toThrow(/options.count/);
    await expect(r.textSearch('x', { start: -3 })).rejects.toThrow(/options.start/);
    await expect(r.textSearch('x', { colour: 'red' } as never)).rejects.toThrow(/options.colour/);
    await expect(r.textSearch(5 as unknown as string)).rejects.toThrow(/query/);
  });
});
