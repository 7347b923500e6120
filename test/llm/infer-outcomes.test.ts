import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Embedder } from '../../lib/embed/embedder.js';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { AbortError, EmbeddingError, Engram, ValidationError } from '../../lib/index.js';
import type { ChatFunction } from '../../lib/llm/chat-model.js';
import { startScriptedServer, type ScriptedServer } from './scripted-server.js';

const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;
const factsReply = (...f: string[]): string => JSON.stringify({ facts: f });
const decideReply = (...m: object[]): string => JSON.stringify({ memory: m });

/** A function model answering from a script; `'never'` never resolves (and ignores its signal). */
function scriptedFunction(script: string[]): ChatFunction {
  return async () => {
    const next = script.shift();
    if (next === 'never') return new Promise<string>(() => undefined);
    if (next === undefined) throw new Error('script exhausted');
    return next;
  };
}

/** A decision naming an existing memory by its text; the model below turns it into the id shown. */
type DecisionByText =
  { event: 'ADD'; text: string } | { event: 'UPDATE' | 'DELETE' | 'NONE'; target: string; text: string };

/** A function model: the facts, then decisions whose targets it looks up in the memories it is shown. */
function decidingFunction(facts: string[], decisions: DecisionByText[]): ChatFunction {
  let call = 0;
  return async (messages) => {
    call++;
    if (call === 1) return factsReply(...facts);
    const prompt = messages[1]!.content;
    const shown = JSON.parse(prompt.slice(prompt.indexOf('['), prompt.indexOf('\n\nNew facts'))) as {
      id: string;
      text: string;
    }[];
    return decideReply(
      ...decisions.map((d) => {
        if (d.event === 'ADD') return { id: 'new', text: d.text, event: 'ADD' };
        const id = shown.find((m) => m.text === d.target)?.id;
        if (id === undefined) throw new Error(`the memory "${d.target}" was not shown to the model`);
        return { id, text: d.text, event: d.event };
      }),
    );
  };
}

/** The hash embedder, failing for any text that contains `poison`. */
function poisonedEmbedder(): Embedder {
  const inner = new HashEmbedder({ dimensions: 64 });
  return {
    id: inner.id,
    dimensions: inner.dimensions,
    embed: async (texts) => {
      if (texts.some((t) => t.includes('poison'))) throw new Error('the embedder broke on this text');
      return inner.embed(texts);
    },
    dispose: () => Promise.resolve(),
  };
}

