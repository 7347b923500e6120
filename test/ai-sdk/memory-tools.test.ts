// engram's memory tools inside the real AI SDK: generateText drives the SDK's own mock
// language model (ai/test), which calls every engram tool over several steps. No network.
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
} from '@ai-sdk/provider';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryTools } from '../../lib/ai-sdk/index.js';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { TOOL_DEFINITIONS, type Engram } from '../../lib/index.js';
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

/** A model answer: tool calls (a step that continues) or text (the last step). */
function answer(content: LanguageModelV3Content[]): LanguageModelV3GenerateResult {
  const calls = content.some((c) => c.type === 'tool-call');
  return {
    content,
    finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined },
    usage: USAGE,
    warnings: [],
  };
}

let callNo = 0;
function call(toolName: string, input: Record<string, unknown>): LanguageModelV3Content {
  callNo += 1;
  return { type: 'tool-call', toolCallId: `call-${callNo}`, toolName, input: JSON.stringify(input) };
}

/** The tool results a prompt hands the model, by tool name: the text, and whether it is an error. */
function toolResults(prompt: LanguageModelV3Prompt): { tool: string; type: string; value: string }[] {
  const out: { tool: string; type: string; value: string }[] = [];
  for (const m of prompt) {
    if (m.role !== 'tool') continue;
    for (const part of m.content) {
      if (part.type !== 'tool-result') continue;
      const o = part.output;
      out.push({
        tool: part.toolName,
        type: o.type,
        value: o.type === 'text' || o.type === 'error-text' ? o.value : JSON.stringify(o),
      });
    }
  }
  return out;
}

/** A mock model that plays `steps` in order, each seeing the prompt so far. */
function scripted(steps: ((prompt: LanguageModelV3Prompt) => LanguageModelV3Content[])[]): MockLanguageModelV3 {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async (options: LanguageModelV3CallOptions) => {
      const next = steps[step++];
      if (next === undefined) throw new RangeError(`the script has no step ${step}`);
      return answer(next(options.prompt));
    },
  });
}

async function seedBen(): Promise<void> {
  await engram.add('Ben keeps his cello in the attic; his PIN is 4321', { userId: 'ben' });
  await engram.archival('helper', { userId: 'ben' }).insert('Ben: theatre tickets hidden in the cello case');
  await engram.blocks('helper', { userId: 'ben' }).set('human', 'Ben plays the cello too');
  await engram
    .conversation('ben-thread', { agentId: 'helper', userId: 'ben' })
    .add({ role: 'user', content: 'My cello teacher is Clara, PIN 4321' });
}

