// Real IndexedDB in real Chromium: persistence, two instances, text search.
import { describe, expect, it } from 'vitest';
import { Engram, ValidationError } from '../lib/index.js';

const unique = (p: string): string => `${p}-${Date.now()}-${Math.random().toString(36).slice(2)}`;

describe('Engram in Chromium', () => {
  it("runs against the browser's own IndexedDB", () => {
    expect(navigator.userAgent).toMatch(/Chrome/);
    expect(indexedDB.constructor.name).toBe('IDBFactory');
  });

  it('open() keeps messages and blocks across close and reopen', async () => {
    const name = unique('persist');
    const a = await Engram.open({ name });
    const chat = a.conversation('t1', { agentId: 'ag' });
    await chat.add([
      { role: 'system', content: 'persona' },
      { role: 'user', content: 'My locker code is 4471' },
    ]);
    await chat.trimMessages(1);
    await a.blocks('ag').set('human', 'Likes jazz');
    await a.close();
    const b = await Engram.open({ name });
    expect((await b.conversation('t1').getMessages()).map((m) => m.content)).toEqual(['persona']);
    expect((await b.recall.textSearch('locker code')).results.map((r) => r.content)).toEqual([
      'My locker code is 4471',
    ]);
    expect((await b.blocks('ag').get('human'))?.value).toBe('Likes jazz');
    await b.close();
  });

  it("two instances on one database see each other's writes", async () => {
    const name = unique('shared');
    const a = await Engram.open({ name });
    const b = await Engram.open({ name });
    await a.conversation('t').add({ role: 'user', content: 'from tab a' });
    await b.conversation('t').add({ role: 'user', content: 'from tab b' });
    expect((await a.conversation('t').getMessages()).map((m) => m.content)).toEqual(['from tab a', 'from tab b']);
    expect((await b.recall.textSearch('tab')).total).toBe(2);
    await a.close();
    await b.close();
  });

  it('textSearch() ranks and pages in real IndexedDB; bad input writes nothing', async () => {
    const e = await Engram.open({ name: unique('search') });
    const chat = e.conversation('t', { userId: 'u' });
    await chat.add(
      Array.from({ length: 50 }, (_, i) => ({
        role: 'user' as const,
        content: `entry ${i}: ${i % 5 === 0 ? 'kayak trip kayak' : 'grocery run'}`,
      })),
    );
    const page = await e.recall.textSearch('KAYAK!', { count: 4, userId: 'u' });
    expect(page.total).toBe(10);
    expect(page.results).toHaveLength(4);
    expect(page.results.every((r) => r.content.includes('kayak'))).toBe(true);
    await expect(
      chat.add([
        { role: 'user', content: 'ok' },
        { role: 'user', content: '' },
      ]),
    ).rejects.toThrow(ValidationError);
    expect(await chat.size()).toBe(50);
    await e.close();
  });
});
