// A scripted OpenAI-compatible chat-completions server on loopback for tests (Node tests and the
// desktop chat's end-to-end test): JSON answers, streamed answers (server-sent events), and the
// ways a server goes wrong (stalls, garbage, hang-ups). Listens on 127.0.0.1 only; a request body
// over MAX_REQUEST_BYTES is refused; close() ends stalled answers too.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Largest request body the server reads. */
const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

/** One scripted answer: a JSON body with a status, raw text, or a dropped connection. */
export type Scripted =
  | { content: string; toolCalls?: { id: string; name: string; arguments: string }[] }
  | { status: number; text: string }
  | { raw: string }
  | { hangUp: true }
  /** Sends the headers and the start of a body, then nothing more. */
  | { stall: true }
  /**
   * A streamed answer: each piece of text as one `data:` chunk, then `data: [DONE]`.
   * `hold` (awaited after the first piece) lets a test look at a half-streamed reply;
   * `stallAfter` stops sending after that many pieces, for good.
   */
  | { stream: string[]; hold?: Promise<void>; stallAfter?: number }
  /** A stream of raw server-sent-events text (for malformed streams). */
  | { streamRaw: string };

/** What a request asked for. */
export interface RecordedRequest {
  model: string;
  messages: { role: string; content: string | null }[];
  tools?: unknown[];
  stream?: boolean;
}

export interface ScriptedServer {
  baseUrl: string;
  /** Bodies of the requests received, in order. */
  requests: RecordedRequest[];
  script: Scripted[];
  close(): Promise<void>;
}

export interface ScriptedServerOptions {
  /** Answers a request when the script is empty (the script first). */
  fallback?: (request: RecordedRequest) => Scripted;
  /** Sends CORS headers and answers preflights, so a page of another origin may call it. */
  cors?: boolean;
}

/** One chunk of a streamed completion. */
export function streamChunk(content: string, finish: string | null = null): string {
  return `data: ${JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: { content }, finish_reason: finish }],
  })}\n\n`;
}

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'content-type, authorization',
  'access-control-allow-methods': 'POST, OPTIONS',
};

function jsonAnswer(next: { content: string; toolCalls?: { id: string; name: string; arguments: string }[] }): string {
  const message = {
    role: 'assistant',
    content: next.content,
    ...(next.toolCalls === undefined
      ? {}
      : {
          tool_calls: next.toolCalls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.arguments },
          })),
        }),
  };
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 0,
    model: 'scripted',
    choices: [{ index: 0, message, finish_reason: 'stop' }],
  });
}

async function sendStream(
  res: ServerResponse,
  next: { stream: string[]; hold?: Promise<void>; stallAfter?: number },
): Promise<void> {
  for (const [i, piece] of next.stream.entries()) {
    if (next.stallAfter === i) return;
    res.write(streamChunk(piece));
    if (i === 0 && next.hold !== undefined) await next.hold;
    if (res.destroyed) return;
  }
  if (next.stallAfter === next.stream.length) return;
  res.write(streamChunk('', 'stop'));
  res.end('data: [DONE]\n\n');
}

export async function startScriptedServer(
  script: Scripted[] = [],
  options: ScriptedServerOptions = {},
): Promise<ScriptedServer> {
  const state: ScriptedServer = { baseUrl: '', requests: [], script, close: async () => {} };
  const cors = options.cors === true ? CORS : {};
  const answer = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    if (req.method === 'OPTIONS' && options.cors === true) {
      res.writeHead(204, cors).end();
      return;
    }
    if (req.method === 'GET' && req.url === '/v1/models') {
      // The model list, as Ollama, llama.cpp and LM Studio answer it (the desktop chat checks the server with it).
      res
        .writeHead(200, { ...cors, 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data: [{ id: 'scripted', object: 'model' }] }));
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, cors).end('not found');
      return;
    }
    const request = JSON.parse(body) as RecordedRequest;
    state.requests.push(request);
    const next = state.script.shift() ?? options.fallback?.(request);
    if (next === undefined) {
      res.writeHead(500, { ...cors, 'content-type': 'application/json' }).end('{"error":"script exhausted"}');
      return;
    }
    if ('hangUp' in next) {
      req.socket.destroy();
      return;
    }
    if ('stall' in next) {
      res.writeHead(200, { ...cors, 'content-type': 'application/json' });
      res.write('{"id":"chatcmpl-1","choices":[');
      return;
    }
    if ('status' in next) {
      res.writeHead(next.status, { ...cors, 'content-type': 'application/json' }).end(next.text);
      return;
    }
    if ('raw' in next) {
      res.writeHead(200, { ...cors, 'content-type': 'application/json' }).end(next.raw);
      return;
    }
    if ('stream' in next || 'streamRaw' in next) {
      res.writeHead(200, { ...cors, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      if ('streamRaw' in next) res.end(next.streamRaw);
      else void sendStream(res, next);
      return;
    }
    res.writeHead(200, { ...cors, 'content-type': 'application/json' }).end(jsonAnswer(next));
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > MAX_REQUEST_BYTES) {
        res.writeHead(413, cors).end();
        req.socket.destroy();
        return;
      }
      body += chunk.toString();
    });
    req.on('end', () => {
      if (size <= MAX_REQUEST_BYTES) answer(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.baseUrl = `http://127.0.0.1:${port}/v1`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
      // Stalled answers keep their sockets open; end them so close() finishes.
      server.closeAllConnections();
    });
  return state;
}
