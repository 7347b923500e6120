import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import type { ChatTurn } from '../../lib/llm/chat-model.js';
import { Assistant, MAX_TOOL_CALLS_PER_ROUND, type Engram } from '../../lib/index.js';
import { openTemp } from '../helpers.js';
import { startScriptedServer } from '../llm/scripted-server.js';

let engram: Engram;
beforeEach(async () => {
  engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 256 }) });
});
afterEach(async () => {
  await engram.close();
});

describe('Assistant', () => {
  it('send() stores the turn, recalls memories for the next reply and reports timings', async () => {
    const seen: ChatTurn[][] = [];
    const bot = new Assistant(engram, {
      threadId: 't1',
      userId: 'ana',
      minSimilarity: 0.3,
      model: async (messages) => {
        seen.push(messages);
        return `ok ${seen.length}`;
      },
    });
    const first = await bot.send('My name is Ana and I live in Porto');
    expect(first.reply).toBe('ok 1');
    expect(first.stored.map((s) => s.memory)).toEqual(['My name is Ana and I live in Porto']);
    expect(first.timings.totalMs).toBeGreaterThanOrEqual(first.timings.modelMs);
    const second = await bot.send('Where do I live, Porto or Lisbon?');
    expect(second.recalledMemories.map((m) => m.memory)).toContain('My name is Ana and I live in Porto');
    expect(second.recalled).toContain('Relevant memories:');
    const prompt = seen[1]!;
    expect(prompt[0]).toEqual({ role: 'system', content: 'You are a helpful assistant with long-term memory.' });
    expect(prompt[1]!.content).toContain('I live in Porto');
    expect(prompt.at(-1)).toEqual({ role: 'user', content: 'Where do I live, Porto or Lisbon?' });
    expect(second.stored).toEqual([]); // a question is not a memory
    const log = await engram.conversation('t1').getMessages();
    expect(log.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
    const turn = log[4]!.metadata!['turn'] as {
      recalled: { memory: string }[];
      stored: unknown[];
      timings: { totalMs: number };
    };
    expect(turn.recalled.map((r) => r.memory)).toContain('My name is Ana and I live in Porto');
    expect(turn.stored).toEqual([]);
    expect(turn.timings.totalMs).toBeGreaterThan(0);
    const other = new Assistant(engram, { threadId: 't2', userId: 'bo', minSimilarity: 0.3, model: async () => 'hi' });
    expect((await other.send('Where do I live, Porto or Lisbon?')).recalledMemories).toEqual([]);
  });

  it('send() lets the model call memory tools against an OpenAI-compatible server (hybrid)', async () => {
    const server = await startScriptedServer([
      {
        content: '',
        toolCalls: [{ id: 'c1', name: 'core_memory_append', arguments: '{"label":"human","content":"Name: Ana"}' }],
      },
      { content: 'Nice to meet you, Ana!' },
    ]);
    const bot = new Assistant(engram, {
      threadId: 't',
      agentId: 'helper',
      tools: true,
      model: { baseUrl: server.baseUrl, model: 'scripted' },
    });
    const turn = await bot.send('Hi, I am Ana');
    expect(turn.reply).toBe('Nice to meet you, Ana!');
    expect(turn.toolUses).toEqual([
      {
        name: 'core_memory_append',
        arguments: '{"label":"human","content":"Name: Ana"}',
        result: 'Block "human" now reads:\nName: Ana',
      },
    ]);
    expect((await engram.blocks('helper').get('human'))!.value).toBe('Name: Ana');
    expect(server.requests[0]!.tools).toHaveLength(8);
    expect(server.requests[1]!.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: 'Block "human" now reads:\nName: Ana',
    });
    await server.close();
  });

  it('send() streams the reply through onDelta; a stalled model stores nothing and the turn can be sent again', async () => {
    const server = await startScriptedServer([
      { stream: ['I live'], stallAfter: 1 },
      { stream: ['Noted', ': you live in Porto.'] },
    ]);
    const bot = new Assistant(engram, {
      threadId: 't',
      userId: 'ana',
      model: { baseUrl: server.baseUrl, model: 'scripted', idleTimeoutMs: 200 },
    });
    const seen: string[] = [];
    await expect(bot.send('I live in Porto', { onDelta: (t) => seen.push(t) })).rejects.toMatchObject({
      name: 'LlmError',
      reason: 'stalled',
    });
    expect(seen).toEqual(['I live']);
    // Nothing of the failed turn: no message (not even the thread's system message), no memory.
    expect(await engram.conversation('t').getMessages()).toEqual([]);
    expect((await engram.getAll({ userId: 'ana' })).total).toBe(0);

    const deltas: string[] = [];
    const turn = await bot.send('I live in Porto', { onDelta: (t) => deltas.push(t) });
    expect(deltas).toEqual(['Noted', ': you live in Porto.']);
    expect(turn.reply).toBe('Noted: you live in Porto.');
    const log = await engram.conversation('t').getMessages();
    expect(log.map((m) => [m.role, m.content])).toEqual([
      ['system', 'You are a helpful assistant with long-term memory.'],
      ['user', 'I live in Porto'],
      ['assistant', 'Noted: you live in Porto.'],
    ]);
    expect((await engram.getAll({ userId: 'ana' })).results.map((m) => m.memory)).toEqual(['I live in Porto']);
    // The retry's prompt is the first attempt's: system prompt, then the user's message, once.
    expect(server.requests[1]!.messages.map((m) => m.role)).toEqual(['system', 'user']);
    await server.close();
  });

  it('send() aborted by its signal stores nothing', async () => {
    const controller = new AbortController();
    const bot = new Assistant(engram, {
      threadId: 't',
      model: (_messages, options) =>
        new Promise((_resolve, reject) => {
          options?.signal?.addEventListener('abort', () => {
            reject(new Error('aborted'));
          });
          controller.abort();
        }),
    });
    await expect(bot.send('I like tea', { signal: controller.signal })).rejects.toThrow();
    expect(await engram.conversation('t').getMessages()).toEqual([]);
    expect((await engram.getAll()).total).toBe(0);
  });
});

