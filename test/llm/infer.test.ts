import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { Engram, LlmError, ValidationError } from '../../lib/index.js';
import { openAiCompatible } from '../../lib/llm/chat-model.js';
import { startScriptedServer, type ScriptedServer } from './scripted-server.js';

let server: ScriptedServer;
let engram: Engram;

beforeEach(async () => {
  server = await startScriptedServer();
  engram = await Engram.open({
    name: `infer-${Math.random()}`,
    embedder: new HashEmbedder({ dimensions: 128 }),
    llm: { baseUrl: server.baseUrl, model: 'scripted', timeoutMs: 5000 },
  });
});
afterEach(async () => {
  await engram.close();
  await server.close();
});

const facts = (...f: string[]): { content: string } => ({ content: JSON.stringify({ facts: f }) });
const decide = (...m: object[]): { content: string } => ({
  content: `\`\`\`json\n${JSON.stringify({ memory: m })}\n\`\`\``,
});

describe('add(messages, { infer: true })', () => {
  it('extracts facts and adds them', async () => {
    server.script.push(
      facts('Lives in Lisbon', 'Has a dog named Pixel'),
      decide(
        { id: 'new', text: 'Lives in Lisbon', event: 'ADD' },
        { id: 'new', text: 'Has a dog named Pixel', event: 'ADD' },
      ),
    );
    const out = await engram.add([{ role: 'user', content: 'Hi! I live in Lisbon with my dog Pixel.' }], {
      userId: 'ana',
      infer: true,
    });
    expect(out.error).toBeUndefined();
    expect(out.results.map((r) => [r.event, r.memory])).toEqual([
      ['ADD', 'Lives in Lisbon'],
      ['ADD', 'Has a dog named Pixel'],
    ]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]!.messages[1]!.content).toContain('I live in Lisbon');
    expect((await engram.getAll({ userId: 'ana' })).results.map((r) => r.metadata['inferred'])).toEqual([true, true]);
  });

  it('updates a contradicted fact with history instead of duplicating it', async () => {
    server.script.push(facts('Lives in Lisbon'), decide({ id: 'new', text: 'Lives in Lisbon', event: 'ADD' }));
    const first = await engram.add([{ role: 'user', content: 'I live in Lisbon' }], { userId: 'ana', infer: true });
    const id = first.results[0]!.id;
    server.script.push(
      facts('Moved to Porto'),
      decide({ id: '0', text: 'Lives in Porto', event: 'UPDATE', old_memory: 'Lives in Lisbon' }),
    );
    const second = await engram.add([{ role: 'user', content: 'I moved to Porto last month' }], {
      userId: 'ana',
      infer: true,
    });
    expect(second.results).toEqual([
      expect.objectContaining({
        id,
        event: 'UPDATE',
        memory: 'Lives in Porto',
        previous: 'Lives in Lisbon',
        version: 2,
      }),
    ]);
    expect(server.requests[3]!.messages[1]!.content).toContain('Lives in Lisbon'); // the similar memory was shown
    expect((await engram.getAll({ userId: 'ana' })).results.map((r) => r.memory)).toEqual(['Lives in Porto']);
    expect((await engram.history(id)).map((h) => [h.op, h.memory])).toEqual([
      ['ADD', 'Lives in Lisbon'],
      ['UPDATE', 'Lives in Porto'],
    ]);
  });

  it('deletes with a tombstone and history, and NONE changes nothing', async () => {
    server.script.push(
      facts('Likes coffee', 'Works at Acme'),
      decide({ id: 'new', text: 'Likes coffee', event: 'ADD' }, { id: 'new', text: 'Works at Acme', event: 'ADD' }),
    );
    await engram.add([{ role: 'user', content: 'I like coffee and work at Acme' }], { userId: 'u', infer: true });
    server.script.push(
      facts('No longer works at Acme', 'Likes coffee'),
      decide({ id: '0', text: 'Works at Acme', event: 'DELETE' }, { id: '1', text: 'Likes coffee', event: 'NONE' }),
    );
    const shown = (): string => server.requests.at(-1)!.messages[1]!.content!;
    const out = await engram.add([{ role: 'user', content: 'I quit Acme. Still love coffee.' }], {
      userId: 'u',
      infer: true,
    });
    const existing = JSON.parse(shown().split('\n')[1]!) as { id: string; text: string }[];
    expect(existing.map((e) => e.text).sort()).toEqual(['Likes coffee', 'Works at Acme']);
    const deleted = out.results.find((r) => r.event === 'DELETE');
    expect(deleted?.memory).toBe(existing[0]!.text);
    expect((await engram.getAll({ userId: 'u' })).total).toBe(1);
    expect((await engram.history(deleted!.id)).map((h) => h.op)).toEqual(['ADD', 'DELETE']);
  });

  it('stores the raw input and reports the error when the model fails or answers badly', async () => {
    const cases = [
      { status: 500, text: '{"error":"overloaded"}' },
      { raw: 'this is not json' },
      { content: 'Sure! Here are the facts: none' },
      { content: '{"facts": "Lives in Lisbon"}' },
      { hangUp: true as const },
    ];
    let i = 0;
    for (const bad of cases) {
      server.script.push(bad);
      const text = `raw message number ${i++} about the garden`;
      const out = await engram.add([{ role: 'user', content: text }], { userId: 'r', infer: true });
      expect(out.error?.code).toBe('LLM');
      expect(out.results).toEqual([expect.objectContaining({ event: 'ADD', memory: text })]);
    }
    // a bad decision answer (unknown id) after good facts also falls back
    server.script.push(facts('Has a garden'), decide({ id: '7', text: 'x', event: 'UPDATE' }));
    const out = await engram.add([{ role: 'user', content: 'I have a garden' }], { userId: 'r', infer: true });
    expect(out.error?.message).toMatch(/not one of the memories shown/);
    expect((await engram.getAll({ userId: 'r' })).total).toBe(cases.length + 1);
  });

  it('needs an llm', async () => {
    const plain = await Engram.open({ name: `plain-${Math.random()}`, embedder: new HashEmbedder() });
    await expect(plain.add('x', { infer: true })).rejects.toThrow(ValidationError);
    await plain.close();
  });
});

describe('openAiCompatible', () => {
  it('openAiCompatible() sends model, messages and tools, and parses tool calls', async () => {
    server.script.push({
      content: '',
      toolCalls: [{ id: 'c1', name: 'recall_from_memory', arguments: '{"keywords":["x"]}' }],
    });
    const model = openAiCompatible({ baseUrl: server.baseUrl, model: 'm1', apiKey: 'k' });
    const reply = await model([{ role: 'user', content: 'hi' }], { tools: [{ type: 'function' }] });
    expect(reply.toolCalls).toEqual([{ id: 'c1', name: 'recall_from_memory', arguments: '{"keywords":["x"]}' }]);
    expect(server.requests[0]).toMatchObject({
      model: 'm1',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function' }],
    });
    server.script.push({ status: 401, text: 'bad key' });
    await expect(model([{ role: 'user', content: 'hi' }])).rejects.toThrow(LlmError);
    expect(() => openAiCompatible({ baseUrl: 'ftp://x', model: 'm' })).toThrow(ValidationError);
  });
});
