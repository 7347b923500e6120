#!/usr/bin/env node
/**
 * engram's MCP server over stdio, for clients that only launch commands
 * (Claude Desktop's `command`, Goose, …): it forwards every JSON-RPC message to
 * the running desktop app's Streamable HTTP endpoint with the client's token,
 * and the answers back. It holds no memory itself; when the app is not
 * running, each request is answered with an error saying so (and stderr says it too).
 *
 * Configure with environment variables:
 *   ENGRAM_MCP_TOKEN       the token the app showed when you added the client (Agents view), or
 *   ENGRAM_MCP_TOKEN_FILE  a file holding it (keep it mode 0600)
 *   ENGRAM_MCP_URL         the endpoint, default http://127.0.0.1:7457/mcp
 * Run from the checkout: `node scripts/engram-mcp.mjs` (not a published bin yet: the SDK is a dev dependency).
 */
import { readFile } from 'node:fs/promises';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

/** @typedef {import('@modelcontextprotocol/sdk/types.js').JSONRPCMessage} JSONRPCMessage */

const DEFAULT_URL = 'http://127.0.0.1:7457/mcp';

/** @returns {Promise<string>} */
async function readToken() {
  const direct = process.env['ENGRAM_MCP_TOKEN'];
  if (direct !== undefined && direct !== '') return direct.trim();
  const file = process.env['ENGRAM_MCP_TOKEN_FILE'];
  if (file !== undefined && file !== '') return (await readFile(file, 'utf8')).trim();
  throw new TypeError(
    'engram-mcp: set ENGRAM_MCP_TOKEN (or ENGRAM_MCP_TOKEN_FILE) to the token the engram app showed when you added this client under Agents',
  );
}

/**
 * What the user reads when the app does not answer.
 * @param {unknown} error
 * @param {string} url
 */
function explain(error, url) {
  const text =
    error instanceof Error
      ? `${error.message} ${String(/** @type {{ cause?: unknown }} */ (error).cause ?? '')}`
      : String(error);
  if (/ECONNREFUSED|fetch failed|ECONNRESET|EHOSTUNREACH/.test(text))
    return `the engram app is not running (nothing answers at ${url}): open the app (npm start), then try again`;
  if (/\b401\b/.test(text))
    return 'the engram app refused this token (revoked, or never issued): add the client again under Agents in the app';
  return `engram could not be reached at ${url}: ${text}`;
}

/** @param {string} message */
function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

let token;
try {
  token = await readToken();
} catch (e) {
  fail(e instanceof Error ? e.message : String(e));
}
const url = process.env['ENGRAM_MCP_URL'] ?? DEFAULT_URL;
let endpoint;
try {
  endpoint = new URL(url);
} catch {
  fail(`engram-mcp: ENGRAM_MCP_URL is not a URL: ${url}`);
}
if (endpoint === undefined || token === undefined) process.exit(1);
if (!['127.0.0.1', 'localhost', '[::1]'].includes(endpoint.hostname))
  fail(`engram-mcp: ${url} is not on this machine; the app listens on 127.0.0.1 only`);

const stdio = new StdioServerTransport();
const http = new StreamableHTTPClientTransport(endpoint, {
  requestInit: { headers: { authorization: `Bearer ${token}` } },
});

http.onmessage = (/** @type {JSONRPCMessage} */ message) => {
  void stdio.send(message);
};
http.onerror = (/** @type {Error} */ error) => {
  process.stderr.write(`engram-mcp: ${explain(error, url)}\n`);
};
stdio.onmessage = (/** @type {JSONRPCMessage} */ message) => {
  http.send(message).catch((/** @type {unknown} */ error) => {
    const text = explain(error, url);
    process.stderr.write(`engram-mcp: ${text}\n`);
    // A request gets its answer (an error the client shows); a notification has nobody to answer.
    if ('id' in message && 'method' in message)
      void stdio.send({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: text } });
  });
};
stdio.onclose = () => {
  void http.close().finally(() => process.exit(0));
};
await http.start();
await stdio.start();
