/**
 * lib/llm: the optional language model. A ChatModel is any async function from
 * chat messages to a reply; `openAiCompatible()` makes one for an
 * OpenAI-compatible chat-completions endpoint (a local Ollama or llama.cpp
 * server keeps everything on the device). Must not import the engine.
 */
import { AbortError, LlmError, ValidationError, type EngramError } from '../errors.js';
import { isPlainObject } from '../util/validate.js';
import { abortFailure, boundedText, withinIdle } from './bounded-body.js';
import { readCompletionStream } from './completion-stream.js';

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
  /**
   * Called with each piece of the reply's text as it arrives. An OpenAI-compatible
   * endpoint is then asked to stream (`stream: true`); a server that answers in one
   * piece, or a model function, gives the whole text at once (or never calls it).
   */
  onDelta?: (text: string) => void;
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
  /** Give up after this long. @default 60000, or 600000 for a streamed answer (tokens keep coming) */
  timeoutMs?: number;
  /**
   * Give up when the server sends nothing for this long: before its headers, or
   * between two pieces of its answer (a server that stalls).
   * @default 30000
   */
  idleTimeoutMs?: number;
  /** Most bytes an answer may have. @default 8388608 (8 MiB) */
  maxResponseBytes?: number;
  /** @default 0 */
  temperature?: number;
}

/** The deadline of one model call when none is given (a streamed answer gets {@link DEFAULT_STREAM_TIMEOUT_MS}). */
export const DEFAULT_MODEL_TIMEOUT_MS = 60_000;
/** A streamed answer's deadline when none is given: the stall bound guards it between tokens. */
export const DEFAULT_STREAM_TIMEOUT_MS = 600_000;
/** Longest silence of a model server when none is given. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
/** Largest answer when none is given. */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

function optionalPositive(field: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new ValidationError(field, 'must be a positive number');
  return value;
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
  if (!isPlainObject(message)) throw new LlmError('the response has no choices[0].message', { reason: 'malformed' });
  const content = message['content'];
  if (content !== null && content !== undefined && typeof content !== 'string')
    throw new LlmError('choices[0].message.content is not text', { reason: 'malformed' });
  const reply: ModelReply = { content: content ?? '' };
  const calls = message['tool_calls'];
  if (Array.isArray(calls) && calls.length > 0) reply.toolCalls = calls.map(toolCallOf);
  return reply;
}

/** The `i`-th of a completion's `tool_calls` as a ToolCall (arguments as JSON text), or throws LlmError. */
function toolCallOf(c: unknown, i: number): ToolCall {
  const fn = isPlainObject(c) ? c['function'] : undefined;
  if (!isPlainObject(c) || !isPlainObject(fn) || typeof fn['name'] !== 'string')
    throw new LlmError(`tool_calls[${i}] is malformed`, { reason: 'malformed' });
  const args = fn['arguments'];
  return {
    id: typeof c['id'] === 'string' ? c['id'] : `call_${i}`,
    name: fn['name'],
    arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
  };
}

/**
 * A ChatModel for an OpenAI-compatible `/chat/completions` endpoint (Ollama,
 * llama.cpp's server, LM Studio, vLLM…). With `onDelta` it asks for a stream and
 * reports the text as it comes. The answer is untrusted: it is read within a
 * deadline, an idle bound and a size bound, and every way it can fail is an
 * LlmError with a `reason` (or AbortError when the caller's signal fired).
 * @example
 * const llm = openAiCompatible({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2' })
 * await llm(messages, { onDelta: (text) => output.append(text) })
 */
export function openAiCompatible(options: OpenAiCompatibleOptions): ChatModel {
  const endpoint = checkedEndpoint(options);
  return async (messages, call = {}) => {
    const stream = call.onDelta !== undefined;
    const deadline = deadlineOf(
      endpoint.url,
      endpoint.timeoutMs ?? (stream ? DEFAULT_STREAM_TIMEOUT_MS : DEFAULT_MODEL_TIMEOUT_MS),
    );
    const signal = call.signal === undefined ? deadline.signal : AbortSignal.any([call.signal, deadline.signal]);
    const bounds: AnswerBounds = { idleMs: endpoint.idleMs, maxBytes: endpoint.maxBytes, signal, url: endpoint.url };
    try {
      const response = await post(endpoint, requestBody(endpoint, messages, call), bounds);
      return await readReply(response, bounds, call);
    } finally {
      deadline.clear();
    }
  };
}

