// Delete means forgotten: after delete(), deleteAll(), conversation.clear()/delete()
// and forget(), no table of the store holds the text, and forget() leaves other scopes alone.
import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { ClosedError, Engram, ValidationError } from '../../lib/index.js';
import { EngramDb } from '../../lib/store/schema.js';
import { openTemp } from '../helpers.js';
import { openV1Store } from '../store/old-schemas.js';
import { rawStore, tablesHolding } from './raw-store.js';

const open = (): Promise<Engram> => openTemp({ embedder: new HashEmbedder({ dimensions: 32 }) });

describe('forgetting', () => {
  it('delete() leaves no text, metadata or hash in any table, history() or export()', async () => {
    const engram = await open();
    const { results } = await engram.add('Ana hides her quokka under the stairs', {
      userId: 'ana',
      metadata: { topic: 'mdsecret' },
    });
    const id = results[0]!.id;
    await engram.update(id, 'Ana hides her quokka in the zeppelin');
    await engram.update(id, { metadata: { topic: 'mdsecret2' } });
    // Updated once, so that its history holds its text too (an add's entry keeps no copy of the row).
    const ben = (await engram.add('Ben keeps a parrot', { userId: 'ben' })).results[0]!.id;
    await engram.update(ben, { metadata: { pet: 'bird' } });
    await engram.search('quokka zeppelin parrot', { mode: 'hybrid' }); // loads both indexes
    await engram.flush(); // snapshots that knew the text
    const before = await rawStore(engram.name);
    expect(tablesHolding(before, 'zeppelin')).toEqual(expect.arrayContaining(['memories', 'history', 'terms', 'meta']));
    const hash = before['memories']!.match(/"hash":"([^"]+)"/)![1]!;
    expect(await engram.delete(id)).toBe(true);
    // Gone at once, not only after close().
    let raw = await rawStore(engram.name);
    for (const word of ['quokka', 'zeppelin', 'stairs', 'mdsecret', hash])
      expect(tablesHolding(raw, word), word).toEqual([]);
    await engram.close();
    raw = await rawStore(engram.name);
    for (const word of ['quokka', 'zeppelin', 'stairs', 'mdsecret', hash])
      expect(tablesHolding(raw, word), word).toEqual([]);
    expect(tablesHolding(raw, 'parrot')).toEqual(expect.arrayContaining(['memories', 'terms', 'history']));

    const again = await openTemp({ name: engram.name, embedder: new HashEmbedder({ dimensions: 32 }) });
    const history = await again.history(id);
    expect(history.map((h) => h.op)).toEqual(['ADD', 'UPDATE', 'UPDATE', 'DELETE']);
    for (const h of history) expect(h).toMatchObject({ previous: null, memory: null, metadata: null });
    expect(history.map((h) => h.version)).toEqual([1, 2, 3, 4]);
    const exported = await (await again.export()).text();
    for (const word of ['quokka', 'zeppelin', 'mdsecret', hash]) expect(exported.toLowerCase()).not.toContain(word);
    // The tombstone keeps what sync needs.
    const db = new EngramDb(engram.name);
    const tomb = await db.memories.get(id);
    db.close();
    expect(tomb).toMatchObject({ id, userId: 'ana', version: 4, text: '', hash: '', metadata: {} });
    expect(tomb!.deletedAt).toBeTypeOf('number');
    expect((await again.search('parrot', { userId: 'ben' })).results.map((r) => r.memory)).toEqual([
      'Ben keeps a parrot',
    ]);
    await again.close();
  });

  it('deleteAll({ userId }) and conversation clear()/delete() leave no text behind', async () => {
    const engram = await open();
    await engram.add('Ana saw a narwhal', { userId: 'ana' });
    await engram.add('Ana owns a theremin', { userId: 'ana', metadata: { note: 'mdhidden' } });
    await engram.add('Ben saw a heron', { userId: 'ben' });
    const chat = engram.conversation('t1', { userId: 'ana' });
    await chat.add([
      { role: 'user', content: 'my armadillo is ill' },
      { role: 'assistant', content: 'sorry about the armadillo' },
      { role: 'user', content: 'the gondola was late', metadata: { mood: 'mdgrumpy' } },
    ]);
    const other = engram.conversation('t2', { userId: 'ben' });
    await other.add({ role: 'user', content: 'my heron flew away' });
    expect(await engram.deleteAll({ userId: 'ana' })).toBe(2);
    expect(await chat.delete(2)).toBe(1);
    await chat.clear();
    const raw = await rawStore(engram.name);
    for (const word of ['narwhal', 'theremin', 'mdhidden', 'armadillo', 'gondola', 'mdgrumpy'])
      expect(tablesHolding(raw, word), word).toEqual([]);
    expect(tablesHolding(raw, 'heron')).toEqual(expect.arrayContaining(['memories', 'messages', 'terms']));
    expect((await engram.recall.textSearch('heron')).total).toBe(1);
    await engram.close();
  });

  it('forget({ userId }) removes every trace of the user in one go, reports it, and leaves others alone', async () => {
    const engram = await open();
    const ana = { userId: 'ana', agentId: 'a1' };
    await engram.add('Ana keeps a quokka', ana);
    await engram.add('Ana studies the zeppelin', { userId: 'ana', runId: 'r1' });
    const gone = (await engram.add('Ana once had a gecko', ana)).results[0]!.id;
    await engram.delete(gone);
    await engram.update((await engram.add('Ana likes tea', ana)).results[0]!.id, 'Ana likes armadillo tea');
    await engram.add('Ben keeps a heron', { userId: 'ben', agentId: 'a1' });
    await engram.conversation('ta', ana).add([
      { role: 'user', content: 'my quokka sneezes' },
      { role: 'assistant', content: 'bless the quokka' },
    ]);
    await engram.conversation('tb', { userId: 'ben', agentId: 'a1' }).add({ role: 'user', content: 'my heron sings' });
    await engram.blocks('a1', { userId: 'ana' }).set('human', 'Ana, narwhal fan');
    await engram.blocks('a1', { userId: 'ben' }).set('human', 'Ben, heron fan');
    await engram.blocks('a1').set('persona', 'Kind helper', { shared: true });
    await engram.flush();
    // An older store's tombstone that still holds its text, and a sync mark of Ana's block.
    const db = new EngramDb(engram.name);
    await db.memories.put({
      id: '01OLDTOMBSTONE',
      text: 'Ana gondola secret',
      tier: 'long_term',
      userId: 'ana',
      metadata: { m: 'mdold' },
      hash: 'h',
      createdAt: 1,
      updatedAt: 2,
      accessCount: 0,
      version: 2,
      deletedAt: 2,
      origin: 'x',
    });
    await db.meta.put({
      key: `sync.remote/block/${JSON.stringify(['a1', 'human', 'ana'])}`,
      value: { origin: 'd', updatedAt: 1, version: 1, content: 'Ana, narwhal fan' },
    });
    db.close();
    const liveBefore = (await engram.ready()).size;

    const removed = await engram.forget({ userId: 'ana' });
    expect(removed).toEqual({
      memories: 3,
      tombstones: 1,
      messages: 2,
      blocks: 1,
      traces: 0,
      history: expect.any(Number) as number,
      vectors: 3,
      terms: 5,
    });
    // The history of Ana's two memories changed after their creation (an add and a change each);
    // a creation alone writes no entry.
    expect(removed.history).toBeGreaterThanOrEqual(2 + 2);
    const raw = await rawStore(engram.name);
    for (const word of ['quokka', 'zeppelin', 'gecko', 'armadillo', 'narwhal', 'gondola', 'mdold'])
      expect(tablesHolding(raw, word), word).toEqual([]);
    // Tombstones only, text-free, for sync.
    const check = new EngramDb(engram.name);
    const anaRows = await check.memories.where('userId').equals('ana').toArray();
    expect(anaRows.length).toBe(5);
    for (const row of anaRows)
      expect(row).toMatchObject({ text: '', hash: '', metadata: {}, deletedAt: expect.any(Number) as number });
    expect(await check.vectors.bulkGet(anaRows.map((r) => r.id))).toEqual(anaRows.map(() => undefined));
    expect(
      await check.history
        .where('recordId')
        .anyOf(anaRows.map((r) => r.id))
        .count(),
    ).toBe(0);
    expect(await check.blocks.where('userId').equals('ana').count()).toBe(0);
    check.close();
    // Everyone else is untouched and still found.
    expect((await engram.search('heron', { userId: 'ben' })).results.map((r) => r.memory)).toEqual([
      'Ben keeps a heron',
    ]);
    expect((await engram.recall.textSearch('heron')).total).toBe(1);
    expect((await engram.blocks('a1', { userId: 'ben' }).get('human'))!.value).toBe('Ben, heron fan');
    expect((await engram.blocks('a1').get('persona'))!.value).toBe('Kind helper');
    expect((await engram.search('quokka zeppelin armadillo', { mode: 'keyword' })).results).toEqual([]);
    expect((await engram.ready()).size).toBe(liveBefore - 3);
    expect(await engram.forget({ userId: 'ana' })).toMatchObject({
      memories: 0,
      tombstones: 0,
      messages: 0,
      blocks: 0,
    });
    await engram.close();
  });

  it('forget() by agent, run and project removes just that scope; a bad scope is a ValidationError', async () => {
    const engram = await open();
    await engram.add('run fact kiwi', { userId: 'u', runId: 'r1' });
    await engram.add('agent fact mango', { agentId: 'a9' });
    await engram.add('other fact lemon', { userId: 'u' });
    await engram.blocks('a9').set('persona', 'mango persona');
    const project = engram.system({ sessionId: 's1', projectId: 'p1' });
    await project.addTrace('plan', 'thinking about papaya');
    await project.remember('fruit', 'papaya', { tier: 'project' });
    expect(await engram.forget({ runId: 'r1' })).toMatchObject({ memories: 1, messages: 0, blocks: 0, traces: 0 });
    expect(await engram.forget({ agentId: 'a9' })).toMatchObject({ memories: 1, blocks: 1 });
    expect(await engram.forget({ projectId: 'p1' })).toMatchObject({ memories: 1, traces: 1 });
    const raw = await rawStore(engram.name);
    for (const word of ['kiwi', 'mango', 'papaya']) expect(tablesHolding(raw, word), word).toEqual([]);
    expect((await engram.getAll({ userId: 'u' })).results.map((r) => r.memory)).toEqual(['other fact lemon']);
    await expect(engram.forget({})).rejects.toThrow(ValidationError);
    await expect(engram.forget({ userId: '' })).rejects.toThrow(ValidationError);
    await expect(engram.forget({ threadId: 't' } as never)).rejects.toThrow(ValidationError);
    await engram.close();
    await expect(engram.forget({ userId: 'u' })).rejects.toThrow(ClosedError);
  });

  it('open() of a version 1 store strips the text from its old tombstones and from the history of deleted records', async () => {
    const name = `forget-v1-${Math.random().toString(36).slice(2)}`;
    const old = await openV1Store(name);
    const live = {
      id: '01LIVE',
      text: 'Ben keeps a heron',
      tier: 'long_term',
      userId: 'ben',
      metadata: {},
      hash: 'h1',
      createdAt: 1,
      updatedAt: 1,
      accessCount: 0,
      version: 1,
      origin: 'd',
    };
    const dead = {
      id: '01DEAD',
      text: 'Ana hides a quokka',
      tier: 'long_term',
      userId: 'ana',
      metadata: { m: 'mdsecret' },
      hash: 'h2',
      createdAt: 1,
      updatedAt: 2,
      accessCount: 0,
      version: 2,
      deletedAt: 2,
      origin: 'd',
    };
    await old.table('memories').bulkPut([live, dead]);
    await old.table('history').bulkAdd([
      { table: 'memories', recordId: '01LIVE', op: 'add', before: null, after: live, at: 1 },
      {
        table: 'memories',
        recordId: '01DEAD',
        op: 'add',
        before: null,
        after: { ...dead, deletedAt: undefined, version: 1 },
        at: 1,
      },
      {
        table: 'memories',
        recordId: '01DEAD',
        op: 'delete',
        before: { ...dead, deletedAt: undefined, version: 1 },
        after: dead,
        at: 2,
      },
      {
        table: 'messages',
        recordId: 'm1',
        op: 'add',
        before: null,
        after: { id: 'm1', content: 'my gondola', threadId: 't' },
        at: 1,
      },
      {
        table: 'messages',
        recordId: 'm1',
        op: 'delete',
        before: { id: 'm1', content: 'my gondola', threadId: 't' },
        after: null,
        at: 2,
      },
    ]);
    old.close();
    const upgraded = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 32 }) });
    await upgraded.close();
    const raw = await rawStore(name);
    for (const word of ['quokka', 'mdsecret', 'gondola']) expect(tablesHolding(raw, word), word).toEqual([]);
    // Everything else of the old store is kept.
    expect(tablesHolding(raw, 'heron')).toEqual(expect.arrayContaining(['memories', 'history']));
  });
});
