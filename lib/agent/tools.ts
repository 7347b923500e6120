/**
 * Agent-controlled memory: the memory tools of MassGen and MemGPT as JSON
 * Schema function definitions (OpenAI and Anthropic formats) and `call()`,
 * which runs one and answers with text. Bad arguments get an answer the model
 * can read and correct, never a crash.
 */
import { ClosedError, isEngramError, ValidationError } from '../errors.js';
import {
  TOOL_DEFINITIONS,
  type AnthropicTool,
  type JsonSchema,
  type JsonSchemaType,
  type OpenAiTool,
  type ToolDefinition,
} from './tool-definitions.js';
import { checkOptions, id, optional, withDefault, type OptionsSpec } from '../util/options.js';
import type { Scope, TOOLS_SCOPE_FIELDS } from '../store/scope.js';
import type { Engram } from '../engram.js';
import type { RecallPage } from '../memory/recall-memory.js';

export { TOOL_DEFINITIONS } from './tool-definitions.js';
export type { AnthropicTool, JsonSchema, JsonSchemaType, OpenAiTool, ToolDefinition } from './tool-definitions.js';

/** May the argument be left out (null or absent)? */
const isNullable = (schema: JsonSchema): boolean => typeof schema.type !== 'string';
/** The type of a value that is given (not null). */
const baseType = (schema: JsonSchema): JsonSchemaType =>
  typeof schema.type === 'string' ? schema.type : schema.type[0];

const PAGE_SIZE = 5;

/**
 * Checks arguments against a tool's schema (types, required, no extras) and
 * returns them without the nullable ones left out or null (null means absent).
 */
function checkArgs(def: ToolDefinition, args: unknown): Record<string, unknown> {
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw new ValidationError('arguments', 'must be a JSON object');
  const record = args as Record<string, unknown>;
  const props = def.parameters.properties ?? {};
  checkArgNames(record, props, def.parameters.required ?? []);
  const given: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(props)) {
    const v = record[key];
    if (v === undefined || (v === null && isNullable(schema))) continue;
    given[key] = v;
    checkArgType(key, schema, v);
  }
  return given;
}

/** Throws on an argument the tool does not take, or a required one (not nullable) left out. */
function checkArgNames(
  record: Record<string, unknown>,
  props: Record<string, JsonSchema>,
  required: readonly string[],
): void {
  // Own properties only: `key in props` would take `constructor`, `toString` or `__proto__` for arguments.
  for (const key of Object.keys(record))
    if (!Object.hasOwn(props, key))
      throw new ValidationError('arguments', `unknown argument "${key}"; expected ${Object.keys(props).join(', ')}`);
  for (const key of required)
    if (record[key] === undefined && props[key] !== undefined && !isNullable(props[key]))
      throw new ValidationError('arguments', `missing required argument "${key}"`);
}

/** Throws unless the given (not null) argument `v` has its schema's type (an integer's minimum, an array's strings and length). */
function checkArgType(key: string, schema: JsonSchema, v: unknown): void {
  const type = baseType(schema);
  const ok =
    type === 'string'
      ? typeof v === 'string'
      : type === 'integer'
        ? Number.isInteger(v) && (schema.minimum === undefined || (v as number) >= schema.minimum)
        : type === 'array'
          ? Array.isArray(v) && v.every((x) => typeof x === 'string') && v.length >= (schema.minItems ?? 0)
          : true;
  if (!ok)
    throw new ValidationError(
      'arguments',
      `argument "${key}" must be ${type === 'array' ? 'a non-empty array of strings' : type === 'integer' ? `an integer${schema.minimum === undefined ? '' : ` >= ${schema.minimum}`}${isNullable(schema) ? ' or null' : ''}` : 'a string'}`,
    );
}