describe('memoryTools()', () => {
  it('gives the SDK every engram tool with its strict JSON schema', async () => {
    const tools = memoryTools(engram, { agentId: 'helper', userId: 'ana' });
    expect(Object.keys(tools)).toEqual(TOOL_DEFINITIONS.map((d) => d.name));
    const model = scripted([() => [{ type: 'text', text: 'nothing to do' }]]);
    await generateText({ model, prompt: 'hi', tools });
    const offered = model.doGenerateCalls[0]!.tools ?? [];
    expect(offered.map((t) => t.name)).toEqual(TOOL_DEFINITIONS.map((d) => d.name));
    for (const t of offered) {
      const def = TOOL_DEFINITIONS.find((d) => d.name === t.name)!;
      expect(t).toMatchObject({ type: 'function', description: def.description, strict: true });
      expect(t.type === 'function' ? t.inputSchema : undefined).toEqual(JSON.parse(JSON.stringify(def.parameters)));
    }
  });

  it('generateText runs every tool over several steps: memories land in the scope, the model reads the results and the errors, other users stay out', async () => {
    await seedBen();
    await engram
      .conversation('ana-thread', { agentId: 'helper', userId: 'ana' })
      .add({ role: 'user', content: 'Book the cello lesson', createdAt: '2026-03-02T10:00:00Z' });
    const seen: LanguageModelV3Prompt[] = [];
    const model = scripted([
      (p) => {
        seen.push(p);
        return [
          call('save_to_memory', { thinking: 'a hobby', content: ['Ana plays the cello'] }),
          call('archival_memory_insert', { content: 'Ana: cello concert on Friday at the old theatre' }),
          call('core_memory_append', { label: 'human', content: 'Plays cello' }),
        ];
      },
      (p) => {
        seen.push(p);
        return [
          call('recall_from_memory', { keywords: ['cello', 'PIN'], limit: null }),
          call('archival_memory_search', { query: 'cello theatre', page: null }),
          call('conversation_search', { query: 'cello PIN', page: null }),
          call('conversation_search_date', { start_date: '2026-03-01', end_date: '2026-03-31', page: null }),
          call('core_memory_replace', { label: 'human', old_content: 'cello', new_content: 'viola' }),
        ];
      },
      (p) => {
        seen.push(p);
        return [
          call('archival_memory_search', { query: 'cello', page: -1 }),
          call('save_to_memory', { thinking: 'forgot the facts' }),
          call('core_memory_replace', { label: 'pets', old_content: 'x', new_content: 'y' }),
        ];
      },
      (p) => {
        seen.push(p);
        return [{ type: 'text', text: 'Done: Ana plays the viola.' }];
      },
    ]);

    const result = await generateText({
      model,
      prompt: 'Remember that I play the cello.',
      tools: memoryTools(engram, { agentId: 'helper', userId: 'ana' }),
      stopWhen: stepCountIs(6),
    });

    expect(result.steps).toHaveLength(4);
    expect(result.text).toBe('Done: Ana plays the viola.');

    // What landed, and where: Ana's scope only.
    // (archival passages are long-term memories of the agent's user too)
    expect((await engram.getAll({ userId: 'ana' })).results.map((m) => m.memory).sort()).toEqual([
      'Ana plays the cello',
      'Ana: cello concert on Friday at the old theatre',
    ]);
    expect(
      (await engram.archival('helper', { userId: 'ana' }).search('cello concert', { count: 5 })).results[0]?.content,
    ).toBe('Ana: cello concert on Friday at the old theatre');
    expect((await engram.blocks('helper', { userId: 'ana' }).get('human'))?.value).toBe('Plays viola');
    expect((await engram.blocks('helper', { userId: 'ben' }).get('human'))?.value).toBe('Ben plays the cello too');
    expect((await engram.getAll({ userId: 'ben' })).results.map((m) => m.memory).sort()).toEqual([
      'Ben keeps his cello in the attic; his PIN is 4321',
      'Ben: theatre tickets hidden in the cello case',
    ]);

    // The model saw each step's results in its next step.
    const afterFirst = toolResults(seen[1]!);
    expect(afterFirst.map((r) => [r.tool, r.type])).toEqual([
      ['save_to_memory', 'text'],
      ['archival_memory_insert', 'text'],
      ['core_memory_append', 'text'],
    ]);
    expect(afterFirst[0]!.value).toMatch(/Saved 1 new memory/);
    expect(afterFirst[2]!.value).toBe('Block "human" now reads:\nPlays cello');
    const afterSecond = toolResults(seen[2]!).slice(3);
    expect(afterSecond.map((r) => r.tool)).toEqual([
      'recall_from_memory',
      'archival_memory_search',
      'conversation_search',
      'conversation_search_date',
      'core_memory_replace',
    ]);
    expect(afterSecond.every((r) => r.type === 'text')).toBe(true);
    expect(afterSecond[0]!.value.split('\n').sort()).toEqual([
      '- Ana plays the cello',
      '- Ana: cello concert on Friday at the old theatre',
    ]);
    expect(afterSecond[1]!.value).toMatch(/^Showing \d of \d results \(page 1\/1\):\n.*Ana: cello concert/);
    expect(afterSecond[2]!.value).toMatch(/Showing 1 of 1 results.*\n.*user: Book the cello lesson/);
    expect(afterSecond[3]!.value).toMatch(/Book the cello lesson/);
    expect(afterSecond[4]!.value).toBe('Block "human" now reads:\nPlays viola');

    // Bad arguments come back as tool errors the model reads, saying what to correct.
    const errors = toolResults(seen[3]!).slice(8);
    expect(errors).toEqual([
      {
        tool: 'archival_memory_search',
        type: 'error-text',
        value:
          'archival_memory_search: arguments: argument "page" must be an integer >= 0 or null. Call it again with corrected arguments.',
      },
      {
        tool: 'save_to_memory',
        type: 'error-text',
        value:
          'save_to_memory: arguments: missing required argument "content". Call it again with corrected arguments.',
      },
      {
        tool: 'core_memory_replace',
        type: 'error-text',
        value: expect.stringMatching(/^core_memory_replace: block not found/) as string,
      },
    ]);
    const errorParts = result.steps[2]!.content.filter((c) => c.type === 'tool-error');
    expect(errorParts.map((c) => (c.error as { code?: string; tool?: string }).code)).toEqual([
      'TOOL_CALL',
      'TOOL_CALL',
      'TOOL_CALL',
    ]);
    expect(errorParts.map((c) => (c.error as { tool?: string }).tool)).toEqual([
      'archival_memory_search',
      'save_to_memory',
      'core_memory_replace',
    ]);

    // Another user's data never reaches the model.
    const everything = JSON.stringify(seen);
    expect(everything).toContain('Ana plays the cello');
    for (const secret of ['Ben', '4321', 'attic', 'Clara']) expect(everything).not.toContain(secret);
  });

  it('a tool whose store was closed rejects as ClosedError, not as a tool answer', async () => {
    const tools = memoryTools(engram, { userId: 'ana' });
    await engram.close();
    const model = scripted([
      () => [call('recall_from_memory', { keywords: ['cello'], limit: 3 })],
      () => [{ type: 'text', text: 'unreachable' }],
    ]);
    const result = await generateText({ model, prompt: 'x', tools, stopWhen: stepCountIs(3) });
    const [failure] = result.steps[0]!.content.filter((c) => c.type === 'tool-error');
    expect((failure?.error as { code?: string } | undefined)?.code).toBe('CLOSED');
  });
});
