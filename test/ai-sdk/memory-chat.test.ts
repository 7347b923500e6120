// The Assistant's loop around the AI SDK's generateText and streamText, with the SDK's
// own mock language model: recall before the turn, store after it. No network.
import { generateText, stepCountIs, streamText } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import type { LanguageModelV3CallOptions, LanguageModelV3Prompt } from '@ai-sdk/provider';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryChat } from '../../lib/ai-sdk/index.js';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import type { Engram } from '../../lib/index.js';
import { openTemp } from '../helpers.js';

let engram: Engram;
beforeEach(async () => {
  engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 256 }) });
});
afterEach(async () => {
  await engram.close();
});

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const STOP = { unified: 'stop', raw: undefined } as const;

/** The prompt as plain role/text pairs. */
function plain(prompt: LanguageModelV3Prompt): { role: string; text: string }[] {
  return prompt.map((m) => ({
    role: m.role,
    text:
      typeof m.content === 'string'
        ? m.content
        : m.content.map((p) => (p.type === 'text' ? p.text : `[${p.type}]`)).join(''),
  }));
}

describe('MemoryChat', () => {
  it('begin() recalls for generateText, end() stores the reply, the tool calls and the statement; other users are not recalled', async () => {
    await engram.add('Ben lives in Lisbon', { userId: 'ben' });
    const chat = new MemoryChat(engram, { threadId: 't1', agentId: 'helper', userId: 'ana', minSimilarity: 0.2 });
    const first = await chat.begin('I live in Porto, by the river');
    expect(first.recalledMemories).toEqual([]);
    const one = await generateText({
      model: new MockLanguageModelV3({
        doGenerate: { content: [{ type: 'text', text: 'Noted.' }], finishReason: STOP, usage: USAGE, warnings: [] },
      }),
      messages: first.messages,
    });
    const firstReport = await first.end(one);
    expect(firstReport.reply).toBe('Noted.');
    expect(firstReport.stored.map((s) => s.memory)).toEqual(['I live in Porto, by the river']);

    const second = await chat.begin('Where do I live, Porto or Lisbon?');
    expect(second.recalledMemories.map((m) => m.memory)).toEqual(['I live in Porto, by the river']);
    const prompts: LanguageModelV3Prompt[] = [];
    let step = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async (options: LanguageModelV3CallOptions) => {
        prompts.push(options.prompt);
        step += 1;
        return step === 1
          ? {
              content: [
                {
                  type: 'tool-call',
                  toolCallId: 'c1',
                  toolName: 'recall_from_memory',
                  input: '{"keywords":["where I live, Porto"],"limit":null}',
                },
              ],
              finishReason: { unified: 'tool-calls', raw: undefined },
              usage: USAGE,
              warnings: [],
            }
          : { content: [{ type: 'text', text: 'You live in Porto.' }], finishReason: STOP, usage: USAGE, warnings: [] };
      },
    });
    const two = await generateText({ model, messages: second.messages, tools: chat.tools(), stopWhen: stepCountIs(3) });
    const report = await second.end(two);

    // The prompt: system message, the recalled memories, the conversation, the question last.
    expect(plain(prompts[0]!)).toEqual([
      { role: 'system', text: 'You are a helpful assistant with long-term memory.' },
      { role: 'system', text: 'Relevant memories:\n- I live in Porto, by the river' },
      { role: 'user', text: 'I live in Porto, by the river' },
      { role: 'assistant', text: 'Noted.' },
      { role: 'user', text: 'Where do I live, Porto or Lisbon?' },
    ]);
    expect(JSON.stringify(prompts)).not.toContain('Lisbon"'); // Ben's memory is not there (only Ana's question names Lisbon)
    expect(JSON.stringify(prompts)).not.toContain('Ben');
    expect(report).toMatchObject({
      reply: 'You live in Porto.',
      stored: [],
      toolUses: [
        {
          name: 'recall_from_memory',
          arguments: '{"keywords":["where I live, Porto"],"limit":null}',
          result: '- I live in Porto, by the river',
        },
      ],
    });
    expect(report.timings.totalMs).toBeGreaterThanOrEqual(report.timings.recallMs);
    // The thread holds the turn, the reply carrying what the turn did; a second end() changes nothing.
    expect(await second.end({ text: 'again' })).toBe(report);
    const log = await engram.conversation('t1', { agentId: 'helper', userId: 'ana' }).getMessages();
    expect(log.map((m) => [m.role, m.content])).toEqual([
      ['system', 'You are a helpful assistant with long-term memory.'],
      ['user', 'I live in Porto, by the river'],
      ['assistant', 'Noted.'],
      ['user', 'Where do I live, Porto or Lisbon?'],
      ['assistant', 'You live in Porto.'],
    ]);
    expect(log.at(-1)?.metadata).toMatchObject({
      turn: { recalled: [{ memory: 'I live in Porto, by the river' }], toolUses: [{ name: 'recall_from_memory' }] },
    });
    expect((await engram.getAll({ userId: 'ben' })).results.map((m) => m.memory)).toEqual(['Ben lives in Lisbon']);
  });

  it('streamText({ onFinish: turn.onFinish }) stores the streamed reply', async () => {
    const chat = new MemoryChat(engram, { threadId: 't2', userId: 'ana' });
    const turn = await chat.begin('My favourite colour is green');
    const model = new MockLanguageModelV3({
      doStream: {
        stream: convertArrayToReadableStream([
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'Green ' },
          { type: 'text-delta', id: 't', delta: 'it is.' },
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: STOP, usage: USAGE },
        ]),
      },
    });
    const result = streamText({ model, messages: turn.messages, onFinish: turn.onFinish });
    let streamed = '';
    for await (const chunk of result.textStream) streamed += chunk;
    expect(streamed).toBe('Green it is.');
    const report = await turn.end({ text: 'not this one' }); // the report of onFinish's call
    expect(report.reply).toBe('Green it is.');
    expect(report.stored.map((s) => s.memory)).toEqual(['My favourite colour is green']);
    const log = await engram.conversation('t2', { userId: 'ana' }).getMessages();
    expect(log.at(-1)).toMatchObject({ role: 'assistant', content: 'Green it is.' });
  });

  it('checks its options at the door', () => {
    expect(() => new MemoryChat(engram, { threadId: '' })).toThrow(/options.threadId/);
    expect(() => new MemoryChat(engram, { threadId: 't', remember: 'some' as 'all' })).toThrow(/options.remember/);
    expect(() => new MemoryChat(engram, { threadId: 't', model: 'x' } as never)).toThrow(/unknown option|model/);
  });
});
