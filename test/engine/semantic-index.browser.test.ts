// Semantic memory end to end in real Chromium: the offline model in a Web Worker,
// HNSW/exact index in real WASM, snapshot in real IndexedDB, tiers and export.
import { describe, expect, it } from 'vitest';
import { AgentTools, Assistant, Engram, HashEmbedder } from '../../lib/index.js';

const unique = (p: string): string => `${p}-${Date.now()}-${Math.random().toString(36).slice(2)}`;

describe('semantic memory in Chromium', () => {
  it('add() / search() with the offline model in a worker, persisted across reopen', async () => {
    const name = unique('semantic');
    const a = await Engram.open({ name });
    const ready = await a.ready();
    expect(ready).toMatchObject({ embedderId: 'engram-glove-100d', dimensions: 100, index: 'empty' });
    await a.add('The user is allergic to peanuts and shellfish', { userId: 'ana' });
    await a.add('The user plays the violin in a community orchestra', { userId: 'ana' });
    await a.add('Quarterly sales figures were published on Monday', { userId: 'ana' });
    await a.add('The user is allergic to peanuts and shellfish', { userId: 'bo' });
    const food = await a.search('what food must she avoid', { userId: 'ana', mode: 'vector', limit: 1 });
    expect(food.results[0]!.memory).toBe('The user is allergic to peanuts and shellfish');
    expect(food.results[0]!.userId).toBe('ana');
    const music = await a.search('musical instrument hobby', { userId: 'ana', limit: 1 });
    expect(music.results[0]!.memory).toContain('violin');
    await a.close();

    const b = await Engram.open({ name });
    expect(await b.ready()).toMatchObject({ index: 'snapshot', size: 4 });
    const again = await b.search('instrument', { userId: 'ana', mode: 'vector', limit: 1 });
    expect(again.results[0]!.memory).toContain('violin');
    const context = await b
      .persistent({ userId: 'ana' })
      .retrieve('any allergies I should know about before cooking dinner?');
    expect(context).toContain('peanuts');
    await b.close();
  });

  it('tiers, tools and an export/import round trip work over real IndexedDB', async () => {
    const embedder = (): HashEmbedder => new HashEmbedder({ dimensions: 64 });
    const e = await Engram.open({ name: unique('tiers'), embedder: embedder() });
    const mem = e.system({ sessionId: 's', projectId: 'p' });
    await mem.remember('goal', 'ship the beta', { tier: 'project' });
    await mem.addTrace('plan', 'start with tests');
    expect(await mem.recall('goal')).toBe('ship the beta');
    expect(
      await new AgentTools(e, { agentId: 'a' }).call('core_memory_append', { label: 'human', content: 'Likes tea' }),
    ).toContain('Likes tea');
    const file = await e.export();
    await e.close();
    const copy = await Engram.import(file, { name: unique('copy'), mode: 'replace', embedder: embedder() });
    expect(await copy.system({ sessionId: 's', projectId: 'p' }).recall('goal')).toBe('ship the beta');
    expect((await copy.system({ sessionId: 's', projectId: 'p' }).getTrace()).map((t) => t.step)).toEqual(['plan']);
    expect((await copy.blocks('a').get('human'))?.value).toBe('Likes tea');
    await copy.close();
  });

  it('assistant turns, the context window and LLM fact extraction run in the browser', async () => {
    const replies = [
      JSON.stringify({ facts: ['Lives in Porto'] }),
      JSON.stringify({ memory: [{ id: 'new', text: 'Lives in Porto', event: 'ADD' }] }),
      JSON.stringify({ facts: ['Moved to Lisbon'] }),
      JSON.stringify({ memory: [{ id: '0', text: 'Lives in Lisbon', event: 'UPDATE', old_memory: 'Lives in Porto' }] }),
    ];
    const e = await Engram.open({
      name: unique('llm'),
      embedder: new HashEmbedder({ dimensions: 128 }),
      llm: async () => replies.shift() ?? '{}',
    });
    const first = await e.add([{ role: 'user', content: 'I live in Porto' }], {
      userId: 'ana',
      agentId: 'helper',
      infer: true,
    });
    expect(first.results.map((r) => r.event)).toEqual(['ADD']);
    const second = await e.add([{ role: 'user', content: 'I moved to Lisbon' }], {
      userId: 'ana',
      agentId: 'helper',
      infer: true,
    });
    expect(second.results[0]).toMatchObject({ event: 'UPDATE', memory: 'Lives in Lisbon', previous: 'Lives in Porto' });
    const bot = new Assistant(e, {
      threadId: 't',
      agentId: 'helper',
      userId: 'ana',
      minSimilarity: 0.2,
      model: async (messages) => `seen ${messages.length} messages`,
    });
    await e.blocks('helper').set('human', 'Name: Ana');
    const turn = await bot.send('Tell me where Ana lives in Lisbon');
    expect(turn.recalledMemories.map((m) => m.memory)).toContain('Lives in Lisbon');
    const window = await e.conversation('t', { agentId: 'helper' }).contextWindow({ maxTokens: 500 });
    expect(window.messages.map((m) => m.role)).toEqual(['system', 'system', 'user', 'assistant']);
    expect(window.messages[1]!.content).toContain('Name: Ana');
    await e.close();
  });
});
