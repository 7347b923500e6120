import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { Ajv } from 'ajv';
import {
  AgentTools,
  MAX_FACTS_PER_SAVE,
  MAX_KEYWORDS_PER_RECALL,
  TOOL_DEFINITIONS,
  type Engram,
  type JsonSchema,
} from '../../lib/index.js';
import { openTemp } from '../helpers.js';

let engram: Engram;
beforeEach(async () => {
  engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 128 }) });
});
afterEach(async () => {
  await engram.close();
});

const NAMES = [
  'save_to_memory',
  'recall_from_memory',
  'archival_memory_insert',
  'archival_memory_search',
  'conversation_search',
  'conversation_search_date',
  'core_memory_append',
  'core_memory_replace',
];

describe('AgentTools', () => {
  it('openai() and anthropic() describe every tool with a JSON Schema', () => {
    const tools = new AgentTools(engram, { agentId: 'helper' });
    expect(tools.openai().map((t) => t.function.name)).toEqual(NAMES);
    expect(tools.anthropic().map((t) => t.name)).toEqual(NAMES);
    for (const t of tools.openai()) {
      expect(t.type).toBe('function');
      expect(t.function.parameters).toMatchObject({ type: 'object', additionalProperties: false });
      expect(t.function.description.length).toBeGreaterThan(10);
      for (const r of t.function.parameters.required ?? [])
        expect(Object.keys(t.function.parameters.properties ?? {})).toContain(r);
    }
    expect(tools.anthropic()[0]!.input_schema).toBe(TOOL_DEFINITIONS[0]!.parameters);
  });

  it('every tool schema is valid for OpenAI strict function calling: all properties required, no extras, nullable instead of optional', () => {
    // OpenAI's strict mode (Structured Outputs): the root is an object; every object lists all
    // of its properties in `required` and has `additionalProperties: false`; an argument that
    // may be left out is nullable; only the keywords strict mode supports appear.
    const keywords = new Set([
      'type',
      'description',
      'properties',
      'required',
      'items',
      'minimum',
      'minItems',
      'additionalProperties',
    ]);
    const problems: string[] = [];
    const walk = (schema: JsonSchema, at: string): void => {
      for (const k of Object.keys(schema))
        if (!keywords.has(k)) problems.push(`${at}: keyword ${k} is not supported in strict mode`);
      const types: readonly string[] = typeof schema.type === 'string' ? [schema.type] : schema.type;
      if (types.length === 0 || types.length > 2 || (types.length === 2 && types[1] !== 'null'))
        problems.push(`${at}: type ${JSON.stringify(schema.type)}`);
      if (types[0] === 'object') {
        if (schema.additionalProperties !== false) problems.push(`${at}: additionalProperties is not false`);
        expect([...(schema.required ?? [])].sort(), `${at}: required`).toEqual(
          Object.keys(schema.properties ?? {}).sort(),
        );
        for (const [key, prop] of Object.entries(schema.properties ?? {})) walk(prop, `${at}.${key}`);
      }
      if (types[0] === 'array') {
        if (schema.items === undefined) problems.push(`${at}: array without items`);
        else walk(schema.items, `${at}[]`);
      }
    };
    const ajv = new Ajv({ strict: true });
    for (const def of TOOL_DEFINITIONS) {
      expect(def.parameters.type).toBe('object');
      walk(def.parameters, def.name);
      // Each schema is a valid JSON Schema, and null stands for every argument that may be left out.
      const validate = ajv.compile(def.parameters);
      const nulls = Object.fromEntries(
        Object.entries(def.parameters.properties ?? {})
          .filter(([, p]) => typeof p.type !== 'string')
          .map(([k]) => [k, null]),
      );
      const sample = Object.fromEntries(
        Object.entries(def.parameters.properties ?? {}).map(([k, p]) => [
          k,
          p.type === 'array' ? ['x'] : p.type === 'string' ? 'x' : null,
        ]),
      );
      expect({ tool: def.name, valid: validate({ ...sample, ...nulls }) }).toEqual({ tool: def.name, valid: true });
    }
    expect(problems).toEqual([]);
    // The optional arguments are exactly page and limit.
    const nullable = TOOL_DEFINITIONS.flatMap((d) =>
      Object.entries(d.parameters.properties ?? {})
        .filter(([, p]) => typeof p.type !== 'string')
        .map(([k]) => `${d.name}.${k}`),
    );
    expect(nullable).toEqual([
      'recall_from_memory.limit',
      'archival_memory_search.page',
      'conversation_search.page',
      'conversation_search_date.page',
    ]);
  });

  it('call() takes null as an absent optional argument, and refuses null for a required one', async () => {
    const tools = new AgentTools(engram, { agentId: 'helper', userId: 'ana' });
    await tools.call('save_to_memory', { thinking: 'useful', content: ['Ana plays the cello'] });
    expect(await tools.call('recall_from_memory', { keywords: ['cello'], limit: null })).toBe('- Ana plays the cello');
    await tools.call('archival_memory_insert', { content: 'Concert on Friday at the old theatre' });
    expect(await tools.call('archival_memory_search', '{"query":"theatre concert","page":null}')).toMatch(
      /\(page 1\/1\):\n.*theatre/s,
    );
    expect(await tools.call('conversation_search', { query: 'dentist', page: null })).toBe('No results found.');
    expect(await tools.call('archival_memory_search', { query: null, page: null })).toBe(
      'Error: archival_memory_search: arguments: argument "query" must be a string. Call it again with corrected arguments.',
    );
    expect(await tools.call('save_to_memory', { thinking: 'x', content: null })).toMatch(
      /^Error: save_to_memory: arguments: .*"content"/,
    );
    expect(await tools.call('archival_memory_search', { query: 'x', page: 'one' })).toMatch(
      /"page" must be an integer >= 0 or null/,
    );
  });

  it('call() runs each tool and answers with text', async () => {
    const tools = new AgentTools(engram, { agentId: 'helper', userId: 'ana' });
    expect(await tools.call('save_to_memory', { thinking: 'useful', content: ['Ana plays the cello'] })).toMatch(
      /Saved 1 new memory/,
    );
    expect(await tools.call('recall_from_memory', JSON.stringify({ keywords: ['cello'] }))).toBe(
      '- Ana plays the cello',
    );
    expect(await tools.call('archival_memory_insert', { content: 'Concert on Friday at the old theatre' })).toBe(
      'Inserted into archival memory.',
    );
    expect(await tools.call('archival_memory_search', { query: 'theatre concert' })).toMatch(
      /Showing \d of \d results \(page 1\/1\):\n.*theatre/s,
    );
    await engram.conversation('t', { agentId: 'helper', userId: 'ana' }).add([
      { role: 'user', content: 'Remind me about the dentist', createdAt: '2026-03-02T10:00:00Z' },
      { role: 'assistant', content: 'Dentist noted for Tuesday', createdAt: '2026-03-03T10:00:00Z' },
    ]);
    expect(await tools.call('conversation_search', { query: 'dentist' })).toMatch(/Showing 2 of 2 results/);
    const byDate = await tools.call('conversation_search_date', { start_date: '2026-03-02', end_date: '2026-03-02' });
    expect(byDate).toMatch(/Showing 1 of 1 results[\s\S]*Remind me about the dentist/);
    expect(await tools.call('core_memory_append', { label: 'human', content: 'Plays cello' })).toBe(
      'Block "human" now reads:\nPlays cello',
    );
    expect(
      await tools.call('core_memory_replace', { label: 'human', old_content: 'cello', new_content: 'viola' }),
    ).toBe('Block "human" now reads:\nPlays viola');
    expect((await engram.blocks('helper', { userId: 'ana' }).get('human'))!.value).toBe('Plays viola');
    // Ana's block is hers: the agent's own blocks and other users' do not hold it.
    expect(await engram.blocks('helper').get('human')).toBeUndefined();
    expect(await engram.blocks('helper', { userId: 'ben' }).get('human')).toBeUndefined();
  });

  it('call() answers bad arguments with readable errors instead of throwing', async () => {
    const tools = new AgentTools(engram);
    expect(await tools.call('fly_to_moon', {})).toMatch(/^Error: unknown tool "fly_to_moon"/);
    expect(await tools.call('save_to_memory', '{not json')).toMatch(
      /^Error: save_to_memory: arguments: not valid JSON/,
    );
    expect(await tools.call('save_to_memory', { thinking: 'x' })).toMatch(/missing required argument "content"/);
    expect(await tools.call('save_to_memory', { thinking: 'x', content: [] })).toMatch(
      /"content" must be a non-empty array of strings/,
    );
    expect(await tools.call('archival_memory_search', { query: 'x', page: -1 })).toMatch(
      /"page" must be an integer >= 0/,
    );
    expect(await tools.call('archival_memory_search', { query: 'x', colour: 1 })).toMatch(/unknown argument "colour"/);
    expect(await tools.call('conversation_search_date', { start_date: 'someday', end_date: '2026-01-01' })).toMatch(
      /^Error: conversation_search_date: from: is not a valid date/,
    );
    expect(await tools.call('core_memory_replace', { label: 'human', old_content: 'x', new_content: 'y' })).toMatch(
      /^Error: core_memory_replace: block not found/,
    );
    await engram.blocks('agent').set('human', 'short', { limit: 10 });
    expect(await tools.call('core_memory_append', { label: 'human', content: 'far too long for it' })).toMatch(
      /exceeds the limit of 10/,
    );
    expect(await tools.call('archival_memory_insert', { content: '' })).toMatch(
      /^Error: archival_memory_insert: text: must not be empty/,
    );
  });
});

