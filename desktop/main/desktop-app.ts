/**
 * The main process: one instance, one hardened window showing the renderer from
 * `app://engram/`, the menu, and the IPC handlers for OS work. Memory itself
 * lives in the renderer (IndexedDB); this process never touches it. Electron is
 * passed in, so all of this runs under test with a fake.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CHANNELS, type HubStatus } from '../preload/bridge-api.js';
import { menuTemplate } from './app-menu.js';
import { APP_ENTRY, registerAppScheme, serveApp } from './app-protocol.js';
import type { ElectronSurface, WindowSurface } from './electron-surface.js';
import { hardenContents, hardenSession } from './hardening.js';
import { HubCalls } from './hub-calls.js';
import { HubClients } from './hub-clients.js';
import { registerIpcHandlers, type HubContext } from './ipc-handlers.js';
import { McpHttpServer } from './mcp-server.js';
import { SecretStore } from './secret-store.js';
import { StoreKey } from './store-key.js';
import { modelServerAccess, syncServerAccess } from './server-access.js';
import { windowOptions } from './window-options.js';

/** Where the built app's parts are. */
export interface DesktopPaths {
  /** The built renderer folder (index.html, assets, models). */
  renderer: string;
  /** The bundled preload script (CommonJS, as the sandbox requires). */
  preload: string;
}

/** What startDesktop() hands back (for tests and the entry). */
export interface DesktopApp<W extends WindowSurface = WindowSurface> {
  /** False when another instance already runs (this one quits). */
  readonly primary: boolean;
  /** Resolves once the first window was created. */
  readonly started: Promise<void>;
  /** The current window, if any. */
  window(): W | undefined;
  /** The MCP endpoint's URL once it listens; undefined when off or it could not listen. */
  mcpUrl(): string | undefined;
  /** Stops the MCP server (the app does it on quit). */
  stop(): Promise<void>;
}

/** Where, in the app's data folder, the MCP clients (token hashes) and the endpoint for the stdio bridge are written. */
export const HUB_FILES = { clients: 'mcp-clients.json', endpoint: 'mcp-endpoint.json' } as const;

/** What startDesktop() may turn on besides the window. */
export interface DesktopOptions {
  /** The MCP server for local agents on 127.0.0.1:`port` (0: any free port). Off when absent. */
  mcp?: {
    port: number;
    timeoutMs?: number;
    /** Absolute path of scripts/engram-mcp.mjs when it exists (a checkout), shown in the Agents view's snippets. */
    bridgeScript?: string;
  };
}

/**
 * Starts the app.
 * @example
 * import * as electron from 'electron'
 * startDesktop(electron, { renderer: join(here, '../renderer'), preload: join(here, '../preload/preload.cjs') }, process.platform)
 */
export function startDesktop<W extends WindowSurface>(
  electron: ElectronSurface<W>,
  paths: DesktopPaths,
  platform: string,
  options: DesktopOptions = {},
): DesktopApp<W> {
  const { app } = electron;
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return {
      primary: false,
      started: Promise.resolve(),
      window: () => undefined,
      mcpUrl: () => undefined,
      stop: () => Promise.resolve(),
    };
  }
  let mcp: McpHttpServer | undefined;
  const calls = new HubCalls(
    () => (current === undefined || current.isDestroyed() ? undefined : current.webContents),
    options.mcp?.timeoutMs,
  );
  const stop = async (): Promise<void> => {
    calls.failAll('engram is quitting');
    await mcp?.close();
    mcp = undefined;
  };
  app.on('will-quit', () => {
    void stop();
  });
  registerAppScheme(electron);
  let current: W | undefined;

  const createWindow = async (): Promise<W> => {
    const window = new electron.BrowserWindow(windowOptions(paths.preload));
    current = window;
    window.once('ready-to-show', () => {
      window.show();
    });
    window.on('closed', () => {
      if (current === window) current = undefined;
      calls.failAll('the engram window closed');
    });
    await window.loadURL(APP_ENTRY);
    return window;
  };

  // Every web contents, whatever created it, is locked down before it loads anything.
  app.on('web-contents-created', (_event, contents) => {
    hardenContents(contents);
  });
  app.on('second-instance', () => {
    if (current === undefined) return;
    if (current.isMinimized()) current.restore();
    current.focus();
  });
  app.on('window-all-closed', () => {
    if (platform !== 'darwin') app.quit();
  });
  app.on('activate', () => {
    if (electron.BrowserWindow.getAllWindows().length === 0) void createWindow();
  });

  const syncServer = syncServerAccess();
  const modelServer = modelServerAccess();
  const started = app.whenReady().then(async () => {
    hardenSession(electron.session.defaultSession, () => [syncServer.origin(), modelServer.origin()]);
    serveApp(electron, paths.renderer);
    const secrets = new SecretStore(electron.safeStorage, join(app.getPath('userData'), 'secrets'), platform);
    const hub =
      options.mcp === undefined
        ? undefined
        : await startHub(app.getPath('userData'), options.mcp, calls, app.getVersion());
    mcp = hub?.server;
    registerIpcHandlers(electron, {
      window: () => current,
      secrets,
      storeKey: new StoreKey(secrets),
      platform,
      syncServer,
      modelServer,
      ...(hub === undefined ? {} : { hub: hub.context }),
    });
    const send = (command: string): void => {
      current?.webContents.send(CHANNELS.menuCommand, command);
    };
    electron.Menu.setApplicationMenu(electron.Menu.buildFromTemplate(menuTemplate(send, platform)));
    await createWindow();
  });
  return { primary: true, started, window: () => current, mcpUrl: () => mcp?.url, stop };
}

/**
 * Loads the clients and listens. A port in use does not stop the app: the
 * Agents view then shows no URL, and the stdio bridge says the app is not serving.
 */
async function startHub(
  userData: string,
  mcp: NonNullable<DesktopOptions['mcp']>,
  calls: HubCalls,
  version: string,
): Promise<{ server: McpHttpServer | undefined; context: HubContext }> {
  const { port, bridgeScript } = mcp;
  const clients = await HubClients.load(join(userData, HUB_FILES.clients));
  let server: McpHttpServer | undefined;
  let failure: string | undefined;
  try {
    server = await McpHttpServer.start({ port, clients, calls, version });
    // The stdio bridge reads where to forward from here; the file names no secret, but only this user needs it.
    await writeFile(join(userData, HUB_FILES.endpoint), `${JSON.stringify({ url: server.url, pid: process.pid })}\n`, {
      mode: 0o600,
    });
  } catch (e) {
    await server?.close();
    server = undefined;
    failure = listenFailure(e, port);
    console.error(`engram: ${failure}`, e);
  }
  const status = (): HubStatus =>
    server === undefined
      ? { state: 'failed', port, reason: failure ?? 'the MCP server stopped' }
      : {
          state: 'listening',
          url: server.url,
          port: Number(new URL(server.url).port),
          ...(bridgeScript === undefined ? {} : { bridgeScript }),
        };
  return { server, context: { clients, calls, url: () => server?.url, status } };
}

/** Why the server could not listen, as the Agents view tells the user. */
function listenFailure(e: unknown, port: number): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE')
    return `port ${port} on 127.0.0.1 is taken by another program (another engram?); quit it, or start engram with ENGRAM_MCP_PORT set to a free port`;
  return `the MCP server could not listen on 127.0.0.1:${port}: ${e instanceof Error ? e.message : String(e)}`;
}
