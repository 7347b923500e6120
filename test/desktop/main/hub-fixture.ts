// The MCP hub as the tests drive it: the main process (fake Electron) serving
// Streamable HTTP on 127.0.0.1, and a "renderer" that is a real Engram over
// fake-indexeddb answering through the same IPC reply handler the preload uses.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { HashEmbedder } from '../../../lib/embed/hash-embedder.js';
import type { Engram } from '../../../lib/index.js';
import { APP_ENTRY } from '../../../desktop/main/app-protocol.js';
import { startDesktop, type DesktopApp } from '../../../desktop/main/desktop-app.js';
import {
  CHANNELS,
  type BridgeResult,
  type HubCall,
  type HubNewClient,
  type HubScope,
} from '../../../desktop/preload/bridge-api.js';
import { answerHubCall } from '../../../desktop/renderer/hub-answer.js';
import { openTemp } from '../../helpers.js';
import { FakeContents, fakeElectron, type FakeElectron, type FakeWindow } from './fake-electron.js';

/** A running hub with its renderer's engram. */
export interface HubFixture {
  dir: string;
  electron: FakeElectron;
  desktop: DesktopApp<FakeWindow>;
  engram: Engram;
  url: string;
  /** An IPC call as the app's page makes it. */
  ipc<T>(channel: string, ...args: unknown[]): Promise<BridgeResult<T>>;
  /** Creates a client through IPC, as the Agents view does. */
  createClient(name: string, scope: HubScope): Promise<HubNewClient>;
  /** The SDK's client over Streamable HTTP with a bearer token. */
  connect(token: string): Promise<Client>;
  /** Closes the clients, the server, the store; removes the folder. */
  close(): Promise<void>;
}

/** Starts the main process on a free port with a fresh store. */
export async function startHubFixture(options: { port?: number; timeoutMs?: number } = {}): Promise<HubFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'engram-mcp-'));
  await mkdir(join(dir, 'user-data'));
  const electron = fakeElectron({ userData: join(dir, 'user-data') });
  const desktop = startDesktop(
    electron,
    { renderer: join(dir, 'renderer'), preload: join(dir, 'preload.cjs') },
    'linux',
    { mcp: { port: options.port ?? 0, timeoutMs: options.timeoutMs ?? 10_000 } },
  );
  electron.app.ready();
  await desktop.started;
  const engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 64 }) });
  const clients: Client[] = [];
  const ipc = async <T>(channel: string, ...args: unknown[]): Promise<BridgeResult<T>> => {
    const handler = electron.handlers.get(channel);
    if (handler === undefined) throw new TypeError(`no handler for ${channel}`);
    return (await handler({ senderFrame: { url: APP_ENTRY } }, ...args)) as BridgeResult<T>;
  };
  const window = desktop.window();
  if (window === undefined) throw new TypeError('no window');
  // The renderer: what preload.ts's onHubCall does with the page's answerHubCall.
  const contents = window.webContents;
  contents.send = (channel: string, ...args: unknown[]): void => {
    FakeContents.prototype.send.call(contents, channel, ...args);
    if (channel !== CHANNELS.hubCall) return;
    const call = args[0] as HubCall;
    void answerHubCall(engram, call).then((result) => ipc(CHANNELS.hubReply, call.id, result));
  };
  const url = desktop.mcpUrl() ?? '';
  return {
    dir,
    electron,
    desktop,
    engram,
    url,
    ipc,
    async createClient(name, scope) {
      const r = await ipc<HubNewClient>(CHANNELS.hubCreateClient, name, scope);
      if (!r.ok) throw new TypeError(r.error.message);
      return r.value;
    },
    async connect(token) {
      const client = new Client({ name: 'engram-test', version: '1.0.0' });
      clients.push(client);
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return client;
    },
    async close() {
      for (const c of clients.splice(0)) await c.close();
      await desktop.stop();
      await engram.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A tool's text answer. */
export async function callText(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  return content.map((c) => c.text).join('\n');
}
