// A scripted OpenAI-compatible chat-completions server on loopback for tests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer: a JSON body with a status, raw text, or a dropped connection. */
export type Scripted =
  | { content: string; toolCalls?: { id: string; name: string; arguments: string }[] }
  | { status: number; text: string }
  | { raw: string }
  | { hangUp: true }
  /** Sends the headers and the start of a body, then nothing more. */
  | { stall: true };

export interface ScriptedServer {
  baseUrl: string;
  /** Bodies of the requests received, in order. */
  requests: { model: string; messages: { role: string; content: string | null }[]; tools?: unknown[] }[];
  script: Scripted[];
  close(): Promise<void>;
}

export async function startScriptedServer(script: Scripted[] = []): Promise<ScriptedServer> {
  const state: ScriptedServer = { baseUrl: '', requests: [], script, close: async () => {} };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end('not found');
        return;
      }
      state.requests.push(JSON.parse(body) as ScriptedServer['requests'][number]);
      const next = state.script.shift();
      if (next === undefined) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"script exhausted"}');
        return;
      }
      if ('hangUp' in next) {
        req.socket.destroy();
        return;
      }
      if ('stall' in next) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"id":"chatcmpl-1","choices":[');
        return;
      }
      if ('status' in next) {
        res.writeHead(next.status, { 'content-type': 'application/json' }).end(next.text);
        return;
      }
      if ('raw' in next) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(next.raw);
        return;
      }
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
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            created: 0,
            model: 'scripted',
            choices: [{ index: 0, message, finish_reason: 'stop' }],
          }),
        );
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
