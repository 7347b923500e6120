/**
 * lib/llm: the optional language model. A ChatModel is any async function from
 * chat messages to a reply; `openAiCompatible()` makes one for an
 * OpenAI-compatible chat-completions endpoint (a local Ollama or llama.cpp
 * server keeps everything on the device). Must not import the engine.
 */
import { AbortError, LlmError, ValidationError, type EngramError } from '../errors.js';
import { isPlainObject } from '../util/validate.js';

/** A message sent to the model. */
export interface ChatTurn {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  name?: string;
  toolCallId?: string;
  toolCalls?: ToolCall[];
}

/** A function call the model asked for. */
export interface ToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments, as the model wrote it. */
  arguments: string;
}

/** What a model answers. */
export interface ModelReply {
  content: string;
  toolCalls?: ToolCall[];
}

/** Options of one model call. */
export interface ChatCallOptions {
  /** Tools the model may call (OpenAI format). */
  tools?: unknown[];
  /** Ask for a JSON object answer where the server supports it. */
  json?: boolean;
  signal?: AbortSignal;
}

/** Any chat model engram can use. */
export type ChatModel = (messages: ChatTurn[], options?: ChatCallOptions) => Promise<ModelReply>;

/** A plain function that answers with text (or a full reply). */
export type ChatFunction = (messages: ChatTurn[], options?: ChatCallOptions) => Promise<string | ModelReply>;

/** Settings of an OpenAI-compatible endpoint. */
export interface OpenAiCompatibleOptions {
  /** Base URL up to and including `/v1`. @example 'http://127.0.0.1:11434/v1' */
  baseUrl: string;
  /** Model name. @example 'llama3.2' */
  model: string;
  /** Bearer key, when the server wants one. */
  apiKey?: string;
  /** Give up after this long. @default 60000 */
  timeoutMs?: number;
  /** @default 0 */
  temperature?: number;
}

/** Either kind of LLM option engram accepts. */
export type LlmOption = OpenAiCompatibleOptions | ChatFunction;

interface WireMessage {
  role: string;
  content: string | null;
  name?: string;
  tool_call_id?: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
}

function toWire(m: ChatTurn): WireMessage {
  const w: WireMessage = { role: m.role, content: m.content };
  if (m.name !== undefined) w.name = m.name;
  if (m.toolCallId !== undefined) w.tool_call_id = m.toolCallId;
  if (m.toolCalls !== undefined)
    w.tool_calls = m.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  return w;
}

/** Reads a chat-completions response body into a reply, or throws LlmError. */
export function parseCompletion(body: unknown): ModelReply {
  const choice: unknown =
    isPlainObject(body) && Array.isArray(body['choices']) ? (body['choices'] as unknown[])[0] : undefined;
  const message = isPlainObject(choice) ? choice['message'] : undefined;
  if (!isPlainObject(message)) throw new LlmError('the response has no choices[0].message');
  const content = message['content'];
  if (content !== null && content !== undefined && typeof content !== 'string')
    throw new LlmError('choices[0].message.content is not text');
  const reply: ModelReply = { content: content ?? '' };
  const calls = message['tool_calls'];
  if (Array.isArray(calls) && calls.length > 0) {
    reply.toolCalls = calls.map((c: unknown, i) => {
      const fn = isPlainObject(c) ? c['function'] : undefined;
      if (!isPlainObject(c) || !isPlainObject(fn) || typeof fn['name'] !== 'string')
        throw new LlmError(`tool_calls[${i}] is malformed`);
      const args = fn['arguments'];
      return {
        id: typeof c['id'] === 'string' ? c['id'] : `call_${i}`,
        name: fn['name'],
        arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
      };
    });
  }
  return reply;
}

/**
 * A ChatModel for an OpenAI-compatible `/chat/completions` endpoint.
 * @example
 * const llm = openAiCompatible({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2' })
 */
