/**
 * The desktop's main process for the renderer's end-to-end tests (test/desktop/*.e2e.test.ts): the real
 * one (startDesktop with the fake Electron surface of test/desktop/main) in a fresh data folder, its IPC
 * handlers reached from the page through the preload's bridge (`ipcRenderer.invoke` as a function exposed
 * to the page, called as if from the app's own frame), and its hub calls (`webContents.send`) delivered to
 * the page's onHubCall. Node side (Playwright drives the browser).
 */
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright';
import { APP_ENTRY } from '../../desktop/main/app-protocol.js';
import { startDesktop, type DesktopApp, type DesktopOptions } from '../../desktop/main/desktop-app.js';
import { BRIDGE_GLOBAL, CHANNELS, type HubCall } from '../../desktop/preload/bridge-api.js';
import { FakeContents, fakeElectron, type FakeElectron, type FakeWindow } from '../desktop/main/fake-electron.js';

/** A started main process, its fake Electron surface, and the folder that holds its data (remove it after). */
export interface FakeDesktop {
  readonly desktop: DesktopApp<FakeWindow>;
  readonly electron: FakeElectron;
  readonly work: string;
}

/** Starts the real main process on Linux with its data in a new temporary folder named `prefix`…; `mcp` turns the hub on. */
export async function startFakeDesktop(prefix: string, mcp: NonNullable<DesktopOptions['mcp']>): Promise<FakeDesktop> {
  const work = await mkdtemp(join(tmpdir(), prefix));
  await mkdir(join(work, 'user-data'));
  const electron = fakeElectron({ userData: join(work, 'user-data') });
  const desktop = startDesktop(electron, { renderer: join(work, 'r'), preload: join(work, 'p.cjs') }, 'linux', {
    mcp,
  });
  electron.app.ready();
  await desktop.started;
  return { desktop, electron, work };
}

/** The main process's calls to the renderer (webContents.send) reach the onHubCall of the page `pageNow()` names, if any. */
export function deliverHubCalls(desktop: DesktopApp<FakeWindow>, pageNow: () => Page | undefined): void {
  const contents = desktop.window()?.webContents;
  if (contents === undefined) throw new TypeError('no window');
  contents.send = (channel: string, ...args: unknown[]): void => {
    FakeContents.prototype.send.call(contents, channel, ...args);
    const page = pageNow();
    if (channel !== CHANNELS.hubCall || page === undefined) return;
    void page.evaluate(
      (call) => (window as unknown as { __engramHubCall: (c: HubCall) => Promise<void> }).__engramHubCall(call),
      args[0] as HubCall,
    );
  };
}

/** The IPC: a call from the context's pages is handled by the main process as if from the app's own frame. */
export async function exposeMainProcess(context: BrowserContext, electron: FakeElectron): Promise<void> {
  await context.exposeFunction('__engramIpc', async (channel: string, ...args: unknown[]) => {
    const handler = electron.handlers.get(channel);
    if (handler === undefined) throw new TypeError(`no handler for ${channel}`);
    return handler({ senderFrame: { url: APP_ENTRY } }, ...args);
  });
}

/** Gives the context's pages the preload's bridge (from their next load on): the desktop shell instead of the browser fallback. */
export async function addPreload(context: BrowserContext): Promise<void> {
  await context.addInitScript(preloadInPage, BRIDGE_GLOBAL);
}

/**
 * The page's bridge: the preload's methods over `ipcRenderer.invoke`, here the function
 * {@link exposeMainProcess} exposes. Runs in the page (no imports: channel names written out).
 * Files are not saved here; opening one is cancelled; the menu sends nothing.
 */
function preloadInPage(global: string): void {
  type Invoke = (channel: string, ...args: unknown[]) => Promise<unknown>;
  const w = window as unknown as Record<string, unknown> & { __engramIpc: Invoke };
  const invoke: Invoke = (channel, ...args) => w.__engramIpc(channel, ...args);
  w[global] = {
    saveFile: () =>
      Promise.resolve({ ok: false, error: { name: 'StoreError', code: 'STORE', message: 'not in this test' } }),
    openFile: () => Promise.resolve({ ok: true, value: null }),
    getSecret: (name: string) => invoke('engram:secret-get', name),
    setSecret: (name: string, value: string) => invoke('engram:secret-set', name, value),
    deleteSecret: (name: string) => invoke('engram:secret-delete', name),
    appInfo: () => invoke('engram:app-info'),
    setSyncServer: (url: string | null) => invoke('engram:sync-server', url),
    setModelServer: (url: string | null) => invoke('engram:model-server', url),
    onHubCall: (answer: (call: { id: string }) => Promise<unknown>) => {
      w['__engramHubCall'] = async (call: { id: string }) => {
        await invoke('engram:hub-reply', call.id, await answer(call));
      };
      return () => undefined;
    },
    hubClients: () => invoke('engram:hub-clients'),
    createHubClient: (name: string, scope: unknown) => invoke('engram:hub-create-client', name, scope),
    revokeHubClient: (id: string) => invoke('engram:hub-revoke-client', id),
    hubStatus: () => invoke('engram:hub-status'),
    storeKey: () => invoke('engram:store-key'),
    onMenuCommand: () => () => undefined,
  };
}
