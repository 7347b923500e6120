import { describe, expect, it } from 'vitest';
import { LlmError } from '../../lib/errors.js';
import { MAX_EVENT_CHARS, SseDecoder, StreamedReply, readCompletionStream } from '../../lib/llm/completion-stream.js';
import { streamChunk } from './scripted-server.js';

const URL = 'http://127.0.0.1:1/v1/chat/completions';

/** A body that hands out `parts` as separate chunks. */
function body(parts: readonly string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < parts.length) controller.enqueue(encoder.encode(parts[i++]));
      else controller.close();
    },
  });
}

function reason(e: unknown): string | undefined {
  return e instanceof LlmError ? e.reason : undefined;
}

describe('SseDecoder', () => {
  it('push() returns the data of each event, across chunk borders and line-ending styles', () => {
    const sse = new SseDecoder();
    expect(sse.push('data: {"a":')).toEqual([]);
    expect(sse.push('1}\r')).toEqual([]);
    // The CR above may have been half of a CRLF: the LF that follows ends the same line.
    expect(sse.push('\n\r\n')).toEqual(['{"a":1}']);
    expect(sse.push(': a comment\nevent: message\nid: 7\ndata: one\ndata:two\n\n')).toEqual(['one\ntwo']);
    expect(sse.push('data: x\r\rdata: y\n\n')).toEqual(['x', 'y']);
    expect(sse.push('retry: 10\n\n')).toEqual([]);
  });

  it('end() gives an event the server left without its blank line', () => {
    const sse = new SseDecoder();
    expect(sse.push('data: [DONE]')).toEqual([]);
    expect(sse.end()).toEqual(['[DONE]']);
  });

  it('push() refuses an event longer than MAX_EVENT_CHARS', () => {
    const sse = new SseDecoder();
    let caught: unknown;
    try {
      sse.push(`data: ${'x'.repeat(MAX_EVENT_CHARS)}`);
    } catch (e) {
      caught = e;
    }
    expect(reason(caught)).toBe('too-large');
  });
});

describe('StreamedReply', () => {
  it('apply() adds content deltas and tool-call pieces; finish() gives the reply', () => {
    const reply = new StreamedReply(URL);
    expect(reply.apply('{"choices":[{"index":0,"delta":{"role":"assistant"}}]}')).toBe('');
    expect(reply.apply('{"choices":[{"delta":{"content":"Hel"}}]}')).toBe('Hel');
    expect(reply.apply('{"choices":[{"delta":{"content":"lo"}}]}')).toBe('lo');
    reply.apply(
      '{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"recall","arguments":"{\\"q"}}]}}]}',
    );
    reply.apply('{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\":1}"}}]}}]}');
    reply.apply('{"choices":[],"usage":{"total_tokens":3}}');
    reply.apply('{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}');
    expect(reply.apply('[DONE]')).toBe('');
    expect(reply.done).toBe(true);
    expect(reply.finish()).toEqual({
      content: 'Hello',
      toolCalls: [{ id: 'c1', name: 'recall', arguments: '{"q":1}' }],
    });
  });

  it('apply() refuses garbage: not JSON, not a chunk, content that is not text, an index out of order', () => {
    const cases = [
      'not json',
      '[1,2]',
      '{"object":"chat.completion.chunk"}',
      '{"choices":["x"]}',
      '{"choices":[{"delta":{"content":42}}]}',
      '{"choices":[{"delta":"text"}]}',
      '{"choices":[{"delta":{"tool_calls":[{"index":5,"function":{"name":"x"}}]}}]}',
      '{"choices":[{"delta":{"tool_calls":{"index":0}}}]}',
    ];
    for (const data of cases) {
      expect(() => new StreamedReply(URL).apply(data), data).toThrow(LlmError);
      try {
        new StreamedReply(URL).apply(data);
      } catch (e) {
        expect(reason(e), data).toBe('malformed');
      }
    }
  });

  it('apply() turns an error event into an LlmError with its message', () => {
    expect(() => new StreamedReply(URL).apply('{"error":{"message":"model not found"}}')).toThrow(/model not found/);
  });

  it('finish() refuses a stream cut before [DONE] or a finish reason', () => {
    const reply = new StreamedReply(URL);
    reply.apply('{"choices":[{"delta":{"content":"half"}}]}');
    expect(() => reply.finish()).toThrow(/before the answer was complete/);
  });
});

describe('readCompletionStream', () => {
  it('readCompletionStream() reports each delta in order and returns the whole reply', async () => {
    const deltas: string[] = [];
    const reply = await readCompletionStream(
      body([
        'data: {"choices":[{"delta":{"role":"assistant"}}]}\n\n',
        streamChunk('I re'),
        streamChunk('member'),
        'data: [DO',
        'NE]\n\n',
      ]),
      { idleMs: 5000, maxBytes: 1 << 20, url: URL },
      (t) => deltas.push(t),
    );
    expect(deltas).toEqual(['I re', 'member']);
    expect(reply).toEqual({ content: 'I remember' });
  });

  it('readCompletionStream() stops at [DONE] even when the server keeps the body open', async () => {
    let pulls = 0;
    const encoder = new TextEncoder();
    const open = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        if (pulls === 1) controller.enqueue(encoder.encode(`${streamChunk('ok')}data: [DONE]\n\n`));
        // Then nothing, ever: without the stop at [DONE] the idle bound would end the read.
        return new Promise(() => undefined);
      },
    });
    expect(await readCompletionStream(open, { idleMs: 60_000, maxBytes: 1 << 20, url: URL }, () => undefined)).toEqual({
      content: 'ok',
    });
  });

  it('readCompletionStream() fails as stalled when no chunk comes within idleMs, and cancels the body', async () => {
    let cancelled = false;
    const encoder = new TextEncoder();
    let sent = false;
    const stalled = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!sent) {
          sent = true;
          controller.enqueue(encoder.encode(streamChunk('half')));
          return undefined;
        }
        return new Promise(() => undefined);
      },
      cancel() {
        cancelled = true;
      },
    });
    const deltas: string[] = [];
    const error = await readCompletionStream(stalled, { idleMs: 100, maxBytes: 1 << 20, url: URL }, (t) =>
      deltas.push(t),
    ).catch((e: unknown) => e);
    expect(reason(error)).toBe('stalled');
    expect(deltas).toEqual(['half']);
    expect(cancelled).toBe(true);
  });

  it('readCompletionStream() fails as too-large past maxBytes', async () => {
    const parts = Array.from({ length: 50 }, () => streamChunk('x'.repeat(100)));
    const error = await readCompletionStream(
      body(parts),
      { idleMs: 5000, maxBytes: 2000, url: URL },
      () => undefined,
    ).catch((e: unknown) => e);
    expect(reason(error)).toBe('too-large');
  });

  it('readCompletionStream() rejects with AbortError when the signal fires mid-stream', async () => {
    const controller = new AbortController();
    const never = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => undefined) });
    const reading = readCompletionStream(
      never,
      { idleMs: 60_000, maxBytes: 1 << 20, url: URL, signal: controller.signal },
      () => undefined,
    );
    controller.abort();
    await expect(reading).rejects.toMatchObject({ name: 'AbortError', code: 'ABORTED' });
  });
});
