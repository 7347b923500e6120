import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import type { Embedder } from '../../lib/embed/embedder.js';
import { EmbeddingError, NotFoundError, ValidationError, type Engram } from '../../lib/index.js';
import { manualClock, openTemp } from '../helpers.js';

let engram: Engram;
const clock = manualClock();

beforeEach(async () => {
  engram = await openTemp({
    embedder: new HashEmbedder({ dimensions: 64 }),
    now: () => {
      clock.advance(1);
      return clock.now();
    },
  });
});
afterEach(async () => {
  await engram.close();
});

describe('long-term memory (mem0 API)', () => {
  it('add() stores a memory once per scope and returns the standing one', async () => {
    const first = await engram.add('Ana is allergic to peanuts', { userId: 'ana', metadata: { topic: 'health' } });
    expect(first.results).toHaveLength(1);
    expect(first.results[0]).toMatchObject({
      memory: 'Ana is allergic to peanuts',
      userId: 'ana',
      event: 'ADD',
      version: 1,
      metadata: { topic: 'health' },
    });
    const again = await engram.add('Ana is allergic to peanuts', { userId: 'ana' });
    expect(again.results[0]).toMatchObject({ id: first.results[0]!.id, event: 'NONE' });
    const otherUser = await engram.add('Ana is allergic to peanuts', { userId: 'bo' });
    expect(otherUser.results[0]!.event).toBe('ADD');
    expect((await engram.getAll({ userId: 'ana' })).total).toBe(1);
  });

  it('add() stores each non-system message of a conversation with its role', async () => {
    const { results } = await engram.add(
      [
        { role: 'system', content: 'You are helpful' },
        { role: 'user', content: 'I live in Porto' },
        { role: 'assistant', content: 'Porto is lovely' },
      ],
      { agentId: 'helper' },
    );
    expect(results.map((r) => [r.memory, r.metadata['role']])).toEqual([
      ['I live in Porto', 'user'],
      ['Porto is lovely', 'assistant'],
    ]);
  });

  it('search() finds by meaning and keyword within scope, with scores', async () => {
    await engram.add('The user loves hiking in the mountains', { userId: 'u1' });
    await engram.add('The user drinks green tea every morning', { userId: 'u1' });
    await engram.add('Quarterly revenue grew by ten percent', { userId: 'u1' });
    await engram.add('The user loves hiking in the mountains', { userId: 'u2' });
    for (const mode of ['hybrid', 'vector', 'keyword'] as const) {
      const { results } = await engram.search('hiking mountains', { userId: 'u1', mode, limit: 2 });
      expect(results[0]!.memory).toBe('The user loves hiking in the mountains');
      expect(results[0]!.userId).toBe('u1');
      expect(results.every((r) => r.userId === 'u1')).toBe(true);
      expect(typeof results[0]!.score).toBe('number');
    }
    const all = await engram.search('hiking mountains', { limit: 10 });
    expect(all.results.filter((r) => r.memory.includes('hiking'))).toHaveLength(2);
  });

  it('search() applies threshold, metadata and date filters', async () => {
    await engram.add('apples are red', { userId: 'u', metadata: { kind: 'fruit', n: 1 } });
    await engram.add('bananas are yellow', { userId: 'u', metadata: { kind: 'fruit', n: 2 } });
    clock.advance(10_000);
    const t0 = clock.now();
    await engram.add('carrots are orange', { userId: 'u', metadata: { kind: 'vegetable' } });
    const fruit = await engram.search('are', { userId: 'u', filters: { metadata: { kind: 'fruit' } }, mode: 'vector' });
    expect(fruit.results.map((r) => r.memory).sort()).toEqual(['apples are red', 'bananas are yellow']);
    const some = await engram.search('colour', {
      filters: { userId: 'u', metadata: { n: { in: [2, 3] } } },
      mode: 'vector',
    });
    expect(some.results.map((r) => r.memory)).toEqual(['bananas are yellow']);
    const late = await engram.search('are', { userId: 'u', filters: { createdAt: { from: t0 } }, mode: 'vector' });
    expect(late.results.map((r) => r.memory)).toEqual(['carrots are orange']);
    // The query is embedded as its content words ('apples red'): the others share none of them.
    const strict = await engram.search('apples are red', { userId: 'u', threshold: 0.5, mode: 'vector' });
    expect(strict.results.map((r) => r.memory)).toEqual(['apples are red']);
    expect((await engram.search('apples are red', { userId: 'u', threshold: 1.5 })).results).toEqual([]);
  });

  it('search() rejects unknown filters, bad limits and modes', async () => {
    await expect(engram.search('x', { filters: { colour: 'red' } as never })).rejects.toThrow(/options.filters.colour/);
    await expect(engram.search('x', { limit: 0 })).rejects.toThrow(/options.limit/);
    await expect(engram.search('x', { limit: 5000 })).rejects.toThrow(/options.limit/);
    await expect(engram.search('x', { mode: 'fuzzy' as never })).rejects.toThrow(/options.mode/);
    await expect(engram.search('', {})).rejects.toThrow(/query/);
    await expect(engram.search('x', { userId: 'a', filters: { userId: 'b' } })).rejects.toThrow(/conflicts/);
    await expect(engram.search('x', { filters: { tier: 'forever' as never } })).rejects.toThrow(/tier/);
  });

  it('get() / update() / history() track versions and re-embed', async () => {
    const { results } = await engram.add('Lives in Lisbon', { userId: 'u' });
    const id = results[0]!.id;
    const updated = await engram.update(id, 'Lives in Porto');
    expect(updated).toMatchObject({ memory: 'Lives in Porto', version: 2 });
    const meta = await engram.update(id, { metadata: { confirmed: true } });
    expect(meta).toMatchObject({ memory: 'Lives in Porto', version: 3, metadata: { confirmed: true } });
    expect((await engram.get(id))!.memory).toBe('Lives in Porto');
    const found = await engram.search('porto', { userId: 'u', mode: 'vector', limit: 1 });
    expect(found.results[0]!.id).toBe(id);
    expect((await engram.search('lisbon', { userId: 'u', mode: 'keyword' })).results).toEqual([]);
    const history = await engram.history(id);
    expect(history.map((h) => [h.op, h.previous, h.memory, h.version])).toEqual([
      ['ADD', null, 'Lives in Lisbon', 1],
      ['UPDATE', 'Lives in Lisbon', 'Lives in Porto', 2],
      ['UPDATE', 'Lives in Porto', 'Lives in Porto', 3],
    ]);
    await expect(engram.update('missing', 'x')).rejects.toThrow(NotFoundError);
    await expect(engram.update(id, {})).rejects.toThrow(ValidationError);
    await expect(engram.update(id, '')).rejects.toThrow(ValidationError);
  });

  it('delete() tombstones: gone from get, getAll and search, kept in history', async () => {
    const { results } = await engram.add('secret recipe uses saffron', { userId: 'u' });
    const id = results[0]!.id;
    expect(await engram.delete(id)).toBe(true);
    expect(await engram.delete(id)).toBe(false);
    expect(await engram.get(id)).toBeUndefined();
    expect((await engram.getAll({ userId: 'u' })).total).toBe(0);
    expect((await engram.search('saffron recipe')).results).toEqual([]);
    expect((await engram.history(id)).map((h) => h.op)).toEqual(['ADD', 'DELETE']);
    // the same text can be added again after deletion
    expect((await engram.add('secret recipe uses saffron', { userId: 'u' })).results[0]!.event).toBe('ADD');
  });

  it('getAll() pages newest first; deleteAll() needs a scope; reset() empties the store', async () => {
    for (let i = 0; i < 5; i++) await engram.add(`fact number ${i}`, { agentId: 'a' });
    await engram.add('other agent fact', { agentId: 'b' });
    const page = await engram.getAll({ agentId: 'a', limit: 2, offset: 1 });
    expect(page.total).toBe(5);
    expect(page.results.map((r) => r.memory)).toEqual(['fact number 3', 'fact number 2']);
    await expect(engram.deleteAll({})).rejects.toThrow(ValidationError);
    expect(await engram.deleteAll({ agentId: 'a' })).toBe(5);
    expect((await engram.getAll()).results.map((r) => r.memory)).toEqual(['other agent fact']);
    await engram.conversation('t').add({ role: 'user', content: 'hello' });
    await engram.reset();
    expect((await engram.getAll()).total).toBe(0);
    expect((await engram.search('fact')).results).toEqual([]);
    expect(await engram.conversation('t').size()).toBe(0);
    await engram.add('after reset', {});
    expect((await engram.search('after reset', { mode: 'vector' })).results[0]!.memory).toBe('after reset');
  });

  it('add() rejects bad input and stores nothing', async () => {
    await expect(engram.add('')).rejects.toThrow(/text/);
    await expect(engram.add('   ')).rejects.toThrow(/text/);
    await expect(engram.add([])).rejects.toThrow(/messages/);
    await expect(
      engram.add([
        { role: 'user', content: 'ok' },
        { role: 'user', content: '' },
      ]),
    ).rejects.toThrow(/messages\[1\].content/);
    await expect(engram.add('x', { metadata: { f: () => 1 } as never })).rejects.toThrow(/metadata/);
    await expect(engram.add('x', { metadata: { n: Number.NaN } })).rejects.toThrow(/metadata/);
    await expect(engram.add('x', { userId: '' })).rejects.toThrow(/userId/);
    expect((await engram.getAll()).total).toBe(0);
  });
});

