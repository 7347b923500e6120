#!/usr/bin/env node
/**
 * engram-mcp: engram's MCP server over stdio, for clients that only launch
 * commands (Claude Desktop's `command`, Cursor, Goose, …). It forwards every
 * JSON-RPC message it reads on stdin (one per line, as MCP's stdio transport
 * frames them) to the running desktop app's Streamable HTTP endpoint with the
 * client's token, and writes the answers to stdout. It holds no memory itself.
 * When the app is not running, each request is answered with an error saying
 * so, and stderr says it too.
 *
 * No dependency beyond Node (fetch): it is the package's `engram-mcp` bin, so
 * `npx engram-mcp` runs it wherever engram is installed.
 *
 * Configure with environment variables:
 *   ENGRAM_MCP_TOKEN       the token the app showed when you added the client (Agents view), or
 *   ENGRAM_MCP_TOKEN_FILE  a file holding it (keep it mode 0600)
 *   ENGRAM_MCP_URL         the endpoint, default http://127.0.0.1:7457/mcp
 */
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';

const DEFAULT_URL = 'http://127.0.0.1:7457/mcp';
const USAGE = `usage: engram-mcp   (an MCP server on stdin/stdout, forwarding to the engram desktop app)

  ENGRAM_MCP_TOKEN       the token engram showed when you added this client (Agents view)
  ENGRAM_MCP_TOKEN_FILE  or a file holding it
  ENGRAM_MCP_URL         the app's endpoint (default ${DEFAULT_URL})
`;
/** JSON-RPC's code for a server error (the app unreachable, a refusal). */
const SERVER_ERROR = -32000;
/** JSON-RPC's code for a line that is not JSON. */
const PARSE_ERROR = -32700;
/** The longest line read from the client (the app refuses bodies over 1 MiB anyway). */
const MAX_LINE_CHARS = 4 * 1024 * 1024;

/** @param {string} message */
function fail(message) {
  process.stderr.write(`engram-mcp: ${message}\n`);
  process.exit(1);
}

/** @returns {Promise<string>} */
async function readToken() {
  const direct = process.env['ENGRAM_MCP_TOKEN'];
  if (direct !== undefined && direct.trim() !== '') return direct.trim();
  const file = process.env['ENGRAM_MCP_TOKEN_FILE'];
  if (file !== undefined && file !== '') {
    try {
      return (await readFile(file, 'utf8')).trim();
    } catch (e) {
      fail(`cannot read ENGRAM_MCP_TOKEN_FILE ${file}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  fail(
    'set ENGRAM_MCP_TOKEN (or ENGRAM_MCP_TOKEN_FILE) to the token the engram app showed when you added this client under Agents',
  );
  return '';
}

/**
 * What the user reads when the app does not answer a request.
 * @param {unknown} error
 * @param {string} url
 */
function explainUnreachable(error, url) {
  const cause = /** @type {{ cause?: { code?: string } }} */ (error).cause;
  const code = cause?.code ?? '';
  if (['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENOTFOUND'].includes(code) || /fetch failed/.test(String(error)))
    return `the engram app is not running (nothing answers at ${url}): open the app (npm start), then try again`;
  return `engram could not be reached at ${url}: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * What the user reads when the app refused a request.
 * @param {number} status
 * @param {string} body
 */
function explainRefusal(status, body) {
  let said = body.slice(0, 300);
  try {
    said = /** @type {{ error?: { message?: string } }} */ (JSON.parse(body)).error?.message ?? said;
  } catch {
    // Not JSON: the text as it came.
  }
  if (status === 401)
    return `the engram app refused this token (${said}): add the client again under Agents in the app and use its new token`;
  return `the engram app refused the request (HTTP ${status}): ${said}`;
}

/** @param {unknown} message */
function write(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/**
 * The messages of a server-sent event stream (`data:` lines, events split by a blank line).
 * @param {string} text
 * @returns {unknown[]}
 */
function eventStreamMessages(text) {
  const out = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data !== '') out.push(JSON.parse(data));
  }
  return out;
}

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (process.argv.length > 2) fail(`unknown argument ${process.argv[2] ?? ''}\n${USAGE}`);

const token = await readToken();
const url = process.env['ENGRAM_MCP_URL'] ?? DEFAULT_URL;
/** @type {URL | undefined} */
let endpoint;
try {
  endpoint = new URL(url);
} catch {
  fail(`ENGRAM_MCP_URL is not a URL: ${url}`);
}
if (endpoint === undefined) process.exit(1);
if (!['127.0.0.1', 'localhost', '[::1]'].includes(endpoint.hostname))
  fail(`${url} is not on this machine; the app listens on 127.0.0.1 only`);

/** The protocol version the client and the app agreed on (sent with every request after initialize, as MCP asks). */
let protocolVersion = '';
/** The app's session id, if it ever hands one out (it runs stateless today). */
let sessionId = '';
let warnedUnreachable = false;

/**
 * Sends one message to the app and writes its answers.
 * @param {{ jsonrpc: string, id?: string | number, method?: string, params?: unknown }} message
 */
async function forward(message) {
  const isRequest = message.id !== undefined && typeof message.method === 'string';
  /** @param {string} text */
  const answerError = (text) => {
    process.stderr.write(`engram-mcp: ${text}\n`);
    if (isRequest) write({ jsonrpc: '2.0', id: message.id, error: { code: SERVER_ERROR, message: text } });
  };
  /** @type {Record<string, string>} */
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
  };
  if (protocolVersion !== '') headers['mcp-protocol-version'] = protocolVersion;
  if (sessionId !== '') headers['mcp-session-id'] = sessionId;
  let response;
  try {
    response = await fetch(/** @type {URL} */ (endpoint), {
      method: 'POST',
      headers,
      body: JSON.stringify(message),
    });
  } catch (e) {
    const text = explainUnreachable(e, url);
    if (!isRequest && warnedUnreachable) return;
    warnedUnreachable = true;
    answerError(text);
    return;
  }
  warnedUnreachable = false;
  const body = await response.text();
  if (!response.ok) {
    answerError(explainRefusal(response.status, body));
    return;
  }
  const session = response.headers.get('mcp-session-id');
  if (session !== null) sessionId = session;
  if (response.status === 202 || body.trim() === '') return;
  const type = response.headers.get('content-type') ?? '';
  let answers;
  try {
    answers = type.includes('text/event-stream') ? eventStreamMessages(body) : [JSON.parse(body)].flat();
  } catch {
    answerError(`the engram app answered with something that is not JSON-RPC (${type})`);
    return;
  }
  for (const answer of answers) {
    const result = /** @type {{ result?: { protocolVersion?: unknown } }} */ (answer).result;
    if (message.method === 'initialize' && typeof result?.protocolVersion === 'string')
      protocolVersion = result.protocolVersion;
    write(answer);
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
/** @type {Promise<void>[]} */
const inFlight = [];
lines.on('line', (line) => {
  if (line.trim() === '') return;
  if (line.length > MAX_LINE_CHARS) {
    write({ jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: 'message too long' } });
    return;
  }
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    write({ jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: 'not JSON' } });
    return;
  }
  const pending = forward(message).catch((/** @type {unknown} */ e) => {
    process.stderr.write(`engram-mcp: ${e instanceof Error ? e.message : String(e)}\n`);
  });
  inFlight.push(pending);
  void pending.finally(() => inFlight.splice(inFlight.indexOf(pending), 1));
});
lines.on('close', () => {
  // The client closed stdin: answer what is in flight, then leave.
  void Promise.all(inFlight).finally(() => process.exit(0));
});
