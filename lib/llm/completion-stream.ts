/**
 * A streamed chat completion (`stream: true`): server-sent events whose `data:`
 * lines are JSON chunks with `choices[0].delta` (content and tool-call pieces),
 * ended by `data: [DONE]`. The events are untrusted: an event larger than
 * `MAX_EVENT_CHARS`, data that is not JSON or not a chunk, an error event, or a
 * stream that ends before `[DONE]` or a `finish_reason` is an LlmError, never a
 * half reply.
 */
import { LlmError } from '../errors.js';
import { isPlainObject } from '../util/validate.js';
import { boundedChunks, type BodyBounds } from './bounded-body.js';
import type { ModelReply, ToolCall } from './chat-model.js';

/** Longest single event (its data lines together), in characters. */
export const MAX_EVENT_CHARS = 1024 * 1024;

/** The terminator OpenAI-compatible servers send as the last event's data. */
const DONE = '[DONE]';

/**
 * Splits server-sent events text into the data of each event
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
 * lines end in CRLF, LF or CR; `data:` lines of one event are joined by LF; a blank line
 * ends the event; comments (`:`) and other fields are skipped.
 */
export class SseDecoder {
  #buffer = '';
  #data: string[] = [];
  #dataChars = 0;
  #sawData = false;

  /** Feeds text; returns the data of every event it completed. */
  push(text: string): string[] {
    this.#buffer += text;
    const events: string[] = [];
    for (;;) {
      const end = this.#buffer.search(/\r\n|\r|\n/);
      // A lone CR at the end may be the first half of a CRLF: wait for the next text.
      if (end === -1 || (end === this.#buffer.length - 1 && this.#buffer.endsWith('\r'))) break;
      const line = this.#buffer.slice(0, end);
      const width = this.#buffer.startsWith('\r\n', end) ? 2 : 1;
      this.#buffer = this.#buffer.slice(end + width);
      this.#line(line, events);
    }
    if (this.#buffer.length + this.#dataChars > MAX_EVENT_CHARS) {
      throw new LlmError(`an event of the model's stream is longer than ${MAX_EVENT_CHARS} characters`, {
        reason: 'too-large',
      });
    }
    return events;
  }

  /** The stream ended: the data of an event left without its blank line (servers that omit the last one). */
  end(): string[] {
    const events: string[] = [];
    if (this.#buffer !== '') this.#line(this.#buffer, events);
    this.#buffer = '';
    this.#line('', events);
    return events;
  }

  #line(line: string, events: string[]): void {
    if (line === '') {
      if (this.#sawData) events.push(this.#data.join('\n'));
      this.#data = [];
      this.#dataChars = 0;
      this.#sawData = false;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== 'data') return;
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    this.#data.push(value);
    this.#dataChars += value.length + 1;
    this.#sawData = true;
  }
}

interface PartialCall {
  id: string | undefined;
  name: string;
  arguments: string;
}

/**
 * Collects the chunks of one streamed completion into a reply.
 * @example
 * const reply = new StreamedReply(url); for (const data of events) onDelta(reply.apply(data)); reply.finish()
 */
export class StreamedReply {
  readonly #url: string;
  #content = '';
  readonly #calls: PartialCall[] = [];
  #finished = false;
  #done = false;

  constructor(url: string) {
    this.#url = url;
  }

  /** True once `[DONE]` came. */
  get done(): boolean {
    return this.#done;
  }

  /** Applies one event's data; returns the text it added to the reply ('' for none). */
  apply(data: string): string {
    if (this.#done) return '';
    if (data.trim() === DONE) {
      this.#done = true;
      return '';
    }
    const delta = this.#deltaOf(this.#chunkOf(data));
    if (delta === undefined) return '';
    const content = delta['content'];
    if (content !== undefined && content !== null && typeof content !== 'string')
      throw this.#malformed('choices[0].delta.content that is not text');
    const calls = delta['tool_calls'];
    if (calls !== undefined && calls !== null) this.#applyCalls(calls);
    const text = content ?? '';
    this.#content += text;
    return text;
  }

  /** The reply; throws when the stream ended before `[DONE]` or a finish reason. */
  finish(): ModelReply {
    if (!this.#done && !this.#finished)
      throw new LlmError(`${this.#url} ended its stream before the answer was complete`, { reason: 'malformed' });
    const reply: ModelReply = { content: this.#content };
    if (this.#calls.length > 0) {
      reply.toolCalls = this.#calls.map((c, i): ToolCall => ({
        id: c.id ?? `call_${i}`,
        name: c.name,
        arguments: c.arguments === '' ? '{}' : c.arguments,
      }));
    }
    return reply;
  }

  /** The event's data as a chunk object; throws on data that is not JSON, not an object, or a streamed error. */
  #chunkOf(data: string): Record<string, unknown> {
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch (e) {
      throw new LlmError(`${this.#url} streamed an event that is not JSON: ${data.slice(0, 200)}`, {
        cause: e,
        reason: 'malformed',
      });
    }
    if (!isPlainObject(chunk)) throw this.#malformed('an event that is not a JSON object');
    if (chunk['error'] !== undefined) {
      const error = chunk['error'];
      const message =
        isPlainObject(error) && typeof error['message'] === 'string' ? error['message'] : JSON.stringify(error);
      throw new LlmError(`${this.#url} streamed an error: ${message.slice(0, 200)}`, { reason: 'status' });
    }
    return chunk;
  }

  /** The chunk's `choices[0].delta` (noting a finish reason), or undefined when it carries none. */
  #deltaOf(chunk: Record<string, unknown>): Record<string, unknown> | undefined {
    const choices = chunk['choices'];
    if (!Array.isArray(choices)) throw this.#malformed('a chunk without choices');
    // A usage-only chunk (stream_options.include_usage) has no choices.
    const choice: unknown = choices[0];
    if (choice === undefined) return undefined;
    if (!isPlainObject(choice)) throw this.#malformed('choices[0] that is not an object');
    if (typeof choice['finish_reason'] === 'string') this.#finished = true;
    const delta = choice['delta'];
    if (delta === undefined || delta === null) return undefined;
    if (!isPlainObject(delta)) throw this.#malformed('choices[0].delta that is not an object');
    return delta;
  }

  #applyCalls(calls: unknown): void {
    if (!Array.isArray(calls)) throw this.#malformed('choices[0].delta.tool_calls that is not an array');
    for (const [i, piece] of (calls as unknown[]).entries()) {
      if (!isPlainObject(piece)) throw this.#malformed(`tool_calls[${i}] that is not an object`);
      const index = piece['index'] ?? i;
      // Pieces name their call by index; a gap or a huge index is not a stream any server sends.
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > this.#calls.length)
        throw this.#malformed(`tool_calls[${i}].index ${JSON.stringify(index)} out of order`);
      const call = (this.#calls[index] ??= { id: undefined, name: '', arguments: '' });
      if (typeof piece['id'] === 'string') call.id = piece['id'];
      const fn = piece['function'];
      if (fn === undefined) continue;
      if (!isPlainObject(fn)) throw this.#malformed(`tool_calls[${i}].function that is not an object`);
      if (typeof fn['name'] === 'string') call.name += fn['name'];
      if (typeof fn['arguments'] === 'string') call.arguments += fn['arguments'];
    }
  }

  #malformed(what: string): LlmError {
    return new LlmError(`${this.#url} streamed ${what}`, { reason: 'malformed' });
  }
}

/**
 * Reads a streamed completion from `body`, calling `onDelta` with each piece of
 * text as it arrives, within the bounds (idle time, bytes, signal).
 * @example
 * const reply = await readCompletionStream(response.body, { idleMs: 30_000, maxBytes: 8 << 20, url }, (t) => show(t))
 */
export async function readCompletionStream(
  body: ReadableStream<Uint8Array>,
  bounds: BodyBounds,
  onDelta: (text: string) => void,
): Promise<ModelReply> {
  const decoder = new TextDecoder();
  const sse = new SseDecoder();
  const reply = new StreamedReply(bounds.url);
  const apply = (events: readonly string[]): void => {
    for (const data of events) {
      const text = reply.apply(data);
      if (text !== '') onDelta(text);
    }
  };
  for await (const chunk of boundedChunks(body, bounds)) {
    apply(sse.push(decoder.decode(chunk, { stream: true })));
    // Servers keep the connection open a moment after [DONE]; the answer is complete.
    if (reply.done) return reply.finish();
  }
  apply(sse.push(decoder.decode()));
  apply(sse.end());
  return reply.finish();
}
