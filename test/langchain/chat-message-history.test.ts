// An engram thread as LangChain's chat message history, driven by real @langchain/core code:
// RunnableWithMessageHistory around a fake chat model. No network.
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { RunnableWithMessageHistory } from '@langchain/core/runnables';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import type { Engram } from '../../lib/index.js';
import { EngramChatMessageHistory } from '../../lib/langchain/index.js';
import { openTemp } from '../helpers.js';

let engram: Engram;
beforeEach(async () => {
  engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 64 }) });
});
afterEach(async () => {
  await engram.close();
});

const plain = (messages: BaseMessage[]): [string, unknown][] => messages.map((m) => [m.type, m.content]);

describe('EngramChatMessageHistory', () => {
  it('round trip: human, ai with tool calls, tool and system messages come back as they went in, with engram ids', async () => {
    const history = new EngramChatMessageHistory(engram, { threadId: 't1', agentId: 'helper', userId: 'ana' });
    await history.addMessage(new SystemMessage('You are helpful.'));
    await history.addUserMessage('What is the weather in Porto?');
    await history.addMessages([
      new AIMessage({
        content: '',
        tool_calls: [{ id: 'call-1', name: 'weather', args: { city: 'Porto' }, type: 'tool_call' }],
      }),
      new ToolMessage({ content: 'Sunny, 24°C', tool_call_id: 'call-1', name: 'weather' }),
      new AIMessage('Sunny and 24°C in Porto.'),
    ]);
    await history.addUserMessage('Thanks');
    await history.addUserMessage('Thanks'); // said twice: kept twice

    const back = await new EngramChatMessageHistory(engram, {
      threadId: 't1',
      agentId: 'helper',
      userId: 'ana',
    }).getMessages();
    expect(plain(back)).toEqual([
      ['system', 'You are helpful.'],
      ['human', 'What is the weather in Porto?'],
      ['ai', ''],
      ['tool', 'Sunny, 24°C'],
      ['ai', 'Sunny and 24°C in Porto.'],
      ['human', 'Thanks'],
      ['human', 'Thanks'],
    ]);
    const call = back[2] as AIMessage;
    expect(call.tool_calls).toEqual([{ id: 'call-1', name: 'weather', args: { city: 'Porto' }, type: 'tool_call' }]);
    expect(back[3]).toMatchObject({ tool_call_id: 'call-1', name: 'weather' });
    const ids = back.map((m) => m.id);
    expect(new Set(ids).size).toBe(7);
    const rows = await engram.conversation('t1').getMessages();
    expect(rows.map((m) => m.id)).toEqual(ids);
    expect(rows[2]?.content).toBe('(called weather)'); // engram keeps no empty message: the thread names the call
    // The messages are engram's: searchable by recall in the thread's scope.
    expect((await engram.recall.textSearch('weather Porto', { userId: 'ana', count: 5 })).total).toBeGreaterThan(0);

    await history.clear();
    expect(await history.getMessages()).toEqual([]);
    expect((await engram.recall.textSearch('weather Porto', { userId: 'ana', count: 5 })).total).toBe(0);
  });

  it('RunnableWithMessageHistory keeps each session in its own thread and scope', async () => {
    const model = new FakeListChatModel({ responses: ['Hello Ana!', 'You are Ana.', 'Hello Ben!'] });
    const prompt = ChatPromptTemplate.fromMessages([
      ['system', 'You are helpful.'],
      new MessagesPlaceholder('history'),
      ['human', '{input}'],
    ]);
    const histories = new Map<string, EngramChatMessageHistory>();
    // Deprecated in favour of LangGraph's persistence (another package), but still @langchain/core's
    // way to put a message history around a chain, and what BaseListChatMessageHistory serves.
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    const chain = new RunnableWithMessageHistory({
      runnable: prompt.pipe(model),
      getMessageHistory: (sessionId: string) => {
        const history =
          histories.get(sessionId) ??
          new EngramChatMessageHistory(engram, { threadId: sessionId, userId: sessionId.split(':')[0]! });
        histories.set(sessionId, history);
        return history;
      },
      inputMessagesKey: 'input',
      historyMessagesKey: 'history',
    });
    await chain.invoke({ input: 'Hi, I am Ana' }, { configurable: { sessionId: 'ana:1' } });
    await chain.invoke({ input: 'Who am I?' }, { configurable: { sessionId: 'ana:1' } });
    await chain.invoke({ input: 'Hi, I am Ben' }, { configurable: { sessionId: 'ben:1' } });

    expect(
      plain(await new EngramChatMessageHistory(engram, { threadId: 'ana:1', userId: 'ana' }).getMessages()),
    ).toEqual([
      ['human', 'Hi, I am Ana'],
      ['ai', 'Hello Ana!'],
      ['human', 'Who am I?'],
      ['ai', 'You are Ana.'],
    ]);
    expect(
      plain(await new EngramChatMessageHistory(engram, { threadId: 'ben:1', userId: 'ben' }).getMessages()),
    ).toEqual([
      ['human', 'Hi, I am Ben'],
      ['ai', 'Hello Ben!'],
    ]);
    // Scope isolation: Ben's recall never finds Ana's messages.
    expect((await engram.recall.textSearch('Ana', { userId: 'ben', count: 10 })).total).toBe(0);
    expect((await engram.recall.textSearch('Ana', { userId: 'ana', count: 10 })).total).toBeGreaterThan(0);
  });

  it('refuses what engram cannot store with typed errors, writing nothing', async () => {
    const history = new EngramChatMessageHistory(engram, { threadId: 't2' });
    await expect(
      history.addMessage(
        new HumanMessage({ content: [{ type: 'image_url', image_url: 'data:image/png;base64,AAAA' }] }),
      ),
    ).rejects.toMatchObject({ code: 'VALIDATION', field: 'message.content[0]' });
    await expect(
      history.addMessages([
        new HumanMessage('ok'),
        new HumanMessage({ content: [{ type: 'image_url', image_url: 'x' }] }),
      ]),
    ).rejects.toMatchObject({ code: 'VALIDATION', field: 'messages[1].content[0]' });
    expect(await history.getMessages()).toEqual([]);
    await history.addMessage(
      new HumanMessage({
        content: [
          { type: 'text', text: 'two ' },
          { type: 'text', text: 'parts' },
        ],
      }),
    );
    expect(plain(await history.getMessages())).toEqual([['human', 'two parts']]);
    expect(() => new EngramChatMessageHistory(engram, { threadId: '' })).toThrow(/options.threadId/);
  });
});