/** A tool's arguments as given: an object as is, the JSON string a model produced parsed ('' and null as no arguments). */
function parsedArgs(args: unknown): unknown {
  const parsed: unknown = args ?? {};
  if (typeof parsed !== 'string') return parsed;
  try {
    return JSON.parse(parsed === '' ? '{}' : parsed);
  } catch {
    throw new ValidationError('arguments', 'not valid JSON');
  }
}

/** Who the tools act for. Every tool reads and writes inside this scope. */
export interface ToolsScope extends Pick<Scope, (typeof TOOLS_SCOPE_FIELDS)[number]> {
  /** Agent whose archival and core memory the tools use. @default 'agent' */
  agentId?: string;
  /**
   * The user the agent is talking to: long-term and archival memories, core
   * memory blocks and conversation searches are that user's only (plus the
   * agent's blocks set with `shared: true`).
   */
  userId?: string;
}

/** The checks of {@link ToolsScope}. */
const TOOLS_SCOPE_SPEC = {
  agentId: withDefault(id, 'agent'),
  userId: optional(id),
} satisfies OptionsSpec<ToolsScope>;

/**
 * Memory tools bound to one agent and user.
 * @example
 * const tools = new AgentTools(engram, { agentId: 'helper', userId: 'ana' })
 * const reply = await openai.chat.completions.create({ model, messages, tools: tools.openai() })
 * for (const call of reply.choices[0].message.tool_calls ?? []) await tools.call(call.function.name, call.function.arguments)
 */
export class AgentTools {
  readonly agentId: string;
  readonly userId: string | undefined;
  readonly #engram: Engram;

  /** Binds the tools to an open engram and a scope (agentId defaults to 'agent'). */
  constructor(engram: Engram, scope: ToolsScope = {}) {
    if (engram.closed) throw new ClosedError();
    const checked = checkOptions('scope', scope, TOOLS_SCOPE_SPEC);
    this.#engram = engram;
    this.agentId = checked.agentId;
    this.userId = checked.userId;
  }

  /** The definitions, format-neutral. */
  get definitions(): readonly ToolDefinition[] {
    return TOOL_DEFINITIONS;
  }

  /** The tools in OpenAI's `tools` format. */
  openai(): OpenAiTool[] {
    return TOOL_DEFINITIONS.map((d) => ({
      type: 'function',
      function: { name: d.name, description: d.description, parameters: d.parameters },
    }));
  }

  /** The tools in Anthropic's `tools` format. */
  anthropic(): AnthropicTool[] {
    return TOOL_DEFINITIONS.map((d) => ({ name: d.name, description: d.description, input_schema: d.parameters }));
  }

  /**
   * Runs a tool and answers with text for the model. `args` may be an object or
   * the JSON string a model produced. Problems come back as text starting with "Error:".
   */
  async call(name: string, args: unknown): Promise<string> {
    const def = TOOL_DEFINITIONS.find((d) => d.name === name);
    if (def === undefined)
      return `Error: unknown tool "${name}". Available tools: ${TOOL_DEFINITIONS.map((d) => d.name).join(', ')}.`;
    try {
      return await this.#run(name, checkArgs(def, parsedArgs(args)));
    } catch (e) {
      if (isEngramError(e) && e.code === 'VALIDATION')
        return `Error: ${name}: ${e.message}. Call it again with corrected arguments.`;
      if (isEngramError(e) && e.code !== 'CLOSED' && e.code !== 'STORE' && e.code !== 'QUOTA_EXCEEDED')
        return `Error: ${name}: ${e.message}`;
      throw e;
    }
  }

  async #run(name: string, args: Record<string, unknown>): Promise<string> {
    const user = this.userId === undefined ? {} : { userId: this.userId };
    const bound: Bound = {
      engram: this.#engram,
      agentId: this.agentId,
      user,
      scope: { agentId: this.agentId, ...user },
    };
    // call() runs only the tools TOOL_DEFINITIONS lists, each in TOOL_RUNS.
    return TOOL_RUNS[name]!(bound, args);
  }
}