describe('add(messages, { infer: true }) reports outcomes truthfully', () => {
  it('add() times out a function model that never answers, stores the raw input and reports the error', async () => {
    const model = scriptedFunction(['never']);
    const e = await Engram.open({ name: unique('never'), embedder: new HashEmbedder({ dimensions: 64 }), llm: model });
    const out = await e.add([{ role: 'user', content: 'I moved to Porto in May.' }], {
      userId: 'ana',
      infer: true,
      timeoutMs: 50,
    });
    expect(out.error?.code).toBe('LLM');
    expect(out.error?.message).toMatch(/did not answer within 50 ms/);
    expect(out.results.map((r) => [r.event, r.memory])).toEqual([['ADD', 'I moved to Porto in May.']]);
    expect((await e.getAll({ userId: 'ana' })).results.map((r) => [r.memory, r.metadata['inferred']])).toEqual([
      ['I moved to Porto in May.', false],
    ]);
    await e.close();
  });

  describe('an OpenAI-compatible server', () => {
    let server: ScriptedServer;
    beforeEach(async () => {
      server = await startScriptedServer();
    });
    afterEach(async () => {
      await server.close();
    });

    for (const at of ['extraction', 'decision'] as const) {
      it(`add() times out a server that sends headers then stalls (at the ${at}), and stores the raw input`, async () => {
        const e = await Engram.open({
          name: unique('stall'),
          embedder: new HashEmbedder({ dimensions: 64 }),
          llm: { baseUrl: server.baseUrl, model: 'scripted', timeoutMs: 60_000 },
        });
        if (at === 'decision') server.script.push({ content: factsReply('Lives in Porto') });
        server.script.push({ stall: true });
        const out = await e.add([{ role: 'user', content: 'I live in Porto now.' }], {
          userId: 'ana',
          infer: true,
          timeoutMs: 100,
        });
        expect(out.error?.code).toBe('LLM');
        expect(out.results.map((r) => r.memory)).toEqual(['I live in Porto now.']);
        expect((await e.getAll({ userId: 'ana' })).total).toBe(1);
        await e.close();
      });
    }

    it('the chat model rejects with LlmError when the body stalls past its own timeoutMs', async () => {
      const e = await Engram.open({
        name: unique('stall2'),
        embedder: new HashEmbedder({ dimensions: 64 }),
        llm: { baseUrl: server.baseUrl, model: 'scripted', timeoutMs: 100 },
      });
      server.script.push({ stall: true });
      const out = await e.add([{ role: 'user', content: 'Remember the blue door.' }], { infer: true });
      expect(out.error?.code).toBe('LLM');
      expect(out.results.map((r) => r.memory)).toEqual(['Remember the blue door.']);
      await e.close();
    });
  });

  it('add() applies the decisions all or nothing: an embedding failure on one leaves the store as it was', async () => {
    const update = (text: string): DecisionByText => ({ event: 'UPDATE', target: 'Lives in Lisbon', text });
    const add = (text: string): DecisionByText => ({ event: 'ADD', text });
    const remove: DecisionByText = { event: 'DELETE', target: 'Has a cat named Miso', text: 'Has a cat named Miso' };
    for (const decisions of [
      [update('Lives in Porto'), add('Has a dog'), add('Has a poison dart frog')],
      [remove, add('Has a poison dart frog'), update('Lives in Porto')],
      [add('Has a dog'), update('Lives in poison city'), remove],
    ]) {
      const label = decisions.map((d) => `${d.event} ${d.text}`).join(', ');
      const e = await Engram.open({
        name: unique('atomic'),
        embedder: poisonedEmbedder(),
        llm: decidingFunction(['Lives in Porto', 'Has a dog', 'The cat is gone'], decisions),
      });
      await e.add('Lives in Lisbon', { userId: 'ana' });
      await e.add('Has a cat named Miso', { userId: 'ana' });
      const start = (await e.getAll({ userId: 'ana' })).results;
      await expect(
        e.add([{ role: 'user', content: 'I moved, got a dog, the cat is gone.' }], { userId: 'ana', infer: true }),
        label,
      ).rejects.toThrow(EmbeddingError);
      const after = (await e.getAll({ userId: 'ana' })).results;
      expect(
        after.map((r) => [r.id, r.memory, r.version]),
        label,
      ).toEqual(start.map((r) => [r.id, r.memory, r.version]));
      for (const r of start)
        expect(
          (await e.history(r.id)).map((h) => h.op),
          label,
        ).toEqual(['ADD']);
      await e.close();
    }
  });

  it('add() applies every decision of one answer together when all embed', async () => {
    const decisions: DecisionByText[] = [
      { event: 'UPDATE', target: 'Lives in Lisbon', text: 'Lives in Porto' },
      { event: 'ADD', text: 'Has a dog named Rex' },
      { event: 'DELETE', target: 'Has a cat named Miso', text: 'Has a cat named Miso' },
    ];
    const e = await Engram.open({
      name: unique('together'),
      embedder: new HashEmbedder({ dimensions: 64 }),
      llm: decidingFunction(['Lives in Porto', 'Has a dog named Rex', 'The cat is gone'], decisions),
    });
    await e.add('Lives in Lisbon', { userId: 'ana' });
    await e.add('Has a cat named Miso', { userId: 'ana' });
    const out = await e.add([{ role: 'user', content: 'Moved to Porto, got a dog called Rex, and the cat is gone.' }], {
      userId: 'ana',
      infer: true,
    });
    expect(out.error).toBeUndefined();
    expect(out.results.map((r) => [r.event, r.memory])).toEqual([
      ['UPDATE', 'Lives in Porto'],
      ['ADD', 'Has a dog named Rex'],
      ['DELETE', 'Has a cat named Miso'],
    ]);
    expect((await e.getAll({ userId: 'ana' })).results.map((r) => r.memory).sort()).toEqual([
      'Has a dog named Rex',
      'Lives in Porto',
    ]);
    expect((await e.search('Lives in Porto', { userId: 'ana', mode: 'vector', limit: 1 })).results[0]?.memory).toBe(
      'Lives in Porto',
    );
    await e.close();
  });

  it('add() holds a fact from the model to maxContentBytes: an oversized one stores the raw input and reports it', async () => {
    for (const stage of ['facts', 'decision'] as const) {
      const huge = `Likes ${'very '.repeat(100)}long walks`;
      const script =
        stage === 'facts'
          ? [factsReply(huge)]
          : [factsReply('Likes walks'), decideReply({ id: 'new', text: huge, event: 'ADD' })];
      const e = await Engram.open({
        name: unique('bytes'),
        embedder: new HashEmbedder({ dimensions: 64 }),
        llm: scriptedFunction(script),
        maxContentBytes: 200,
      });
      const out = await e.add([{ role: 'user', content: 'I like long walks.' }], { userId: 'ana', infer: true });
      expect(out.error?.code, stage).toBe('LLM');
      expect(out.error?.message, stage).toMatch(/over maxContentBytes/);
      expect(
        (await e.getAll({ userId: 'ana' })).results.map((r) => r.memory),
        stage,
      ).toEqual(['I like long walks.']);
      await e.close();
    }
  });

  it('add() with an AbortSignal rejects with AbortError when the model ignores it, and stores nothing', async () => {
    const e = await Engram.open({
      name: unique('abort'),
      embedder: new HashEmbedder({ dimensions: 64 }),
      llm: scriptedFunction(['never']),
    });
    const controller = new AbortController();
    const adding = e.add([{ role: 'user', content: 'Something to forget.' }], {
      infer: true,
      signal: controller.signal,
    });
    setTimeout(() => {
      controller.abort();
    }, 20);
    await expect(adding).rejects.toThrow(AbortError);
    expect((await e.getAll()).total).toBe(0);
    await e.close();
  });

  it('add() validates timeoutMs at the door', async () => {
    const e = await Engram.open({
      name: unique('timeout-check'),
      embedder: new HashEmbedder({ dimensions: 64 }),
      llm: scriptedFunction([]),
    });
    await expect(e.add([{ role: 'user', content: 'x' }], { infer: true, timeoutMs: 0 })).rejects.toThrow(
      ValidationError,
    );
    await expect(e.add('x', { timeoutMs: 1000 })).rejects.toThrow(ValidationError);
    await e.close();
  });
});
