/**
 * The MCP server local agents talk to: Streamable HTTP (the official SDK's
 * transport, stateless: one SDK server per request) on 127.0.0.1 only. Before
 * the SDK sees a request it must name this server in `Host`, carry no `Origin`
 * or a loopback origin of this very server (a web page's request after DNS
 * rebinding carries its own), present a client's bearer token, and be at most
 * MAX_MCP_BODY_BYTES. The tools are engram's agent tools, the resource is the
 * client's memories; every call runs in the renderer's engram, in the scope of
 * the token, never one the request names. This process holds no store.
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { TOOL_DEFINITIONS } from '../../lib/agent/tool-definitions.js';
import { isEngramError, ValidationError } from '../../lib/errors.js';
import type { HubClientInfo } from '../preload/bridge-api.js';
import type { HubCalls } from './hub-calls.js';
import type { HubClients } from './hub-clients.js';

/** The port the app listens on unless told otherwise (clients are configured with the URL, so it stays put). */
export const DEFAULT_MCP_PORT = 7457;
/** The path of the MCP endpoint. */
export const MCP_PATH = '/mcp';
/** Largest request body: a save of the most facts a call may carry fits many times over. */
export const MAX_MCP_BODY_BYTES = 1024 * 1024;
/** The resource listing the client's memories. */
export const MEMORIES_URI = 'engram://memories';
/** How many memories the resource shows (newest first). */
export const MEMORIES_RESOURCE_LIMIT = 100;

/** A refusal before the SDK: status, JSON-RPC error body. */
function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

class BodyTooLarge extends Error {}

/** Reads the body, stopping at `limit` bytes. */
async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) throw new BodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The hosts this server answers to, and so the only origins a browser page of its own would have. */
function loopbackHosts(port: number): Set<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
}

/**
 * The SDK server of one request, bound to one client's scope. The handlers sit on
 * McpServer's protocol-level server because the tools' schemas are JSON Schema
 * already (lib/agent/tool-definitions.ts), not zod.
 */
function mcpServerFor(client: HubClientInfo, calls: HubCalls, clients: HubClients, version: string): McpServer {
  const mcp = new McpServer(
    { name: 'engram', version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Long-term memory on this device. Save facts worth keeping with save_to_memory; look them up with recall_from_memory.',
    },
  );
  const server = mcp.server;
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOL_DEFINITIONS.map((d) => ({
      name: d.name,
      description: d.description,
      inputSchema: d.parameters as { type: 'object' } & Record<string, unknown>,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const { name } = request.params;
    try {
      const answer = await calls.call(client.scope, { kind: 'tool', name, args: request.params.arguments ?? {} });
      const text = answer.kind === 'tool' ? answer.text : '';
      const failed = text.startsWith('Error:');
      clients.record(client.id, name, !failed);
      return { content: [{ type: 'text', text }], isError: failed };
    } catch (e) {
      clients.record(client.id, name, false);
      // The agent reads this: say what failed, keep the code.
      return {
        content: [{ type: 'text', text: `Error: ${isEngramError(e) ? `${e.code}: ${e.message}` : String(e)}` }],
        isError: true,
      };
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [
      {
        uri: MEMORIES_URI,
        name: 'memories',
        description: `Your memories in engram (the newest ${MEMORIES_RESOURCE_LIMIT}).`,
        mimeType: 'text/plain',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    if (request.params.uri !== MEMORIES_URI)
      throw new ValidationError('uri', `unknown resource ${request.params.uri}; the resource is ${MEMORIES_URI}`);
    try {
      const answer = await calls.call(client.scope, { kind: 'memories', limit: MEMORIES_RESOURCE_LIMIT });
      clients.record(client.id, 'memories', true);
      const memories = answer.kind === 'memories' ? answer.memories : [];
      const text =
        memories.length === 0
          ? 'No memories yet.'
          : memories.map((m) => `- [${m.createdAt}] ${m.text} (id ${m.id})`).join('\n');
      return { contents: [{ uri: MEMORIES_URI, mimeType: 'text/plain', text }] };
    } catch (e) {
      clients.record(client.id, 'memories', false);
      throw e;
    }
  });
  return mcp;
}

/**
 * The running HTTP endpoint.
 * @example
 * const mcp = await McpHttpServer.start({ port: DEFAULT_MCP_PORT, clients, calls, version: app.getVersion() })
 * console.log(mcp.url) // http://127.0.0.1:7457/mcp
 * await mcp.close()
 */
export class McpHttpServer {
  readonly url: string;
  readonly #http: HttpServer;

  private constructor(http: HttpServer, url: string) {
    this.#http = http;
    this.url = url;
  }

  /** Listens on 127.0.0.1 (`port: 0` picks a free one). */
  static async start(options: {
    port: number;
    clients: HubClients;
    calls: HubCalls;
    version: string;
  }): Promise<McpHttpServer> {
    const { clients, calls, version } = options;
    let hosts = new Set<string>();
    const http = createServer((req, res) => {
      void handle(req, res).catch((e: unknown) => {
        if (!res.headersSent)
          refuse(res, 500, `engram could not answer: ${e instanceof Error ? e.message : String(e)}`);
        else res.end();
      });
    });
    const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
      if (path !== MCP_PATH) {
        refuse(res, 404, `the MCP endpoint is ${MCP_PATH}`);
        return;
      }
      // DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends Host evil.example and its Origin.
      if (!hosts.has(req.headers.host ?? '')) {
        refuse(res, 403, 'Host must be this server (127.0.0.1 or localhost with its port)');
        return;
      }
      const origin = req.headers.origin;
      if (origin !== undefined && !hosts.has(origin.startsWith('http://') ? origin.slice('http://'.length) : '')) {
        refuse(res, 403, `Origin ${origin} may not use engram's memory`);
        return;
      }
      const auth = req.headers.authorization ?? '';
      const token = /^Bearer\s+(\S+)$/i.exec(auth)?.[1];
      const client = token === undefined ? undefined : clients.verify(token);
      if (client === undefined) {
        refuse(
          res,
          401,
          token === undefined
            ? 'a bearer token is required: create one for this client in engram (Agents)'
            : 'this token is not valid (revoked, or never issued)',
          { 'www-authenticate': 'Bearer realm="engram"' },
        );
        return;
      }
      let body: unknown;
      if (req.method === 'POST') {
        let text: string;
        try {
          text = await readBody(req, MAX_MCP_BODY_BYTES);
        } catch (e) {
          if (e instanceof BodyTooLarge) {
            refuse(res, 413, `the request body is larger than ${MAX_MCP_BODY_BYTES} bytes`, { connection: 'close' });
            return;
          }
          throw e;
        }
        try {
          body = JSON.parse(text);
        } catch {
          refuse(res, 400, 'the request body is not JSON');
          return;
        }
      }
      const server = mcpServerFor(client, calls, clients, version);
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true }); // no sessionIdGenerator: stateless;
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    };
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(options.port, '127.0.0.1', () => {
        http.off('error', reject);
        resolve();
      });
    });
    const port = (http.address() as AddressInfo).port;
    hosts = loopbackHosts(port);
    return new McpHttpServer(http, `http://127.0.0.1:${port}${MCP_PATH}`);
  }

  /** Stops listening and ends open connections. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#http.close(() => {
        resolve();
      });
      this.#http.closeAllConnections();
    });
  }
}
