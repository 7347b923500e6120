// The main process run against a fake Electron: window options, hardening,
// single-instance lock, menu commands and the app:// protocol.
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { APP_ENTRY, fileForUrl } from '../../../desktop/main/app-protocol.js';
import {
  CONTENT_SECURITY_POLICY,
  CONTENT_SECURITY_POLICY_META,
} from '../../../desktop/main/content-security-policy.js';
import { startDesktop } from '../../../desktop/main/desktop-app.js';
import { windowOptions } from '../../../desktop/main/window-options.js';
import { CHANNELS } from '../../../desktop/preload/bridge-api.js';
import { FakeContents, FakeEvent, FakeWindow, fakeElectron, type FakeElectron } from './fake-electron.js';

let dir: string;
let electron: FakeElectron;

async function started(): Promise<{ window: FakeWindow }> {
  const app = startDesktop(electron, { renderer: join(dir, 'renderer'), preload: join(dir, 'preload.cjs') }, 'linux');
  electron.app.ready();
  await app.started;
  const window = app.window();
  if (window === undefined) throw new TypeError('no window');
  return { window };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-desktop-'));
  await mkdir(join(dir, 'renderer/assets'), { recursive: true });
  await writeFile(join(dir, 'renderer/index.html'), '<!doctype html><title>engram</title>');
  await writeFile(join(dir, 'renderer/assets/a.wasm'), new Uint8Array([0, 97, 115, 109]));
  await writeFile(join(dir, 'secret.txt'), 'outside');
  electron = fakeElectron({ userData: join(dir, 'user-data') });
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('windowOptions()', () => {
  it('windowOptions() turns on context isolation and the sandbox and keeps Node out of the renderer', () => {
    const { webPreferences, show } = windowOptions('/app/preload.cjs');
    expect(webPreferences).toEqual({
      preload: '/app/preload.cjs',
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
    });
    expect(show).toBe(false);
  });
});

describe('startDesktop()', () => {
  it('startDesktop() opens one hardened window on app://engram with the preload, shown when ready', async () => {
    const { window } = await started();
    expect(FakeWindow.created).toHaveLength(1);
    expect(window.options.webPreferences.preload).toBe(join(dir, 'preload.cjs'));
    expect(window.options.webPreferences.sandbox).toBe(true);
    expect(window.webContents.getURL()).toBe(APP_ENTRY);
    expect(window.shown).toBe(true);
    expect(electron.schemes).toEqual([
      {
        scheme: 'app',
        privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: false, stream: true },
      },
    ]);
  });

  it('startDesktop() quits at once when another instance holds the lock, and focuses the first on a second launch', async () => {
    const second = fakeElectron({ lock: false });
    const app = startDesktop(second, { renderer: dir, preload: dir }, 'linux');
    expect(app.primary).toBe(false);
    expect(second.app.quitCalls).toBe(1);
    expect(second.handlers.size).toBe(0);

    const { window } = await started();
    window.minimized = true;
    electron.app.emit('second-instance');
    expect(window.minimized).toBe(false);
    expect(window.focused).toBe(true);
  });

  it('startDesktop() quits when the last window closes except on macOS, and reopens on activate', async () => {
    const { window } = await started();
    window.destroyed = true;
    window.emit('closed');
    electron.app.emit('window-all-closed');
    expect(electron.app.quitCalls).toBe(1);
    electron.app.emit('activate');
    await new Promise((r) => setTimeout(r, 0));
    expect(FakeWindow.getAllWindows()).toHaveLength(1);

    const mac = fakeElectron();
    startDesktop(mac, { renderer: dir, preload: dir }, 'darwin');
    mac.app.emit('window-all-closed');
    expect(mac.app.quitCalls).toBe(0);
  });

  it('startDesktop() denies window.open, refuses navigation away from the app and webviews', async () => {
    await started();
    const contents = new FakeContents();
    electron.app.emit('web-contents-created', {}, contents);
    expect(contents.windowOpenHandler?.({ url: 'https://example.com' })).toEqual({ action: 'deny' });
    expect(contents.windowOpenHandler?.({ url: `${APP_ENTRY}#x` })).toEqual({ action: 'deny' });
    for (const event of ['will-navigate', 'will-redirect']) {
      const away = new FakeEvent();
      contents.emit(event, away, 'https://example.com/');
      expect(away.prevented).toBe(true);
      const fileUrl = new FakeEvent();
      contents.emit(event, fileUrl, 'file:///etc/passwd');
      expect(fileUrl.prevented).toBe(true);
      const inApp = new FakeEvent();
      contents.emit(event, inApp, 'app://engram/index.html');
      expect(inApp.prevented).toBe(false);
      // DevTools' pages are not the app: the window is never sent there.
      for (const other of [
        'devtools://devtools/bundled/inspector.html',
        'chrome://settings',
        'app://engramx/index.html',
        'app://other/index.html',
      ]) {
        const elsewhere = new FakeEvent();
        contents.emit(event, elsewhere, other);
        expect(elsewhere.prevented, other).toBe(true);
      }
    }
    const webview = new FakeEvent();
    contents.emit('will-attach-webview', webview);
    expect(webview.prevented).toBe(true);
  });

  it('startDesktop() refuses every permission and cancels every request that is not the app', async () => {
    await started();
    const session = electron.session.defaultSession;
    for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal']) {
      let granted: boolean | undefined;
      session.permissionRequest?.({}, permission, (g) => (granted = g));
      expect(granted).toBe(false);
      expect(session.permissionCheck?.({}, permission)).toBe(false);
    }
    const decide = (url: string): { cancel?: boolean } => {
      let answer: { cancel?: boolean } = {};
      session.beforeRequest?.({ url }, (r) => (answer = r));
      return answer;
    };
    expect(decide('https://cdn.jsdelivr.net/npm/x.js')).toEqual({ cancel: true });
    expect(decide('http://127.0.0.1:6333/collections')).toEqual({ cancel: true });
    expect(decide('file:///etc/passwd')).toEqual({ cancel: true });
    expect(decide('app://engram/assets/a.wasm')).toEqual({});
    expect(decide('app://other/x')).toEqual({ cancel: true });
    // DevTools loads its own frontend when the user opens it; it may load, never be navigated to.
    expect(decide('devtools://devtools/bundled/inspector.js')).toEqual({});
  });

  it('startDesktop() builds a menu whose commands reach the renderer', async () => {
    const { window } = await started();
    const labels = (electron.menuTemplate ?? [])
      .flatMap((m) => m.submenu ?? [])
      .map((i) => i.label)
      .filter((l) => l !== undefined);
    expect(labels).toEqual(
      expect.arrayContaining(['Import…', 'Export…', 'Memories', 'Conversations', 'Core memory', 'Map', 'Status']),
    );
    const exportItem = (electron.menuTemplate ?? []).flatMap((m) => m.submenu ?? []).find((i) => i.label === 'Export…');
    exportItem?.click?.();
    expect(window.webContents.sent).toEqual([{ channel: CHANNELS.menuCommand, args: ['export'] }]);
  });

  it('startDesktop() serves the renderer folder over app:// with the CSP, and nothing outside it', async () => {
    await started();
    const handler = electron.protocolHandlers.get('app')!;
    const index = await handler(new Request('app://engram/index.html'));
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(index.headers.get('content-type')).toContain('text/html');
    expect(await index.text()).toContain('<title>engram</title>');
    const wasm = await handler(new Request('app://engram/assets/a.wasm'));
    expect(wasm.headers.get('content-type')).toBe('application/wasm');
    expect((await handler(new Request('app://engram/../secret.txt'))).status).toBe(404);
    expect((await handler(new Request('app://engram/%2e%2e/secret.txt'))).status).toBe(404);
    expect((await handler(new Request('app://engram/missing.js'))).status).toBe(404);
    expect((await handler(new Request('app://engram/index.html', { method: 'POST', body: 'x' }))).status).toBe(404);
  });

  it('startDesktop() serves no file that a symbolic link inside the folder leads out to, and follows links that stay inside', async () => {
    await mkdir(join(dir, 'outside'));
    await writeFile(join(dir, 'outside/key.txt'), 'private');
    await symlink(join(dir, 'secret.txt'), join(dir, 'renderer/leak.txt'));
    await symlink(join(dir, 'outside'), join(dir, 'renderer/linked'));
    await symlink('assets/a.wasm', join(dir, 'renderer/alias.wasm'));
    await started();
    const handler = electron.protocolHandlers.get('app')!;
    for (const url of ['app://engram/leak.txt', 'app://engram/linked/key.txt']) {
      const response = await handler(new Request(url));
      expect(response.status, url).toBe(404);
      expect(await response.text()).not.toMatch(/outside|private/);
    }
    const inside = await handler(new Request('app://engram/alias.wasm'));
    expect(inside.status).toBe(200);
    expect(new Uint8Array(await inside.arrayBuffer())).toEqual(new Uint8Array([0, 97, 115, 109]));
  });

  it('startDesktop() answers a folder URL with 404, never a listing of the folder', async () => {
    await started();
    const handler = electron.protocolHandlers.get('app')!;
    for (const url of ['app://engram/assets', 'app://engram/assets/', 'app://engram/assets/%2e']) {
      const response = await handler(new Request(url));
      expect(response.status, url).toBe(404);
      expect(await response.text()).not.toContain('a.wasm');
    }
  });
});

