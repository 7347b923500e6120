import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClosedError, ValidationError, type Engram } from '../../lib/index.js';
import { manualClock, openTemp } from '../helpers.js';

let engram: Engram;
const clock = manualClock();

beforeEach(async () => {
  engram = await openTemp({
    now: () => {
      clock.advance(1);
      return clock.now();
    },
  });
});
afterEach(async () => {
  await engram.close();
});

describe('Conversation', () => {
  it('add() assigns id and createdAt and keeps order', async () => {
    const chat = engram.conversation('t1');
    const one = await chat.add({ role: 'user', content: 'hello' });
    expect(one.id).toMatch(/^[0-9A-Z]{26}$/);
    expect(typeof one.createdAt).toBe('number');
    await chat.add([
      { role: 'assistant', content: 'hi there' },
      { role: 'user', content: 'how are you?' },
    ]);
    const msgs = await chat.getMessages();
    expect(msgs.map((m) => m.content)).toEqual(['hello', 'hi there', 'how are you?']);
    expect(await chat.size()).toBe(3);
  });

  it('add() skips duplicates by id and by role + content + name unless allowed', async () => {
    const chat = engram.conversation('t1');
    const first = await chat.add({ role: 'user', content: 'same' });
    const again = await chat.add({ role: 'user', content: 'same' });
    expect(again.id).toBe(first.id);
    const byId = await chat.add({ role: 'user', content: 'other text', id: first.id });
    expect(byId.content).toBe('same');
    const otherRole = await chat.add({ role: 'assistant', content: 'same' });
    expect(otherRole.id).not.toBe(first.id);
    const named = await chat.add({ role: 'user', content: 'same', name: 'bob' });
    expect(named.id).not.toBe(first.id);
    const batch = await chat.add([
      { role: 'user', content: 'twice' },
      { role: 'user', content: 'twice' },
    ]);
    expect(batch[0]!.id).toBe(batch[1]!.id);
    expect(await chat.size()).toBe(4);

    const loose = engram.conversation('t2', { allowDuplicates: true });
    await loose.add({ role: 'user', content: 'same' });
    await loose.add({ role: 'user', content: 'same' });
    expect(await loose.size()).toBe(2);
  });

  it('add() keeps threads apart and rejects an id used by another thread', async () => {
    const a = engram.conversation('a');
    const b = engram.conversation('b');
    const m = await a.add({ role: 'user', content: 'in a' });
    await b.add({ role: 'user', content: 'in b' });
    expect((await a.getMessages()).map((x) => x.content)).toEqual(['in a']);
    await expect(b.add({ role: 'user', content: 'x', id: m.id })).rejects.toThrow(ValidationError);
  });

  it('getMessages() filters by role and returns the newest limit in order', async () => {
    const chat = engram.conversation('t1');
    await chat.add([
      { role: 'system', content: 's' },
      { role: 'user', content: 'u1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'u2' },
    ]);
    expect((await chat.getMessages({ role: 'user' })).map((m) => m.content)).toEqual(['u1', 'u2']);
    expect((await chat.getMessages({ limit: 2 })).map((m) => m.content)).toEqual(['a1', 'u2']);
    await expect(chat.getMessages({ limit: -1 })).rejects.toThrow(ValidationError);
    await expect(chat.getMessages({ role: 'robot' as 'user' })).rejects.toThrow(ValidationError);
  });

  it('delete() removes by index or id, all or nothing', async () => {
    const chat = engram.conversation('t1');
    const [m0, , m2] = await chat.add([
      { role: 'user', content: 'zero' },
      { role: 'user', content: 'one' },
      { role: 'user', content: 'two' },
      { role: 'user', content: 'three' },
    ]);
    await expect(chat.delete([0, 9])).rejects.toThrow(ValidationError);
    expect(await chat.size()).toBe(4);
    expect(await chat.delete([1])).toBe(1);
    expect(await chat.delete(m2!.id)).toBe(1);
    expect((await chat.getMessages()).map((m) => m.content)).toEqual(['zero', 'three']);
    await expect(chat.delete('nope')).rejects.toThrow(ValidationError);
    expect(await chat.delete([m0!.id])).toBe(1);
  });

  it('truncateToSize() keeps the newest n; clear() empties the thread', async () => {
    const chat = engram.conversation('t1');
    await chat.add(['a', 'b', 'c', 'd', 'e'].map((content) => ({ role: 'user' as const, content })));
    expect(await chat.truncateToSize(2)).toBe(3);
    expect((await chat.getMessages()).map((m) => m.content)).toEqual(['d', 'e']);
    expect(await chat.truncateToSize(10)).toBe(0);
    await chat.clear();
    expect(await chat.size()).toBe(0);
    expect((await engram.recall.textSearch('d e')).total).toBe(0);
  });

  it('retrieve() returns the context without a query and ranked matches with one', async () => {
    const chat = engram.conversation('t1');
    await chat.add([
      { role: 'user', content: 'I adopted a cat named Miso' },
      { role: 'user', content: 'The weather is rainy' },
      { role: 'assistant', content: 'Miso the cat sounds lovely; cats are great' },
    ]);
    expect(await chat.retrieve()).toHaveLength(3);
    const hits = await chat.retrieve('cat miso');
    expect(hits).toHaveLength(2);
    expect(hits.every((m) => /miso/i.test(m.content))).toBe(true);
  });

  it('stateDict() / loadStateDict() round trip restores the thread exactly', async () => {
    const chat = engram.conversation('t1', { agentId: 'ag', userId: 'us' });
    await chat.add([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'hi', name: 'ana', metadata: { mood: 'good', n: 1 } },
      { role: 'tool', content: '{"ok":true}', toolCallId: 'call_1' },
      { role: 'assistant', content: 'done' },
    ]);
    await chat.trimMessages(1);
    const state = await chat.stateDict();
    const json = JSON.parse(JSON.stringify(state)) as unknown;
    await chat.clear();
    await chat.loadStateDict(json);
    expect(await chat.stateDict()).toEqual(state);
    expect((await chat.getMessages()).map((m) => m.content)).toEqual(['sys', '{"ok":true}', 'done']);
  });

  it("loadStateDict() of another thread's state copies it under fresh ids and leaves the source untouched", async () => {
    const source = engram.conversation('src', { agentId: 'ag', userId: 'us' });
    await source.add([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'I like tea' },
      { role: 'assistant', content: 'noted' },
    ]);
    await source.trimMessages(1);
    const before = await source.stateDict();
    const fork = engram.conversation('fork', { agentId: 'ag', userId: 'us' });
    await fork.loadStateDict(JSON.parse(JSON.stringify(before)) as unknown);
    const copy = await fork.stateDict();
    expect(copy.threadId).toBe('fork');
    expect(copy.messages.map((m) => [m.role, m.content, m.inContext, m.position])).toEqual(
      before.messages.map((m) => [m.role, m.content, m.inContext, m.position]),
    );
    const sourceIds = new Set(before.messages.map((m) => m.id));
    expect(copy.messages.some((m) => sourceIds.has(m.id))).toBe(false);
    expect(copy.messages.every((m) => m.threadId === 'fork')).toBe(true);
    expect(await source.stateDict()).toEqual(before);
    // Loading the same state again replaces the copy; it does not double it.
    await fork.loadStateDict(before);
    expect((await fork.stateDict()).messages.map((m) => m.content)).toEqual(['sys', 'I like tea', 'noted']);
    expect(await source.stateDict()).toEqual(before);
  });

  it("loadStateDict() into a thread of another user keeps the target conversation's scope", async () => {
    const source = engram.conversation('a-thread', { userId: 'ana' });
    await source.add({ role: 'user', content: 'shared recipe' });
    const target = engram.conversation('b-thread', { userId: 'bo' });
    await target.loadStateDict(await source.stateDict());
    expect((await target.retrieve()).map((m) => m.userId)).toEqual(['bo']);
    expect((await engram.recall.textSearch('recipe', { userId: 'ana' })).results.map((r) => r.threadId)).toEqual([
      'a-thread',
    ]);
  });

  it('loadStateDict() rejects malformed state and leaves the thread as it was', async () => {
    const chat = engram.conversation('t1');
    await chat.add({ role: 'user', content: 'keep me' });
    const good = await chat.stateDict();
    await expect(chat.loadStateDict({ ...good, version: 2 })).rejects.toThrow(/state.version/);
    await expect(chat.loadStateDict(null)).rejects.toThrow(ValidationError);
    const bad = { ...good, messages: [...good.messages, { ...good.messages[0]!, id: 'X', role: 'robot' }] };
    await expect(chat.loadStateDict(bad)).rejects.toThrow(/state\.messages\[1\]\.role/);
    const dupIds = { ...good, messages: [good.messages[0]!, good.messages[0]!] };
    await expect(chat.loadStateDict(dupIds)).rejects.toThrow(/duplicate id/);
    expect((await chat.getMessages()).map((m) => m.content)).toEqual(['keep me']);
  });

  it('trimMessages() moves the oldest n after the system message out of context; they stay searchable', async () => {
    const chat = engram.conversation('t1');
    await chat.add([
      { role: 'system', content: 'persona' },
      { role: 'user', content: 'first about volcanoes' },
      { role: 'assistant', content: 'second reply' },
      { role: 'user', content: 'third' },
    ]);
    expect(await chat.trimMessages(2)).toBe(2);
    expect((await chat.getMessages()).map((m) => m.content)).toEqual(['persona', 'third']);
    const found = await engram.recall.textSearch('volcanoes');
    expect(found.results.map((r) => r.content)).toEqual(['first about volcanoes']);
  });

  it('prependToMessages() inserts after the system message; appendToMessages() at the end', async () => {
    const chat = engram.conversation('t1');
    await chat.add([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'later' },
    ]);
    await chat.prependToMessages([
      { role: 'user', content: 'p1' },
      { role: 'assistant', content: 'p2' },
    ]);
    await chat.prependToMessages([{ role: 'user', content: 'p0' }]);
    await chat.appendToMessages([{ role: 'user', content: 'end' }]);
    expect((await chat.getMessages()).map((m) => m.content)).toEqual(['sys', 'p0', 'p1', 'p2', 'later', 'end']);
  });

  it('swapSystemMessage() replaces the leading system message and keeps the old one in the log', async () => {
    const chat = engram.conversation('t1');
    await chat.add([
      { role: 'system', content: 'old persona' },
      { role: 'user', content: 'hi' },
    ]);
    await chat.swapSystemMessage({ role: 'system', content: 'new persona' });
    expect((await chat.getMessages()).map((m) => m.content)).toEqual(['new persona', 'hi']);
    expect((await engram.recall.textSearch('persona')).total).toBe(2);
    await expect(chat.swapSystemMessage({ role: 'user', content: 'x' })).rejects.toThrow(ValidationError);
  });

  it('add() rejects bad input naming the field and writes nothing', async () => {
    const chat = engram.conversation('t1');
    await expect(chat.add({ role: 'robot' as 'user', content: 'x' })).rejects.toThrow(/message\.role/);
    await expect(chat.add({ role: 'user', content: '' })).rejects.toThrow(/message\.content/);
    await expect(chat.add({ role: 'user', content: 42 as unknown as string })).rejects.toThrow(/message\.content/);
    await expect(
      chat.add([
        { role: 'user', content: 'fine' },
        { role: 'user', content: '   ' },
      ]),
    ).rejects.toThrow(/messages\[1\]\.content/);
    await expect(chat.add({ role: 'user', content: 'x', createdAt: 'not a date' })).rejects.toThrow(/createdAt/);
    await expect(chat.add({ role: 'user', content: 'x', extra: 1 } as never)).rejects.toThrow(/message\.extra/);
    expect(await chat.size()).toBe(0);
    expect((await engram.recall.textSearch('fine')).total).toBe(0);
  });

  it('add() rejects content over the configured maximum', async () => {
    const small = await openTemp({ maxContentBytes: 10 });
    const chat = small.conversation('t');
    await expect(chat.add({ role: 'user', content: 'ééééééé' })).rejects.toThrow(/14 bytes, over the maximum of 10/);
    await chat.add({ role: 'user', content: '0123456789' });
    expect(await chat.size()).toBe(1);
    await small.close();
  });

  it('every method rejects with ClosedError after close()', async () => {
    const chat = engram.conversation('t1');
    await engram.close();
    await expect(chat.add({ role: 'user', content: 'x' })).rejects.toThrow(ClosedError);
    await expect(chat.getMessages()).rejects.toThrow(ClosedError);
    expect(() => engram.conversation('t2')).toThrow(ClosedError);
  });
});