/** An embedder that misbehaves on demand. */
class FaultyEmbedder implements Embedder {
  readonly id = 'faulty';
  readonly dimensions = 8;
  mode: 'ok' | 'throw' | 'short' | 'nan' | 'count' = 'ok';
  readonly #inner = new HashEmbedder({ dimensions: 8 });
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out = await this.#inner.embed(texts);
    if (this.mode === 'throw') throw new TypeError('model crashed');
    if (this.mode === 'short') return out.map((v) => v.slice(0, 4));
    if (this.mode === 'nan') return out.map(() => new Float32Array(8).fill(Number.NaN));
    if (this.mode === 'count') return out.slice(1);
    return out;
  }
  async dispose(): Promise<void> {
    await this.#inner.dispose();
  }
}

describe('a failing embedder', () => {
  it('add() reports EmbeddingError and leaves store, index and log consistent', async () => {
    const faulty = new FaultyEmbedder();
    const e = await openTemp({ embedder: faulty });
    await e.add('first memory', { userId: 'u' });
    for (const mode of ['throw', 'short', 'nan', 'count'] as const) {
      faulty.mode = mode;
      await expect(
        e.add(
          ['second entry', 'third entry'].map((content) => ({ role: 'user', content })),
          { userId: 'u' },
        ),
      ).rejects.toThrow(EmbeddingError);
    }
    faulty.mode = 'ok';
    expect((await e.getAll()).results.map((r) => r.memory)).toEqual(['first memory']);
    expect((await e.search('second entry', { mode: 'keyword' })).results).toEqual([]);
    const ready = await e.ready();
    expect(ready.size).toBe(1);
    // Nothing bad was cached: the same texts embed correctly once the embedder recovers.
    await e.add(
      ['second entry', 'third entry'].map((content) => ({ role: 'user', content })),
      { userId: 'u' },
    );
    expect((await e.getAll()).total).toBe(3);
    await e.close();
  });
});
