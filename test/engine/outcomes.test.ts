import { describe, expect, it } from 'vitest';
import type { Embedder } from '../../lib/embed/embedder.js';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { AbortError, ClosedError, Engram, isEngramError, ValidationError } from '../../lib/index.js';

const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;

/** An embedder that answers after `delayMs`, or never, and ignores every AbortSignal. */
function deafEmbedder(delayMs: number | 'never', dimensions = 64): Embedder {
  const inner = new HashEmbedder({ dimensions });
  return {
    id: inner.id,
    dimensions,
    embed: async (texts) => {
      if (delayMs === 'never') return new Promise<Float32Array[]>(() => undefined);
      await new Promise((r) => setTimeout(r, delayMs));
      return inner.embed(texts);
    },
    dispose: () => Promise.resolve(),
  };
}

describe('close() while calls are in flight', () => {
  it('close() lets committed writes resolve and rejects the rest with ClosedError, never an untyped error', async () => {
    const name = unique('close');
    const e = await Engram.open({ name, embedder: deafEmbedder(2) });
    await e.add('first memory so the index is loaded', { userId: 'u' });
    const chat = e.conversation('t');
    const calls: { kind: string; text: string; run: Promise<unknown> }[] = [];
    for (let i = 0; i < 20; i++) {
      const text = `memory written during close number ${i}`;
      calls.push({ kind: 'memory', text, run: e.add(text, { userId: 'u' }) });
      const content = `message written during close number ${i}`;
      calls.push({ kind: 'message', text: content, run: chat.add({ role: 'user', content }) });
      calls.push({ kind: 'search', text, run: e.search(text, { userId: 'u', limit: 1 }) });
      calls.push({ kind: 'search', text, run: e.recall.textSearch(content) });
      calls.push({ kind: 'search', text, run: chat.getMessages() });
      calls.push({ kind: 'search', text, run: e.getAll({ userId: 'u' }) });
    }
    const settled = Promise.allSettled(calls.map((c) => c.run));
    await new Promise((r) => setTimeout(r, 3));
    await e.close();
    const outcomes = await settled;
    const errors = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    for (const err of errors) {
      expect(isEngramError(err), String(err)).toBe(true);
      expect(err).toBeInstanceOf(ClosedError);
    }
    const reopened = await Engram.open({ name, embedder: deafEmbedder(0) });
    const memories = new Set((await reopened.getAll({ userId: 'u', limit: 1000 })).results.map((r) => r.memory));
    const messages = new Set((await reopened.conversation('t').getMessages()).map((m) => m.content));
    calls.forEach((c, i) => {
      if (c.kind === 'search') return;
      const stored = c.kind === 'memory' ? memories.has(c.text) : messages.has(c.text);
      // Resolved means stored; rejected means not stored.
      expect(stored, `${c.kind} ${c.text}`).toBe(outcomes[i]!.status === 'fulfilled');
    });
    // The index was saved with what committed: every stored memory is found by meaning.
    for (const text of memories) {
      const { results } = await reopened.search(text, { userId: 'u', mode: 'vector', limit: 1 });
      expect(results[0]?.memory).toBe(text);
    }
    await reopened.close();
  });

  it('close() called twice at once waits for the same work; calls after it reject with ClosedError', async () => {
    const e = await Engram.open({ name: unique('close2'), embedder: deafEmbedder(1) });
    await e.add('something to snapshot', { userId: 'u' });
    await Promise.all([e.close(), e.close()]);
    await expect(e.add('too late', { userId: 'u' })).rejects.toThrow(ClosedError);
    await expect(e.search('too late')).rejects.toThrow(ClosedError);
  });
});

describe('AbortSignal aborts even when the embedder ignores it', () => {
  it('add() and search() reject with AbortError when the signal fires, and nothing is written', async () => {
    const e = await Engram.open({ name: unique('abort'), embedder: deafEmbedder('never') });
    const controller = new AbortController();
    const adding = e.add('never embedded', { userId: 'u', signal: controller.signal });
    const searching = e.search('never embedded', { mode: 'vector', signal: controller.signal });
    setTimeout(() => {
      controller.abort();
    }, 5);
    await expect(adding).rejects.toThrow(AbortError);
    await expect(searching).rejects.toThrow(AbortError);
    expect((await e.getAll()).total).toBe(0);
    await e.close();
  });
});

