/**
 * The main process: one instance, one hardened window showing the renderer from
 * `app://engram/`, the menu, and the IPC handlers for OS work. Memory itself
 * lives in the renderer (IndexedDB); this process never touches it. Electron is
 * passed in, so all of this runs under test with a fake.
 */
import { join } from 'node:path';
import { CHANNELS } from '../preload/bridge-api.js';
import { menuTemplate } from './app-menu.js';
import { APP_ENTRY, registerAppScheme, serveApp } from './app-protocol.js';
import type { ElectronSurface, WindowSurface } from './electron-surface.js';
import { hardenContents, hardenSession } from './hardening.js';
import { registerIpcHandlers } from './ipc-handlers.js';
import { SecretStore } from './secret-store.js';
import { SyncServerAccess } from './sync-server-access.js';
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
}

/**
 * Starts the app.
 * @example
 * import * as electron from 'electron'
 * startDesktop(electron, { renderer: join(here, '../renderer'), preload: join(here, '../preload/preload.cjs') }, process.platform)
 */
export function startDesktop<W extends WindowSurface>(electron: ElectronSurface<W>, paths: DesktopPaths, platform: string): DesktopApp<W> {
  const { app } = electron;
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return { primary: false, started: Promise.resolve(), window: () => undefined };
  }
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

  const syncServer = new SyncServerAccess();
  const started = app.whenReady().then(async () => {
    hardenSession(electron.session.defaultSession, () => syncServer.origin());
    serveApp(electron, paths.renderer);
    const secrets = new SecretStore(electron.safeStorage, join(app.getPath('userData'), 'secrets'), platform);
    registerIpcHandlers(electron, {
      window: () => current,
      secrets,
      platform,
      syncServer,
    });
    const send = (command: string): void => {
      current?.webContents.send(CHANNELS.menuCommand, command);
    };
    electron.Menu.setApplicationMenu(electron.Menu.buildFromTemplate(menuTemplate(send, platform)));
    await createWindow();
  });
  return { primary: true, started, window: () => current };
}
