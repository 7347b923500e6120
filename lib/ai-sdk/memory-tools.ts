/**
 * engram's memory tools as the Vercel AI SDK's `tool()` objects: the same
 * schemas as `AgentTools.openai()` (OpenAI's strict form, so `strict: true`),
 * run by `AgentTools.call()`, so scope, checks and answers are the agent layer's.
 */
import { jsonSchema, tool } from 'ai';
import type { JSONSchema7, Tool } from 'ai';
import { AgentTools, type JsonSchema, type ToolsScope } from '../agent/tools.js';
import type { Engram } from '../engram.js';
import { ToolCallError } from '../errors.js';

/** The name of each memory tool, as `TOOL_DEFINITIONS` lists them. */
export type MemoryToolName =
  | 'save_to_memory'
  | 'recall_from_memory'
  | 'archival_memory_insert'
  | 'archival_memory_search'
  | 'conversation_search'
  | 'conversation_search_date'
  | 'core_memory_append'
  | 'core_memory_replace';

/** The memory tools keyed by name, ready for `generateText({ tools })`. Each answers with text for the model. */
export type MemoryToolSet = Record<MemoryToolName, Tool<Record<string, unknown>, string>>;

/** How `AgentTools.call()` marks an answer that is a problem, not a result. */
const ERROR_PREFIX = 'Error: ';

/** engram's schema in the AI SDK's JSON Schema type (a copy: the type list becomes a mutable array). */
function toJsonSchema7(schema: JsonSchema): JSONSchema7 {
  const { type, properties, items, required, ...rest } = schema;
  return {
    ...rest,
    type: typeof type === 'string' ? type : [...type],
    ...(properties === undefined
      ? {}
      : { properties: Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, toJsonSchema7(v)])) }),
    ...(items === undefined ? {} : { items: toJsonSchema7(items) }),
    ...(required === undefined ? {} : { required: [...required] }),
  };
}

/**
 * The memory tools for the AI SDK, bound to one agent and user: every call
 * reads and writes inside that scope only.
 *
 * A call the tool cannot run (bad or missing arguments, an unknown block, a text
 * over the limit) throws a {@link ToolCallError} whose message says what to
 * correct; the AI SDK turns it into a `tool-error` part, which the model reads
 * in its next step. A closed store or a failing disk rejects as itself.
 * @example
 * const { text } = await generateText({ model, prompt, tools: memoryTools(engram, { userId: 'ana' }), stopWhen: stepCountIs(5) })
 */
export function memoryTools(engram: Engram, scope: ToolsScope = {}): MemoryToolSet {
  const tools = new AgentTools(engram, scope);
  const entries = tools.definitions.map((d) => {
    const memoryTool = tool<Record<string, unknown>, string>({
      description: d.description,
      inputSchema: jsonSchema<Record<string, unknown>>(toJsonSchema7(d.parameters)),
      strict: true,
      execute: async (input) => {
        const answer = await tools.call(d.name, input);
        if (answer.startsWith(ERROR_PREFIX)) throw new ToolCallError(d.name, answer.slice(ERROR_PREFIX.length));
        return answer;
      },
    });
    return [d.name, memoryTool] as const;
  });
  return Object.fromEntries(entries) as MemoryToolSet;
}