describe('fileForUrl()', () => {
  it('fileForUrl() maps app URLs into the root and refuses other hosts and climbing paths', () => {
    expect(fileForUrl('/r', 'app://engram/')).toBe('/r/index.html');
    expect(fileForUrl('/r', 'app://engram/models/m/config.json')).toBe('/r/models/m/config.json');
    expect(fileForUrl('/r', 'app://evil/index.html')).toBeUndefined();
    expect(fileForUrl('/r', 'app://engram/%2e%2e%2fsecret')).toBeUndefined();
    expect(fileForUrl('/r', 'app://engram/%E0%A4%A')).toBeUndefined();
    expect(fileForUrl('/r', 'https://engram/index.html')).toBeUndefined();
  });
});

describe('CONTENT_SECURITY_POLICY', () => {
  it('CONTENT_SECURITY_POLICY allows only the app itself (and its own blob URLs), WebAssembly but no eval, no inline script', () => {
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'none'");
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self' blob: 'wasm-unsafe-eval'");
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/'unsafe-eval'|'unsafe-inline'/);
    // Only connect-src reaches past the app (for sync: https, or http on loopback), and no source is a bare wildcard.
    const outside = CONTENT_SECURITY_POLICY.split('; ').filter((d) => /https?:|\*/.test(d));
    expect(outside).toEqual(["connect-src 'self' https: http://127.0.0.1:* http://localhost:*"]);
    expect(CONTENT_SECURITY_POLICY).toContain("object-src 'none'");
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
  });

  it('CONTENT_SECURITY_POLICY_META is the same policy, less frame-ancestors, which a meta element cannot carry', () => {
    expect(CONTENT_SECURITY_POLICY_META).toBe(
      CONTENT_SECURITY_POLICY.split('; ')
        .filter((d) => !d.startsWith('frame-ancestors '))
        .join('; '),
    );
  });
});