describe('AgentTools against a hostile model', () => {
  it('call() refuses arguments named after Object.prototype members (constructor, toString, __proto__)', async () => {
    const tools = new AgentTools(engram, { agentId: 'helper' });
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const answer = await tools.call('archival_memory_insert', `{"content":"Ana likes tea","${name}":{}}`);
      expect(answer).toBe(
        `Error: archival_memory_insert: arguments: unknown argument "${name}"; expected content. Call it again with corrected arguments.`,
      );
    }
    expect((await engram.getAll({ agentId: 'helper' })).total).toBe(0);
  });

  it(`call('save_to_memory') refuses more than MAX_FACTS_PER_SAVE facts with an error the model can read, saving none`, async () => {
    const tools = new AgentTools(engram, { agentId: 'helper', userId: 'ana' });
    const facts = Array.from({ length: MAX_FACTS_PER_SAVE + 1 }, (_, i) => `Fact number ${i} about Ana`);
    const answer = await tools.call('save_to_memory', { thinking: 'all of it', content: facts });
    expect(answer).toBe(
      `Error: save_to_memory: content: holds ${MAX_FACTS_PER_SAVE + 1} facts, more than the ${MAX_FACTS_PER_SAVE} one call may save; save the most important ones, or split them over several calls. Call it again with corrected arguments.`,
    );
    expect((await engram.getAll({ userId: 'ana' })).results).toEqual([]);
    expect(
      await tools.call('save_to_memory', { thinking: 'enough', content: facts.slice(0, MAX_FACTS_PER_SAVE) }),
    ).toBe(`Saved ${MAX_FACTS_PER_SAVE} new memories (0 already known).`);
    const keywords = Array.from({ length: MAX_KEYWORDS_PER_RECALL + 1 }, (_, i) => `word${i}`);
    expect(await tools.call('recall_from_memory', { keywords, limit: null })).toMatch(
      /^Error: recall_from_memory: keywords: holds 21 keywords, more than the 20/,
    );
  });
});
