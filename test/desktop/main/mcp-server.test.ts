// The MCP hub end to end in Node: the main process (fake Electron) serves
// Streamable HTTP on 127.0.0.1, the SDK's own Client talks to it, and the
// "renderer" is a real Engram over fake-indexeddb answering through the same
// IPC reply handler the preload uses (hub-fixture.ts).
import { readFile, stat } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOOL_DEFINITIONS } from '../../../lib/agent/tool-definitions.js';
import { isEngramError, type Engram } from '../../../lib/index.js';
import { HUB_FILES, type DesktopApp } from '../../../desktop/main/desktop-app.js';
import { HubCalls } from '../../../desktop/main/hub-calls.js';
import { HubClients } from '../../../desktop/main/hub-clients.js';
import { MAX_MCP_BODY_BYTES, MEMORIES_URI } from '../../../desktop/main/mcp-server.js';
import {
  CHANNELS,
  type BridgeResult,
  type HubCall,
  type HubClientInfo,
  type HubNewClient,
  type HubScope,
} from '../../../desktop/preload/bridge-api.js';
import { forgetHubClient } from '../../../desktop/renderer/hub-answer.js';
import { FakeContents, type FakeWindow } from './fake-electron.js';
import { callText, startHubFixture, type HubFixture } from './hub-fixture.js';

let hub: HubFixture;
let dir: string;
let desktop: DesktopApp<FakeWindow>;
let engram: Engram;
let url: string;
const clients: Client[] = [];

function ipc<T>(channel: string, ...args: unknown[]): Promise<BridgeResult<T>> {
  return hub.ipc<T>(channel, ...args);
}

function createClient(name: string, scope: HubScope): Promise<HubNewClient> {
  return hub.createClient(name, scope);
}