describe('limits', () => {
  it('add(), update() and messages refuse metadata larger than maxContentBytes as JSON', async () => {
    const e = await Engram.open({
      name: unique('meta'),
      embedder: new HashEmbedder({ dimensions: 32 }),
      maxContentBytes: 1000,
    });
    const big = { note: 'x'.repeat(2000) };
    await expect(e.add('fits', { metadata: big })).rejects.toThrow(ValidationError);
    const nested = { a: Array.from({ length: 200 }, (_, i) => ({ i })) };
    await expect(e.add('fits', { metadata: nested })).rejects.toThrow(/over the maximum/);
    const { results } = await e.add('fits', { metadata: { note: 'small' } });
    await expect(e.update(results[0]!.id, { metadata: big })).rejects.toThrow(ValidationError);
    await expect(e.conversation('t').add({ role: 'user', content: 'hi', metadata: big })).rejects.toThrow(
      ValidationError,
    );
    await expect(e.system({ sessionId: 's' }).remember('k', 'v', { metadata: big })).rejects.toThrow(ValidationError);
    expect((await e.getAll()).total).toBe(1);
    await e.close();
  });

  it('search() with a 0.5 MB query answers, and ranks by its rarest terms', async () => {
    const e = await Engram.open({ name: unique('query'), embedder: new HashEmbedder({ dimensions: 32 }) });
    await e.add('the quokka lives on rottnest island', { userId: 'u' });
    await e.add('the weather was mild and pleasant', { userId: 'u' });
    const words: string[] = [];
    for (let i = 0, length = 0; length < 500_000; i++) {
      const word = `word${i.toString(36)}`;
      words.push(word, 'the', 'weather');
      length += word.length + 13;
    }
    words.push('quokka');
    const query = words.join(' ');
    expect(query.length).toBeGreaterThan(500_000);
    for (const mode of ['keyword', 'hybrid'] as const) {
      const { results } = await e.search(query, { userId: 'u', mode, limit: 2 });
      expect(
        results.map((r) => r.memory),
        mode,
      ).toContain('the quokka lives on rottnest island');
    }
    const recall = await e.recall.textSearch(query);
    expect(recall.results).toEqual([]);
    await e.close();
  });

  it('search() walks at most the 64 rarest distinct terms of a keyword query', async () => {
    const e = await Engram.open({ name: unique('cap'), embedder: new HashEmbedder({ dimensions: 32 }) });
    const chat = e.conversation('t');
    // 80 rare words, one memory and one message each; a common word in all of them.
    const rare = Array.from(
      { length: 80 },
      (_, i) => `zebra${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`,
    );
    for (const word of rare) {
      await e.add(`note ${word} harbour`, { userId: 'u', dedupe: 'off' });
      await chat.add({ role: 'user', content: `note ${word} harbour` });
    }
    await e.add('only the harbour here', { userId: 'u' });
    const query = ['harbour', ...rare].join(' ');
    const { results } = await e.search(query, { userId: 'u', mode: 'keyword', limit: 1000 });
    // The common term is dropped (it is the least rare), and 64 of the 80 rare ones are walked.
    expect(results).toHaveLength(64);
    expect(results.some((r) => r.memory === 'only the harbour here')).toBe(false);
    const recall = await e.recall.textSearch(query, { count: 100 });
    expect(recall.results).toHaveLength(64);
    await e.close();
  });

  it('search() metadata filters match own properties only (__proto__, constructor, toString)', async () => {
    const e = await Engram.open({ name: unique('proto'), embedder: new HashEmbedder({ dimensions: 32 }) });
    await e.add('plain memory one', { userId: 'u', metadata: { topic: 'a' } });
    await e.add('plain memory two', { userId: 'u' });
    const own = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    await e.add('memory with an own __proto__ key', { userId: 'u', metadata: own as never });
    const cases = [
      JSON.parse('{"__proto__": {"in": [{}]}}') as Record<string, unknown>,
      JSON.parse('{"__proto__": {"in": [{"x": 2}, {}]}}') as Record<string, unknown>,
      { constructor: { in: [{}] } },
      { toString: { in: [{}] } },
      { hasOwnProperty: { in: [{}] } },
    ];
    for (const metadata of cases) {
      for (const mode of ['vector', 'keyword', 'hybrid'] as const) {
        const { results } = await e.search('plain memory', {
          userId: 'u',
          mode,
          filters: { metadata: metadata as never },
        });
        expect(
          results.map((r) => r.memory),
          `${JSON.stringify(metadata)} ${mode}`,
        ).toEqual([]);
      }
      expect((await e.getAll({ filters: { metadata: metadata as never } })).total).toBe(0);
      await expect(e.deleteAll({ filters: { metadata: metadata as never } })).resolves.toBe(0);
    }
    const ownMatch = await e.getAll({
      filters: { metadata: JSON.parse('{"__proto__": {"in": [{"x": 1}]}}') as never },
    });
    expect(ownMatch.results.map((r) => r.memory)).toEqual(['memory with an own __proto__ key']);
    expect((await e.getAll()).total).toBe(3);
    await e.close();
  });
});
