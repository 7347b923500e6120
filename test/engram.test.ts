import { describe, expect, it } from 'vitest';
import { ClosedError, Engram, ValidationError } from '../lib/index.js';
import { EngramDb } from '../lib/store/schema.js';

describe('Engram', () => {
  it('open() validates options', async () => {
    await expect(Engram.open({ name: '' })).rejects.toThrow(ValidationError);
    await expect(Engram.open({ name: 'x', maxContentBytes: 0 })).rejects.toThrow(/maxContentBytes/);
    await expect(Engram.open({ name: 'x', bogus: 1 } as never)).rejects.toThrow(/options.bogus/);
    await expect(Engram.open(null as never)).rejects.toThrow(ValidationError);
  });

  it('close() is idempotent and later calls reject with ClosedError', async () => {
    const e = await Engram.open({ name: 'close-test' });
    await e.close();
    await e.close();
    expect(e.closed).toBe(true);
    expect(() => e.recall).toThrow(ClosedError);
    expect(() => e.blocks('a')).toThrow(ClosedError);
  });

  it('open() persists across close and reopen, with a stable device id', async () => {
    const a = await Engram.open({ name: 'persist-test' });
    await a.conversation('t').add({ role: 'user', content: 'remember the lighthouse' });
    await a.blocks('ag').set('human', 'Ana');
    await a.close();
    const b = await Engram.open({ name: 'persist-test' });
    expect((await b.recall.textSearch('lighthouse')).total).toBe(1);
    expect((await b.blocks('ag').get('human'))!.value).toBe('Ana');
    await b.close();
  });

  it("two instances on one name see each other's writes", async () => {
    const a = await Engram.open({ name: 'shared-test' });
    const b = await Engram.open({ name: 'shared-test' });
    await a.conversation('t').add({ role: 'user', content: 'written by a' });
    expect((await b.conversation('t').getMessages()).map((m) => m.content)).toEqual(['written by a']);
    await b.conversation('t').add({ role: 'assistant', content: 'written by b' });
    expect(await a.conversation('t').size()).toBe(2);
    await a.close();
    await b.close();
  });

  it('open() rejects a store written by a newer schema', async () => {
    const db = new EngramDb('future-test');
    await db.open();
    await db.meta.put({ key: 'schemaVersion', value: 99 });
    db.close();
    await expect(Engram.open({ name: 'future-test' })).rejects.toThrow(/newer than this engram/);
  });
});
