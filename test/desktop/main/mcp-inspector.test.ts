// The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli, a client no one
// here wrote) against the app's MCP server and a real engram store
// (hub-fixture.ts): over Streamable HTTP with the bearer token, and over stdio
// through the engram-mcp bridge. It lists and calls tools, reads the resource,
// and is refused without a token.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOOL_DEFINITIONS } from '../../../lib/agent/tool-definitions.js';
import { MEMORIES_URI } from '../../../desktop/main/mcp-server.js';
import { startHubFixture, type HubFixture } from './hub-fixture.js';

const INSPECTOR_BUILD = fileURLToPath(
  new URL('../../../node_modules/@modelcontextprotocol/inspector-cli/build/', import.meta.url),
);
const INSPECTOR = join(INSPECTOR_BUILD, 'cli.js');
const BRIDGE = fileURLToPath(new URL('../../../scripts/engram-mcp.mjs', import.meta.url));

let hub: HubFixture;

beforeEach(async () => {
  hub = await startHubFixture();
});

afterEach(async () => {
  await hub.close();
});

/** Runs the Inspector's CLI; its answer is JSON on stdout. */
function inspector(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [INSPECTOR, '--cli', ...args],
      // cwd: inspector-cli 1.0.3 checks `existsSync('../package.json')` against the working directory but
      // imports that path relative to its own module; from its build folder both name its package.json.
      {
        cwd: INSPECTOR_BUILD,
        timeout: 60_000,
        env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' },
      },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
      },
    );
  });
}

async function inspectorJson(args: string[]): Promise<unknown> {
  const r = await inspector(args);
  if (r.code !== 0) throw new TypeError(`the inspector failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as unknown;
}

describe('MCP Inspector CLI', () => {
  it('over Streamable HTTP: lists the tools, saves and recalls through a tool call, reads the resource', async () => {
    const { token } = await hub.createClient('Inspector', { agentId: 'inspector', userId: 'ana' });
    const http = [hub.url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`];
    const listed = (await inspectorJson([...http, '--method', 'tools/list'])) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toEqual(TOOL_DEFINITIONS.map((d) => d.name));

    const saved = (await inspectorJson([
      ...http,
      '--method',
      'tools/call',
      '--tool-name',
      'save_to_memory',
      '--tool-arg',
      'thinking=a fact worth keeping',
      'content=["Ana repairs old radios"]',
    ])) as { content: { text: string }[]; isError?: boolean };
    expect(saved.isError ?? false).toBe(false);
    expect(saved.content[0]?.text).toMatch(/sav/i);
    expect((await hub.engram.getAll({ userId: 'ana', agentId: 'inspector' })).results.map((m) => m.memory)).toEqual([
      'Ana repairs old radios',
    ]);

    const recalled = (await inspectorJson([
      ...http,
      '--method',
      'tools/call',
      '--tool-name',
      'recall_from_memory',
      '--tool-arg',
      'keywords=["radios"]',
      'limit=null',
    ])) as { content: { text: string }[] };
    expect(recalled.content[0]?.text).toContain('Ana repairs old radios');

    const resource = (await inspectorJson([...http, '--method', 'resources/read', '--uri', MEMORIES_URI])) as {
      contents: { text: string }[];
    };
    expect(resource.contents[0]?.text).toContain('Ana repairs old radios');
  }, 90_000);

  it('over stdio through engram-mcp: lists and calls tools in the token scope', async () => {
    const { token } = await hub.createClient('Inspector stdio', { agentId: 'inspector', userId: 'bob' });
    const stdio = ['-e', `ENGRAM_MCP_TOKEN=${token}`, '-e', `ENGRAM_MCP_URL=${hub.url}`, process.execPath, BRIDGE];
    const listed = (await inspectorJson([...stdio, '--method', 'tools/list'])) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toEqual(TOOL_DEFINITIONS.map((d) => d.name));
    await inspectorJson([
      ...stdio,
      '--method',
      'tools/call',
      '--tool-name',
      'archival_memory_insert',
      '--tool-arg',
      'content=Bob keeps his passport in the red folder',
    ]);
    expect((await hub.engram.getAll({ userId: 'bob' })).results.map((m) => [m.memory, m.agentId])).toEqual([
      ['Bob keeps his passport in the red folder', 'inspector'],
    ]);
  }, 90_000);

  it('is refused without a token and with a revoked one', async () => {
    const none = await inspector([hub.url, '--transport', 'http', '--method', 'tools/list']);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/401|bearer token is required/i);
    const { token, client } = await hub.createClient('Inspector', { agentId: 'inspector' });
    await hub.ipc('engram:hub-revoke-client', client.id);
    const revoked = await inspector([
      hub.url,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${token}`,
      '--method',
      'tools/list',
    ]);
    expect(revoked.code).not.toBe(0);
    expect(revoked.stderr).toMatch(/401|not valid/i);
  }, 90_000);
});
