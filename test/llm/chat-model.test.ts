import { afterEach, describe, expect, it } from 'vitest';
import { LlmError } from '../../lib/errors.js';
import { openAiCompatible } from '../../lib/llm/chat-model.js';
import { startScriptedServer, streamChunk, type ScriptedServer } from './scripted-server.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const USER = [{ role: 'user' as const, content: 'Where do I live?' }];

async function failure(p: Promise<unknown>): Promise<LlmError> {
  const e = await p.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(e).toBeInstanceOf(LlmError);
  return e as LlmError;
}

describe('openAiCompatible', () => {
  it('openAiCompatible() asks for a stream when given onDelta and reports the pieces as they arrive', async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    server = await startScriptedServer([{ stream: ['You ', 'live ', 'in Porto.'], hold }]);
    const model = openAiCompatible({ baseUrl: server.baseUrl, model: 'm' });
    const deltas: string[] = [];
    const reply = model(USER, {
      onDelta: (t) => {
        deltas.push(t);
        // The first piece is on screen while the server still holds the rest.
        if (deltas.length === 1) release();
      },
    });
    expect(await reply).toEqual({ content: 'You live in Porto.' });
    expect(deltas).toEqual(['You ', 'live ', 'in Porto.']);
    expect(server.requests[0]?.stream).toBe(true);
  });

  it('openAiCompatible() without onDelta asks for one JSON answer', async () => {
    server = await startScriptedServer([{ content: 'Porto.' }]);
    const model = openAiCompatible({ baseUrl: server.baseUrl, model: 'm' });
    expect(await model(USER)).toEqual({ content: 'Porto.' });
    expect(server.requests[0]?.stream).toBeUndefined();
  });

  it('openAiCompatible() takes a JSON answer from a server that does not stream, as one delta', async () => {
    server = await startScriptedServer([{ content: 'Porto.' }]);
    const deltas: string[] = [];
    const model = openAiCompatible({ baseUrl: server.baseUrl, model: 'm' });
    expect(await model(USER, { onDelta: (t) => deltas.push(t) })).toEqual({ content: 'Porto.' });
    expect(deltas).toEqual(['Porto.']);
  });

  it('openAiCompatible() fails as stalled when a stream stops mid-answer', async () => {
    server = await startScriptedServer([{ stream: ['You ', 'live'], stallAfter: 1 }]);
    const model = openAiCompatible({ baseUrl: server.baseUrl, model: 'm', idleTimeoutMs: 200 });
    const deltas: string[] = [];
    const e = await failure(model(USER, { onDelta: (t) => deltas.push(t) }));
    expect(e.reason).toBe('stalled');
    expect(e.message).toMatch(/sent nothing for 200 ms/);
    expect(deltas).toEqual(['You ']);
  });

  it('openAiCompatible() fails as stalled when a JSON answer stops after its headers', async () => {
    server = await startScriptedServer([{ stall: true }]);
    const model = openAiCompatible({ baseUrl: server.baseUrl, model: 'm', idleTimeoutMs: 200 });
    expect((await failure(model(USER))).reason).toBe('stalled');
  });

  it('openAiCompatible() fails as a timeout at its deadline even while tokens keep coming', async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    server = await startScriptedServer([{ stream: ['a', 'b'], hold }]);
    const model = openAiCompatible({ baseUrl: server.baseUrl, model: 'm', timeoutMs: 300, idleTimeoutMs: 10_000 });
    const e = await failure(model(USER, { onDelta: () => undefined }));
    release();
    expect(e.reason).toBe('timeout');
  });

  it('openAiCompatible() fails as malformed for a garbage stream and a stream cut before [DONE]', async () => {
    server = await startScriptedServer([
      { streamRaw: 'data: {"choices":[{"delta":{"content":"ok"}}]}\n\ndata: <html>oops</html>\n\n' },
      { streamRaw: streamChunk('half') },
    ]);
    const model = openAiCompatible({ baseUrl: server.baseUrl, model: 'm' });
    expect((await failure(model(USER, { onDelta: () => undefined }))).reason).toBe('malformed');
    expect((await failure(model(USER, { onDelta: () => undefined }))).reason).toBe('malformed');
  });

  it('openAiCompatible() fails as too-large past maxResponseBytes', async () => {
    server = await startScriptedServer([{ stream: Array.from({ length: 40 }, () => 'x'.repeat(100)) }]);
    const model = openAiCompatible({ baseUrl: server.baseUrl, model: 'm', maxResponseBytes: 1000 });
    expect((await failure(model(USER, { onDelta: () => undefined }))).reason).toBe('too-large');
  });

  it('openAiCompatible() reports an HTTP error as status and a closed port as unreachable', async () => {
    server = await startScriptedServer([{ status: 404, text: '{"error":"model \\"m\\" not found"}' }]);
    const model = openAiCompatible({ baseUrl: server.baseUrl, model: 'm' });
    const e = await failure(model(USER, { onDelta: () => undefined }));
    expect(e.reason).toBe('status');
    expect(e.message).toContain('404');
    const gone = server.baseUrl;
    await server.close();
    server = undefined;
    expect((await failure(openAiCompatible({ baseUrl: gone, model: 'm' })(USER))).reason).toBe('unreachable');
  });

  it('openAiCompatible() rejects with AbortError when the caller aborts a stream', async () => {
    server = await startScriptedServer([{ stream: ['a', 'b'], stallAfter: 1 }]);
    const model = openAiCompatible({ baseUrl: server.baseUrl, model: 'm' });
    const controller = new AbortController();
    const reply = model(USER, {
      signal: controller.signal,
      onDelta: () => {
        controller.abort();
      },
    });
    await expect(reply).rejects.toMatchObject({ name: 'AbortError', code: 'ABORTED' });
  });

  it('openAiCompatible() refuses bounds that are not positive numbers', () => {
    expect(() => openAiCompatible({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', idleTimeoutMs: 0 })).toThrow(
      /idleTimeoutMs/,
    );
    expect(() =>
      openAiCompatible({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', maxResponseBytes: Number.NaN }),
    ).toThrow(/maxResponseBytes/);
  });
});
