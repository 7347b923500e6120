/**
 * The agent tools' definitions: names, descriptions and JSON Schemas (valid for
 * OpenAI's strict function calling), without the code that runs them (tools.ts),
 * so a process without a store (the desktop main process's MCP server) can list
 * them. Types and constants only.
 */
import { MAX_FACTS_PER_SAVE, MAX_KEYWORDS_PER_RECALL } from '../memory/persistent-limits.js';

/** A JSON Schema type name. */
export type JsonSchemaType = 'object' | 'string' | 'integer' | 'array' | 'number';

/**
 * A JSON Schema object (the subset tools use). The tools' schemas are valid for
 * OpenAI's strict function calling: every property is required, objects have
 * `additionalProperties: false`, and an argument that may be left out is
 * nullable instead (`type: ['integer', 'null']`; null means absent).
 */
export interface JsonSchema {
  type: JsonSchemaType | readonly [JsonSchemaType, 'null'];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minimum?: number;
  minItems?: number;
  additionalProperties?: boolean;
}

/** One tool: name, description and parameter schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** OpenAI's function-calling tool format. */
export interface OpenAiTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema };
}

/** Anthropic's tool format. */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

const str = (description: string): JsonSchema => ({ type: 'string', description });
const page: JsonSchema = {
  type: ['integer', 'null'],
  minimum: 0,
  description: 'Page of results, starting at 0 (null: 0).',
};
/** An object schema in OpenAI's strict form: every property listed in `required`. */
const obj = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

/** Every memory tool engram offers. */
export const TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  {
    name: 'save_to_memory',
    description: 'Save important facts to long-term memory so they can be recalled in later conversations.',
    parameters: obj({
      thinking: str('Why these facts are worth remembering.'),
      content: {
        type: 'array',
        minItems: 1,
        items: str('One self-contained fact.'),
        description: `Facts to save (at most ${MAX_FACTS_PER_SAVE} per call).`,
      },
    }),
  },
  {
    name: 'recall_from_memory',
    description: 'Recall memories related to the given keywords or questions.',
    parameters: obj({
      keywords: {
        type: 'array',
        minItems: 1,
        items: str('A keyword or question.'),
        description: `What to look for (at most ${MAX_KEYWORDS_PER_RECALL}).`,
      },
      limit: { type: ['integer', 'null'], minimum: 1, description: 'Most memories per keyword (null: 5).' },
    }),
  },
  {
    name: 'archival_memory_insert',
    description: 'Add a passage to archival memory. Write it so it can be found by meaning later.',
    parameters: obj({ content: str('The passage to store.') }),
  },
  {
    name: 'archival_memory_search',
    description: 'Search archival memory by meaning, paged.',
    parameters: obj({ query: str('What to search for.'), page }),
  },
  {
    name: 'conversation_search',
    description: 'Search the whole conversation history by keywords, paged.',
    parameters: obj({ query: str('Keywords to search for.'), page }),
  },
  {
    name: 'conversation_search_date',
    description: 'Search the conversation history between two dates (inclusive), paged.',
    parameters: obj({
      start_date: str('Start date, YYYY-MM-DD or ISO 8601.'),
      end_date: str('End date, YYYY-MM-DD or ISO 8601.'),
      page,
    }),
  },
  {
    name: 'core_memory_append',
    description: 'Append text to a core memory block (for example "human" or "persona").',
    parameters: obj({ label: str('Block label.'), content: str('Text to append on a new line.') }),
  },
  {
    name: 'core_memory_replace',
    description: 'Replace text in a core memory block. old_content must match exactly.',
    parameters: obj({
      label: str('Block label.'),
      old_content: str('Exact text to replace.'),
      new_content: str('Replacement text (empty to delete).'),
    }),
  },
];
