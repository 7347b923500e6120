import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { ValidationError, type Engram } from '../../lib/index.js';
import { openTemp } from '../helpers.js';

let engram: Engram;
beforeEach(async () => {
  engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 128 }) });
});
afterEach(async () => {
  await engram.close();
});

describe('PersistentMemory', () => {
  it('record() stores turns and retrieve() returns a context block of relevant ones', async () => {
    const memory = engram.persistent({ agentId: 'helper', userId: 'ana' });
    expect(
      await memory.record([
        { role: 'system', content: 'be nice' },
        { role: 'user', content: 'I am vegetarian and love spicy food' },
        { role: 'assistant', content: 'Noted: vegetarian, spicy food' },
      ]),
    ).toBe(2);
    const context = await memory.retrieve('vegetarian spicy food ideas', { minSimilarity: 0.2 });
    expect(context.startsWith('Relevant memories:\n- ')).toBe(true);
    expect(context).toContain('I am vegetarian and love spicy food');
    expect(await memory.retrieve('quantum chromodynamics lecture', { minSimilarity: 0.2 })).toBe('');
    const fromMessages = await memory.retrieve([{ role: 'user', content: 'any vegetarian spicy food tonight?' }], {
      minSimilarity: 0.2,
    });
    expect(fromMessages).toContain('vegetarian');
  });

  it('retrieve() is scoped: another user never sees these memories', async () => {
    await engram.persistent({ userId: 'ana' }).record([{ role: 'user', content: 'my bank pin is 1234' }]);
    expect(await engram.persistent({ userId: 'bo' }).retrieve('my bank pin is 1234', { minSimilarity: 0 })).toBe('');
    expect(await engram.persistent({ userId: 'ana' }).retrieve('my bank pin is 1234', { minSimilarity: 0 })).toContain(
      '1234',
    );
  });

  it('saveToMemory() and recallFromMemory() work as agent tools', async () => {
    const memory = engram.persistent({ agentId: 'helper' });
    const saved = await memory.saveToMemory({
      thinking: 'worth keeping',
      content: ['User prefers metric units', 'User birthday is 4 May'],
    });
    expect(saved).toMatchObject({ success: true, message: 'Saved 2 new memories (0 already known).' });
    const again = await memory.saveToMemory({ thinking: '', content: ['User prefers metric units'] });
    expect(again.message).toBe('Saved 0 new memories (1 already known).');
    const recalled = await memory.recallFromMemory({ keywords: ['metric units', 'birthday'], limit: 1 });
    expect(recalled.success).toBe(true);
    expect(recalled.memories).toEqual(['User prefers metric units', 'User birthday is 4 May']);
    await expect(memory.saveToMemory({ content: [] })).rejects.toThrow(ValidationError);
    await expect(memory.recallFromMemory({ keywords: 'x' as never })).rejects.toThrow(ValidationError);
  });
});

describe('Archival', () => {
  it('insert() and search() page through passages in MemGPT shape', async () => {
    const archive = engram.archival('helper');
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await archive.insert(`passage ${i} about the lighthouse keeper`, { n: i }));
    await engram.archival('other').insert('passage about the lighthouse keeper in another archive');
    expect(await archive.insert('passage 0 about the lighthouse keeper')).toBe(ids[0]);
    const page1 = await archive.search('lighthouse keeper', { count: 5 });
    const page3 = await archive.search('lighthouse keeper', { count: 5, start: 10 });
    expect(page1.total).toBe(12);
    expect(page1.results).toHaveLength(5);
    expect(page3.results).toHaveLength(2);
    expect(page1.results[0]).toEqual({
      id: expect.any(String) as string,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string,
      content: expect.stringContaining('lighthouse') as string,
    });
    const all = [
      ...page1.results,
      ...(await archive.search('lighthouse keeper', { count: 5, start: 5 })).results,
      ...page3.results,
    ];
    expect(new Set(all.map((r) => r.id))).toEqual(new Set(ids));
    await expect(archive.search('x', { count: 0 })).rejects.toThrow(ValidationError);
  });
});