describe('contextWindow', () => {
  it('contextWindow() keeps the system message, core memory and the newest messages that fit', async () => {
    await engram.blocks('helper').set('human', 'Name: Ana');
    const chat = engram.conversation('t', { agentId: 'helper' });
    await chat.add({ role: 'system', content: 'You are helpful.' });
    const ids = (
      await chat.add(
        Array.from({ length: 10 }, (_, i) => ({ role: 'user' as const, content: `message ${i} `.repeat(10) })),
      )
    ).map((m) => m.id);
    const window = await chat.contextWindow({ maxTokens: 120 });
    expect(window.messages[0]).toEqual({ role: 'system', content: 'You are helpful.' });
    expect(window.messages[1]!.content).toContain('<human characters="9/2000">\nName: Ana\n</human>');
    const kept = window.messages.slice(2).map((m) => m.content);
    expect(kept.at(-1)).toContain('message 9');
    expect(kept.length).toBeGreaterThan(0);
    expect(window.tokens).toBeLessThanOrEqual(120);
    expect(window.omitted.messages + kept.length).toBe(10);
    expect(window.omitted.ids).toEqual(ids.slice(0, window.omitted.messages));
    expect(window.overBudget).toBe(false);
    expect((await chat.contextWindow({ maxTokens: 5 })).overBudget).toBe(true);
    await expect(chat.contextWindow({ maxTokens: 0 })).rejects.toThrow(/maxTokens/);
  });
});

describe('Assistant against a hostile model', () => {
  it(`send() runs at most MAX_TOOL_CALLS_PER_ROUND tool calls of one reply and answers the rest with an error`, async () => {
    const calls = Array.from({ length: MAX_TOOL_CALLS_PER_ROUND + 3 }, (_, i) => ({
      id: `c${i}`,
      name: 'archival_memory_insert',
      arguments: JSON.stringify({ content: `Passage number ${i}` }),
    }));
    const seen: ChatTurn[][] = [];
    const bot = new Assistant(engram, {
      threadId: 't',
      agentId: 'helper',
      tools: true,
      model: async (messages) => {
        seen.push([...messages]);
        return seen.length === 1 ? { content: '', toolCalls: calls } : 'done';
      },
    });
    const turn = await bot.send('Remember all of this');
    expect(turn.reply).toBe('done');
    expect(turn.toolUses).toHaveLength(calls.length);
    expect(
      turn.toolUses.slice(0, MAX_TOOL_CALLS_PER_ROUND).every((u) => u.result === 'Inserted into archival memory.'),
    ).toBe(true);
    for (const use of turn.toolUses.slice(MAX_TOOL_CALLS_PER_ROUND)) {
      expect(use.result).toBe(
        `Error: archival_memory_insert: not run: one reply may call at most ${MAX_TOOL_CALLS_PER_ROUND} tools and this one called ${calls.length}; call it again in your next reply if it is still needed.`,
      );
    }
    // Every call id gets its answer, as chat APIs require.
    expect(seen[1]!.filter((m) => m.role === 'tool').map((m) => m.toolCallId)).toEqual(calls.map((c) => c.id));
    const passages = (await engram.getAll({ agentId: 'helper' })).results.filter((m) =>
      m.memory.startsWith('Passage number'),
    );
    expect(passages.map((m) => m.memory).sort()).toEqual(
      calls
        .slice(0, MAX_TOOL_CALLS_PER_ROUND)
        .map((_, i) => `Passage number ${i}`)
        .sort(),
    );
  });
});