/** What a tool runs with: the engram and the scope the tools were bound to. */
interface Bound {
  engram: Engram;
  agentId: string;
  /** The user part of the scope, for the faces that take it as an option. */
  user: { userId?: string };
  scope: { agentId: string; userId?: string };
}

/** A tool's run, given arguments checked against its schema (checkArgs: each present one of its declared type). */
type ToolRun = (bound: Bound, args: Record<string, unknown>) => Promise<string>;

/** The page asked for (0 when none). */
const pageOf = (args: Record<string, unknown>): number => (args['page'] as number | undefined) ?? 0;

/** Recall's page of messages as the model reads it. */
function messagePage(page: RecallPage, pageNo: number): string {
  return pageText(
    page.results.map((x) => `[${x.timestamp}] ${x.role}: ${x.content}`),
    page.total,
    pageNo,
  );
}

/** Each tool's run by its name in TOOL_DEFINITIONS. */
const TOOL_RUNS: Readonly<Record<string, ToolRun>> = {
  save_to_memory: async ({ engram, scope }, a) =>
    (
      await engram
        .persistent(scope)
        .saveToMemory({ thinking: a['thinking'] as string, content: a['content'] as string[] })
    ).message,
  recall_from_memory: async ({ engram, scope }, a) => {
    const limit = a['limit'] as number | undefined;
    const r = await engram
      .persistent(scope)
      .recallFromMemory({ keywords: a['keywords'] as string[], ...(limit === undefined ? {} : { limit }) });
    return r.memories === undefined || r.memories.length === 0
      ? 'No memories found.'
      : r.memories.map((m) => `- ${m}`).join('\n');
  },
  archival_memory_insert: async ({ engram, agentId, user }, a) => {
    await engram.archival(agentId, user).insert(a['content'] as string);
    return 'Inserted into archival memory.';
  },
  archival_memory_search: async ({ engram, agentId, user }, a) => {
    const r = await engram
      .archival(agentId, user)
      .search(a['query'] as string, { count: PAGE_SIZE, start: pageOf(a) * PAGE_SIZE });
    return pageText(
      r.results.map((x) => `[${x.timestamp}] ${x.content}`),
      r.total,
      pageOf(a),
    );
  },
  conversation_search: async ({ engram, scope }, a) => {
    const paging = { count: PAGE_SIZE, start: pageOf(a) * PAGE_SIZE };
    return messagePage(await engram.recall.textSearch(a['query'] as string, { ...scope, ...paging }), pageOf(a));
  },
  conversation_search_date: async ({ engram, scope }, a) => {
    const paging = { count: PAGE_SIZE, start: pageOf(a) * PAGE_SIZE };
    const end = endOfDay(a['end_date'] as string);
    const page = await engram.recall.dateSearch(a['start_date'] as string, end, { ...scope, ...paging });
    return messagePage(page, pageOf(a));
  },
  core_memory_append: async ({ engram, agentId, user }, a) => {
    const b = await engram.blocks(agentId, user).append(a['label'] as string, a['content'] as string);
    return `Block "${b.label}" now reads:\n${b.value}`;
  },
  core_memory_replace: async ({ engram, agentId, user }, a) => {
    const b = await engram
      .blocks(agentId, user)
      .replace(a['label'] as string, a['old_content'] as string, a['new_content'] as string);
    return `Block "${b.label}" now reads:\n${b.value}`;
  },
};

/** A bare YYYY-MM-DD end date covers the whole day. */
function endOfDay(value: string): string | number {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T23:59:59.999Z`) : value;
}

function pageText(lines: string[], total: number, pageNo: number): string {
  if (total === 0) return 'No results found.';
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  if (lines.length === 0) return `No results on page ${pageNo} (${total} results in ${pages} pages).`;
  return `Showing ${lines.length} of ${total} results (page ${pageNo + 1}/${pages}):\n${lines.join('\n')}`;
}