export function openAiCompatible(options: OpenAiCompatibleOptions): ChatModel {
  if (!isPlainObject(options)) throw new ValidationError('llm', 'must be { baseUrl, model, apiKey? } or a function');
  if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl))
    throw new ValidationError('llm.baseUrl', 'must be an http(s) URL');
  if (typeof options.model !== 'string' || options.model === '')
    throw new ValidationError('llm.model', 'must be a non-empty string');
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const timeoutMs = options.timeoutMs ?? 60_000;
  return async (messages, call = {}) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = call.signal === undefined ? timeout : AbortSignal.any([call.signal, timeout]);
    const body: Record<string, unknown> = {
      model: options.model,
      messages: messages.map(toWire),
      temperature: options.temperature ?? 0,
    };
    if (call.tools !== undefined && call.tools.length > 0) body['tools'] = call.tools;
    if (call.json === true) body['response_format'] = { type: 'json_object' };
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` }),
        },
        body: JSON.stringify(body),
        signal,
      });
    } catch (e) {
      if (call.signal?.aborted === true) throw new AbortError('the model call was aborted', { cause: e });
      throw new LlmError(`could not reach ${url}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
    let text: string;
    try {
      text = await response.text();
    } catch (e) {
      // The headers came, the body stalled or broke off (the timeout or the caller's signal ended it).
      if (call.signal?.aborted === true) throw new AbortError('the model call was aborted', { cause: e });
      throw new LlmError(`${url} stopped sending its answer: ${e instanceof Error ? e.message : String(e)}`, {
        cause: e,
      });
    }
    if (!response.ok) throw new LlmError(`${url} answered ${response.status}: ${text.slice(0, 200)}`);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new LlmError(`${url} answered with something that is not JSON: ${text.slice(0, 200)}`, { cause: e });
    }
    return parseCompletion(json);
  };
}

/** The deadline of one model call when none is given. */
export const DEFAULT_MODEL_TIMEOUT_MS = 60_000;

/**
 * Calls `model` with a deadline and the caller's signal, and settles as soon as
 * either fires even when the model ignores its signal (a function that never
 * resolves, a server that sends headers and then stalls): past the deadline it
 * rejects with LlmError, on abort with AbortError.
 * @example
 * const reply = await callModel(model, messages, { json: true, timeoutMs: 30_000, signal })
 */
export function callModel(
  model: ChatModel,
  messages: ChatTurn[],
  options: ChatCallOptions & { timeoutMs: number },
): Promise<ModelReply> {
  const { timeoutMs, signal, ...rest } = options;
  const deadline = new AbortController();
  const combined = signal === undefined ? deadline.signal : AbortSignal.any([signal, deadline.signal]);
  const failure = (): EngramError =>
    signal?.aborted === true
      ? new AbortError('the model call was aborted', { cause: signal.reason })
      : new LlmError(`the model did not answer within ${timeoutMs} ms`);
  return new Promise<ModelReply>((resolve, reject) => {
    const timer = setTimeout(() => {
      deadline.abort();
    }, timeoutMs);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(failure());
    };
    if (combined.aborted) {
      onAbort();
      return;
    }
    combined.addEventListener('abort', onAbort, { once: true });
    model(messages, { ...rest, signal: combined })
      .finally(() => {
        clearTimeout(timer);
        combined.removeEventListener('abort', onAbort);
      })
      .then(resolve, (e: unknown) => {
        reject(combined.aborted ? failure() : e instanceof Error ? e : new LlmError(`the model failed: ${String(e)}`));
      });
  });
}

/** Turns the `llm` option into a ChatModel. */
export function toChatModel(llm: LlmOption): ChatModel {
  if (typeof llm !== 'function') return openAiCompatible(llm);
  return async (messages, options) => {
    let reply: string | ModelReply;
    try {
      reply = await llm(messages, options);
    } catch (e) {
      if (e instanceof LlmError || e instanceof AbortError) throw e;
      throw new LlmError(`the llm function failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
    if (typeof reply === 'string') return { content: reply };
    if (!isPlainObject(reply) || typeof reply.content !== 'string')
      throw new LlmError('the llm function must answer with text or { content }');
    return reply;
  };
}