function connect(token: string): Promise<Client> {
  return hub.connect(token);
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const POST_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

beforeEach(async () => {
  hub = await startHubFixture();
  ({ dir, desktop, engram, url } = hub);
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await hub.close();
});

describe('MCP server (Streamable HTTP, SDK client)', () => {
  it('listens on 127.0.0.1 only and writes its endpoint for the stdio bridge in a 0600 file', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const file = join(dir, 'user-data', HUB_FILES.endpoint);
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ url });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('lists engram agent tools and the memories resource', async () => {
    const { token } = await createClient('Claude Desktop', { agentId: 'claude', userId: 'ana' });
    const client = await connect(token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOL_DEFINITIONS.map((d) => d.name));
    expect(tools.find((t) => t.name === 'save_to_memory')?.inputSchema).toMatchObject({
      type: 'object',
      required: ['thinking', 'content'],
    });
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([MEMORIES_URI]);
  });

  it('saves and recalls in the token scope through the renderer engram, and another client sees none of it', async () => {
    const ana = await createClient('Claude Desktop', { agentId: 'claude', userId: 'ana' });
    const bob = await createClient('Cursor', { agentId: 'cursor', userId: 'bob' });
    const clientA = await connect(ana.token);
    const clientB = await connect(bob.token);

    expect(
      await callText(clientA, 'save_to_memory', {
        thinking: 'a preference',
        content: ['Ana drinks green tea every morning'],
      }),
    ).toMatch(/sav/i);
    expect(await callText(clientA, 'recall_from_memory', { keywords: ['green tea'], limit: null })).toContain(
      'Ana drinks green tea every morning',
    );
    // The write went through the one write path, tagged with the token's scope (not one the request named).
    const stored = await engram.getAll({ userId: 'ana' });
    expect(stored.results.map((m) => [m.memory, m.agentId])).toEqual([
      ['Ana drinks green tea every morning', 'claude'],
    ]);

    const resourceA = await clientA.readResource({ uri: MEMORIES_URI });
    expect(JSON.stringify(resourceA.contents)).toContain('Ana drinks green tea every morning');

    expect(await callText(clientB, 'recall_from_memory', { keywords: ['green tea'], limit: null })).toBe(
      'No memories found.',
    );
    const resourceB = await clientB.readResource({ uri: MEMORIES_URI });
    expect(JSON.stringify(resourceB.contents)).not.toContain('green tea');
    expect(await callText(clientB, 'archival_memory_search', { query: 'green tea', page: null })).not.toContain(
      'green tea',
    );

    // Bad arguments come back as a tool error the model can read, not a crash.
    const bad = await clientA.callTool({ name: 'save_to_memory', arguments: { content: 'not a list' } });
    expect(bad.isError).toBe(true);

    // The Agents view sees each client's last calls.
    const list = await ipc<HubClientInfo[]>(CHANNELS.hubClients);
    expect(list.ok).toBe(true);
    if (!list.ok) return;
    const infoA = list.value.find((c) => c.id === ana.client.id);
    expect(infoA?.lastCalls.map((c) => [c.what, c.ok])).toEqual([
      ['save_to_memory', false],
      ['memories', true],
      ['recall_from_memory', true],
      ['save_to_memory', true],
    ]);
    expect(list.value.find((c) => c.id === bob.client.id)?.lastCalls.map((c) => c.what)).toEqual([
      'archival_memory_search',
      'memories',
      'recall_from_memory',
    ]);
  });

  it('forgetting a client removes what it wrote, and only that', async () => {
    const ana = await createClient('Claude Desktop', { agentId: 'claude', userId: 'ana' });
    const clientA = await connect(ana.token);
    await callText(clientA, 'save_to_memory', { thinking: 'fact', content: ['Ana lives in Porto'] });
    await callText(clientA, 'archival_memory_insert', { content: 'Ana is writing a novel about lighthouses' });
    await engram.add('Ana likes jazz', { userId: 'ana' });
    const result = await forgetHubClient(engram, ana.client.scope);
    expect(result.memories).toBeGreaterThanOrEqual(2);
    expect(await callText(clientA, 'recall_from_memory', { keywords: ['Porto', 'lighthouses'], limit: null })).toBe(
      'No memories found.',
    );
    expect((await engram.getAll({ userId: 'ana' })).results.map((m) => m.memory)).toEqual(['Ana likes jazz']);
  });

  it('refuses a request without a token, with an unknown token, and after the token is revoked', async () => {
    const noToken = await fetch(url, { method: 'POST', headers: POST_HEADERS, body: INITIALIZE });
    expect(noToken.status).toBe(401);
    expect(noToken.headers.get('www-authenticate')).toContain('Bearer');
    const unknown = await fetch(url, {
      method: 'POST',
      headers: { ...POST_HEADERS, authorization: 'Bearer engram_not-a-real-token' },
      body: INITIALIZE,
    });
    expect(unknown.status).toBe(401);
    await expect(connect('engram_not-a-real-token')).rejects.toThrow(/401|token/i);

    const ana = await createClient('Claude Desktop', { agentId: 'claude', userId: 'ana' });
    const client = await connect(ana.token);
    await callText(client, 'save_to_memory', { thinking: 'fact', content: ['Ana owns a cat'] });
    const revoked = await ipc(CHANNELS.hubRevokeClient, ana.client.id);
    expect(revoked.ok).toBe(true);
    await expect(
      client.callTool({ name: 'recall_from_memory', arguments: { keywords: ['cat'], limit: null } }),
    ).rejects.toThrow(/401|not valid/i);
    const after = await fetch(url, {
      method: 'POST',
      headers: { ...POST_HEADERS, authorization: `Bearer ${ana.token}` },
      body: INITIALIZE,
    });
    expect(after.status).toBe(401);
  });

  it('refuses a foreign Origin or Host (DNS rebinding) and accepts its own loopback origin', async () => {
    const { token } = await createClient('Script', { agentId: 'script' });
    const auth = { ...POST_HEADERS, authorization: `Bearer ${token}` };
    for (const origin of [
      'http://evil.example',
      'null',
      'https://127.0.0.1:1',
      `http://127.0.0.1:${new URL(url).port}.evil.example`,
    ]) {
      const r = await fetch(url, { method: 'POST', headers: { ...auth, origin }, body: INITIALIZE });
      expect(r.status, origin).toBe(403);
    }
    const own = await fetch(url, {
      method: 'POST',
      headers: { ...auth, origin: new URL(url).origin },
      body: INITIALIZE,
    });
    expect(own.status).toBe(200);
    // A rebound name reaches 127.0.0.1 with its own Host header.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        url,
        { method: 'POST', headers: { ...auth, host: `evil.example:${new URL(url).port}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(INITIALIZE);
    });
    expect(status).toBe(403);
  });

  it('refuses a body over the limit and one that is not JSON', async () => {
    const { token } = await createClient('Script', { agentId: 'script' });
    const auth = { ...POST_HEADERS, authorization: `Bearer ${token}` };
    const big = await fetch(url, { method: 'POST', headers: auth, body: 'x'.repeat(MAX_MCP_BODY_BYTES + 1) });
    expect(big.status).toBe(413);
    const notJson = await fetch(url, { method: 'POST', headers: auth, body: '{nope' });
    expect(notJson.status).toBe(400);
  });

  it('keeps only token hashes, in a 0600 file, and a reloaded registry still knows the token', async () => {
    const { token, client } = await createClient('Script', { agentId: 'script', userId: 'ana' });
    const file = join(dir, 'user-data', HUB_FILES.clients);
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(token);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const reloaded = await HubClients.load(file);
    expect(reloaded.verify(token)?.id).toBe(client.id);
    expect(reloaded.verify(`${token}x`)).toBeUndefined();
  });

  it('validates what the renderer asks for: a scope with unknown fields or an empty name is refused', async () => {
    const r1 = await ipc(CHANNELS.hubCreateClient, 'x', { agentId: 'a', admin: true });
    expect(r1.ok ? undefined : r1.error.code).toBe('VALIDATION');
    const r2 = await ipc(CHANNELS.hubCreateClient, ' ', { agentId: 'a' });
    expect(r2.ok ? undefined : r2.error.code).toBe('VALIDATION');
    const r3 = await ipc(CHANNELS.hubRevokeClient, 'no-such-client');
    expect(r3.ok ? undefined : r3.error.code).toBe('NOT_FOUND');
  });
});

describe('HubCalls (the IPC round trip)', () => {
  const scope = { agentId: 'a' };
  const op = { kind: 'tool', name: 'recall_from_memory', args: {} } as const;

  it('fails with HubError no-window when no window holds the store', async () => {
    const error: unknown = await new HubCalls(() => undefined).call(scope, op).catch((e: unknown) => e);
    expect(isEngramError(error) && error.code === 'HUB' && (error as { reason?: string }).reason).toBe('no-window');
  });

  it('fails with HubError timeout when the renderer does not answer, and refuses the late answer', async () => {
    const contents = new FakeContents();
    const calls = new HubCalls(() => contents, 20);
    const error: unknown = await calls.call(scope, op).catch((e: unknown) => e);
    expect((error as { reason?: string }).reason).toBe('timeout');
    const id = (contents.sent[0]?.args[0] as HubCall).id;
    expect(() => {
      calls.answer(id, { ok: true, value: { kind: 'tool', text: 'late' } });
    }).toThrow(/no call is waiting/);
  });

  it('passes the renderer typed failure on, and refuses an answer of the wrong shape', async () => {
    const contents = new FakeContents();
    const calls = new HubCalls(() => contents);
    const failing = calls.call(scope, op);
    calls.answer((contents.sent[0]?.args[0] as HubCall).id, {
      ok: false,
      error: { name: 'QuotaExceededError', code: 'QUOTA_EXCEEDED', message: 'full' },
    });
    const e1: unknown = await failing.catch((e: unknown) => e);
    expect(isEngramError(e1) && e1.code).toBe('QUOTA_EXCEEDED');
    const odd = calls.call(scope, op);
    calls.answer((contents.sent[1]?.args[0] as HubCall).id, { ok: true, value: { kind: 'tool', text: 42 } });
    const e2: unknown = await odd.catch((e: unknown) => e);
    expect((e2 as { reason?: string }).reason).toBe('renderer');
    const pending = calls.call(scope, op);
    calls.failAll('the engram window closed');
    expect(((await pending.catch((e: unknown) => e)) as { reason?: string }).reason).toBe('closed');
  });
});

describe('engram-mcp (stdio bridge, SDK client over stdio)', () => {
  const bridge = fileURLToPath(new URL('../../../scripts/engram-mcp.mjs', import.meta.url));

  async function stdioClient(env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
    const client = new Client({ name: 'engram-stdio-test', version: '1.0.0' });
    clients.push(client);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bridge],
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stderr: 'pipe',
    });
    let err = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString('utf8');
    });
    await client.connect(transport);
    return { client, stderr: () => err };
  }

  it('forwards tools to the running app in the token scope', async () => {
    const ana = await createClient('Goose', { agentId: 'goose', userId: 'ana' });
    const { client } = await stdioClient({ ENGRAM_MCP_URL: url, ENGRAM_MCP_TOKEN: ana.token });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(TOOL_DEFINITIONS.map((d) => d.name));
    await callText(client, 'save_to_memory', { thinking: 'fact', content: ['Ana plays the cello'] });
    expect(await callText(client, 'recall_from_memory', { keywords: ['cello'], limit: null })).toContain(
      'Ana plays the cello',
    );
    expect((await engram.getAll({ userId: 'ana', agentId: 'goose' })).results.map((m) => m.memory)).toEqual([
      'Ana plays the cello',
    ]);
  });

  it('runs as the package bin: npx engram-mcp in the checkout', async () => {
    const ana = await createClient('Goose', { agentId: 'goose', userId: 'ana' });
    const client = new Client({ name: 'engram-npx-test', version: '1.0.0' });
    clients.push(client);
    await client.connect(
      new StdioClientTransport({
        command: 'npx',
        args: ['--no', '--', 'engram-mcp'],
        cwd: fileURLToPath(new URL('../../..', import.meta.url)),
        env: { ...process.env, ENGRAM_MCP_URL: url, ENGRAM_MCP_TOKEN: ana.token },
      }),
    );
    await callText(client, 'save_to_memory', { thinking: 'fact', content: ['Ana sails a dinghy'] });
    expect(await callText(client, 'recall_from_memory', { keywords: ['dinghy'], limit: null })).toContain(
      'Ana sails a dinghy',
    );
  });

  it('says clearly that the app is not running', async () => {
    const { token } = await createClient('Goose', { agentId: 'goose' });
    const port = new URL(url).port;
    await desktop.stop();
    const client = new Client({ name: 'engram-stdio-test', version: '1.0.0' });
    clients.push(client);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bridge],
      env: { PATH: process.env['PATH'] ?? '', ENGRAM_MCP_URL: `http://127.0.0.1:${port}/mcp`, ENGRAM_MCP_TOKEN: token },
      stderr: 'pipe',
    });
    await expect(client.connect(transport)).rejects.toThrow(/engram app is not running/);
  });
});
