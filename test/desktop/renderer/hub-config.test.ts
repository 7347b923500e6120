// The Agents view's pure parts in Node: the configuration snippets (and that
// a client configured by them really connects: the stdio one launched as an
// MCP client launches it, the HTTP one with its URL and header), the match
// threshold of the memories view, and the web fallback saying it has no hub.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { retrievalProfile } from '../../../lib/index.js';
import { TOOL_DEFINITIONS } from '../../../lib/agent/tool-definitions.js';
import { forgetClientSummary, scopeLabel } from '../../../desktop/renderer/agents-view.js';
import { hubConfigSnippets, type HubConfigSnippet } from '../../../desktop/renderer/hub-config.js';
import { matchThreshold } from '../../../desktop/renderer/memory-matches.js';
import { WEB_NO_HUB, createWebBridge } from '../../../desktop/renderer/web-bridge.js';
import { startHubFixture, type HubFixture } from '../main/hub-fixture.js';

const BRIDGE = fileURLToPath(new URL('../../../scripts/engram-mcp.mjs', import.meta.url));

function snippet(all: HubConfigSnippet[], id: HubConfigSnippet['id']): HubConfigSnippet {
  const found = all.find((s) => s.id === id);
  if (found === undefined) throw new TypeError(`no snippet ${id}`);
  return found;
}

interface StdioEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

function stdioEntry(s: HubConfigSnippet): StdioEntry {
  return (JSON.parse(s.text) as { mcpServers: { engram: StdioEntry } }).mcpServers.engram;
}

describe('hubConfigSnippets()', () => {
  const token = 'engram_abc-DEF_123';
  const url = 'http://127.0.0.1:7457/mcp';

  it('hubConfigSnippets() gives the stdio bridge as the engram-mcp command, or the checkout script when known, with the token in env', () => {
    const onPath = snippet(hubConfigSnippets({ token, url }), 'claude-desktop');
    expect(stdioEntry(onPath)).toEqual({
      command: 'engram-mcp',
      args: [],
      env: { ENGRAM_MCP_TOKEN: token, ENGRAM_MCP_URL: url },
    });
    expect(onPath.where).toMatch(/on PATH: npm install -g with the path of an engram checkout or its packed tarball/);
    const all = hubConfigSnippets({ token, url, bridgeScript: '/home/ana/My Code/engram/scripts/engram-mcp.mjs' });
    expect(stdioEntry(snippet(all, 'cursor-stdio'))).toMatchObject({
      command: 'node',
      args: ['/home/ana/My Code/engram/scripts/engram-mcp.mjs'],
    });
    expect(snippet(all, 'claude-desktop').where).toMatch(/claude_desktop_config\.json/);
    expect(snippet(all, 'claude-desktop').where).not.toMatch(/PATH/);
  });

  it('hubConfigSnippets() gives Streamable HTTP as a URL with a bearer header, and a quoted Claude Code command', () => {
    const all = hubConfigSnippets({ token, url });
    expect(JSON.parse(snippet(all, 'cursor-http').text)).toEqual({
      mcpServers: { engram: { url, headers: { Authorization: `Bearer ${token}` } } },
    });
    expect(snippet(all, 'claude-code-http').text).toBe(
      `claude mcp add --transport http engram ${url} --header 'Authorization: Bearer ${token}'`,
    );
    expect(all.map((s) => s.id)).toEqual(['claude-desktop', 'cursor-http', 'cursor-stdio', 'claude-code-http']);
  });
});

describe('hubConfigSnippets() against the running hub', () => {
  let hub: HubFixture;
  const clients: Client[] = [];

  beforeEach(async () => {
    hub = await startHubFixture();
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await hub.close();
  });

  it('a client configured with the stdio snippet and one with the HTTP snippet both reach the app', async () => {
    const created = await hub.createClient('Claude Desktop', { agentId: 'claude', userId: 'ana' });
    const all = hubConfigSnippets({ token: created.token, url: created.url ?? '', bridgeScript: BRIDGE });

    // As Claude Desktop does: launch the configured command with the configured environment.
    const entry = stdioEntry(snippet(all, 'claude-desktop'));
    const stdio = new Client({ name: 'as-claude-desktop', version: '1.0.0' });
    clients.push(stdio);
    await stdio.connect(
      new StdioClientTransport({
        command: entry.command === 'node' ? process.execPath : entry.command,
        args: entry.args,
        env: { PATH: process.env['PATH'] ?? '', ...entry.env },
      }),
    );
    expect((await stdio.listTools()).tools.map((t) => t.name)).toEqual(TOOL_DEFINITIONS.map((d) => d.name));

    // As Cursor does with a url entry: Streamable HTTP with the configured headers.
    const http = (
      JSON.parse(snippet(all, 'cursor-http').text) as {
        mcpServers: { engram: { url: string; headers: Record<string, string> } };
      }
    ).mcpServers.engram;
    const direct = new Client({ name: 'as-cursor', version: '1.0.0' });
    clients.push(direct);
    await direct.connect(
      new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers: http.headers } }),
    );
    expect((await direct.listTools()).tools.length).toBe(TOOL_DEFINITIONS.length);
  });
});

describe('matchThreshold()', () => {
  it("matchThreshold() is the model's minRelevance for hybrid, the same cut in cosine for meaning, any match for keyword", () => {
    const glove = retrievalProfile('engram-glove-100d');
    expect(matchThreshold('hybrid', glove)).toBe(glove.minRelevance);
    expect(matchThreshold('vector', glove)).toBeCloseTo(0.35, 10);
    const minilm = retrievalProfile('Xenova/all-MiniLM-L6-v2');
    expect(matchThreshold('vector', minilm)).toBeCloseTo(0.25, 10);
    expect(matchThreshold('keyword', glove)).toBeGreaterThan(0);
    expect(matchThreshold('keyword', glove)).toBeLessThan(1e-300);
  });
});

describe('Agents view helpers', () => {
  it('scopeLabel() and forgetClientSummary() read as people write them', () => {
    expect(scopeLabel({ agentId: 'claude', userId: 'ana' })).toBe('agent claude · user ana');
    expect(scopeLabel({ agentId: 'script' })).toBe('agent script · any user');
    expect(
      forgetClientSummary('Cursor', {
        memories: 2,
        tombstones: 0,
        messages: 0,
        blocks: 1,
        traces: 0,
        history: 4,
        vectors: 2,
        terms: 7,
      }),
    ).toBe(
      'Forgot what Cursor wrote: 2 memories, 0 messages, 1 core memory blocks, 0 traces, 4 history entries, 2 vectors.',
    );
  });

  it('the web fallback says it has no MCP server, and refuses to create a client with the same reason', async () => {
    const bridge = createWebBridge();
    expect(await bridge.hubStatus()).toEqual({ ok: true, value: { state: 'off', reason: WEB_NO_HUB } });
    expect(WEB_NO_HUB).toMatch(/no main process/);
    const created = await bridge.createHubClient('x', { agentId: 'a' });
    expect(created.ok ? undefined : created.error.message).toBe(WEB_NO_HUB);
    expect(await bridge.hubClients()).toEqual({ ok: true, value: [] });
  });
});