/** An OpenAI-compatible endpoint's options, checked, with their defaults. */
interface Endpoint {
  /** The `/chat/completions` URL. */
  url: string;
  model: string;
  apiKey: string | undefined;
  temperature: number;
  timeoutMs: number | undefined;
  idleMs: number;
  maxBytes: number;
}

/** How an answer is read: within an idle bound and a size bound, until `signal` fires. */
interface AnswerBounds {
  idleMs: number;
  maxBytes: number;
  signal: AbortSignal;
  url: string;
}

function checkedEndpoint(options: OpenAiCompatibleOptions): Endpoint {
  if (!isPlainObject(options)) throw new ValidationError('llm', 'must be { baseUrl, model, apiKey? } or a function');
  if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl))
    throw new ValidationError('llm.baseUrl', 'must be an http(s) URL');
  if (typeof options.model !== 'string' || options.model === '')
    throw new ValidationError('llm.model', 'must be a non-empty string');
  return {
    url: `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`,
    model: options.model,
    apiKey: options.apiKey,
    temperature: options.temperature ?? 0,
    timeoutMs: optionalPositive('llm.timeoutMs', options.timeoutMs),
    idleMs: optionalPositive('llm.idleTimeoutMs', options.idleTimeoutMs) ?? DEFAULT_IDLE_TIMEOUT_MS,
    maxBytes: optionalPositive('llm.maxResponseBytes', options.maxResponseBytes) ?? DEFAULT_MAX_RESPONSE_BYTES,
  };
}

/** A call's deadline: it aborts with its own LlmError, so every reader reports it as a timeout, not an abort. */
function deadlineOf(url: string, ms: number): { signal: AbortSignal; clear: () => void } {
  const deadline = new AbortController();
  const timer = setTimeout(() => {
    deadline.abort(new LlmError(`${url} did not finish its answer within ${ms} ms`, { reason: 'timeout' }));
  }, ms);
  return {
    signal: deadline.signal,
    clear: () => {
      clearTimeout(timer);
    },
  };
}

function requestBody(
  endpoint: Endpoint,
  messages: readonly ChatTurn[],
  call: ChatCallOptions,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: endpoint.model,
    messages: messages.map(toWire),
    temperature: endpoint.temperature,
  };
  if (call.onDelta !== undefined) body['stream'] = true;
  if (call.tools !== undefined && call.tools.length > 0) body['tools'] = call.tools;
  if (call.json === true) body['response_format'] = { type: 'json_object' };
  return body;
}

/** POSTs the request; an unreachable server is an LlmError, and one that never answers is dropped at the idle bound. */
function post(endpoint: Endpoint, body: Record<string, unknown>, bounds: AnswerBounds): Promise<Response> {
  const { url, apiKey } = endpoint;
  const { signal } = bounds;
  // fetch() itself gets an abort of its own, so a server that never answers is dropped at the idle bound too.
  const request = new AbortController();
  const sent = fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
    },
    body: JSON.stringify(body),
    signal: AbortSignal.any([signal, request.signal]),
  }).catch((e: unknown) => {
    if (signal.aborted) throw abortFailure(signal, 'the model call');
    throw new LlmError(`could not reach ${url}: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
      reason: 'unreachable',
    });
  });
  return withinIdle(sent, bounds, () => {
    request.abort();
  });
}

/** The answer: streamed text as it comes (when asked and the server streams), else one JSON completion. */
async function readReply(response: Response, bounds: AnswerBounds, call: ChatCallOptions): Promise<ModelReply> {
  const { url } = bounds;
  const type = response.headers.get('content-type') ?? '';
  if (response.ok && call.onDelta !== undefined && type.includes('text/event-stream') && response.body !== null)
    return readCompletionStream(response.body, bounds, call.onDelta);
  const text = await boundedText(response.body, bounds);
  if (!response.ok)
    throw new LlmError(`${url} answered ${response.status}: ${text.slice(0, 200)}`, { reason: 'status' });
  const reply = parseCompletion(parsedAnswer(text, url));
  // A server that does not stream answers in one piece.
  if (reply.content !== '') call.onDelta?.(reply.content);
  return reply;
}

/** The answer's text parsed as JSON, or LlmError `malformed`. */
function parsedAnswer(text: string, url: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new LlmError(`${url} answered with something that is not JSON: ${text.slice(0, 200)}`, {
      cause: e,
      reason: 'malformed',
    });
  }
}

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
      : new LlmError(`the model did not answer within ${timeoutMs} ms`, { reason: 'timeout' });
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
