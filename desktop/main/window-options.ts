/**
 * The options of the app's window, hardened per Electron's security checklist:
 * context isolation, the sandbox, no Node.js anywhere in the renderer, web
 * security on, no webview tag, no experimental features.
 */
import type { WindowOptions } from './electron-surface.js';

/**
 * Options of the main window.
 * @example
 * new BrowserWindow(windowOptions('/app/preload/preload.cjs'))
 */
export function windowOptions(preloadPath: string): WindowOptions {
  return {
    width: 1280,
    height: 860,
    minWidth: 880,
    minHeight: 560,
    title: 'engram',
    // Shown on ready-to-show, so the window never flashes white.
    show: false,
    backgroundColor: '#f6f7f9',
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      spellcheck: false,
    },
  };
}
