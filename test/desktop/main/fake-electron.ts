// A fake of the Electron surface the main process uses: records every call so
// tests can assert window options, handlers, menus, dialogs and hardening.
import { readFile, readdir, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type {
  ContentsSurface,
  ElectronSurface,
  FileFilter,
  MenuItemTemplate,
  OpenDialogAnswer,
  PreventableEvent,
  SaveDialogAnswer,
  SessionSurface,
  WindowOptions,
  WindowSurface,
} from '../../../desktop/main/electron-surface.js';

type Listener = (...args: never[]) => unknown;

/** A minimal event emitter with `emit` returning the listeners' results. */
class Emitter {
  readonly listeners = new Map<string, Listener[]>();
  on(event: string, listener: Listener): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }
  once(event: string, listener: Listener): this {
    return this.on(event, listener);
  }
  emit(event: string, ...args: unknown[]): void {
    for (const l of this.listeners.get(event) ?? []) (l as (...a: unknown[]) => unknown)(...args);
  }
}

/** A navigation event that records whether it was refused. */
export class FakeEvent implements PreventableEvent {
  prevented = false;
  preventDefault(): void {
    this.prevented = true;
  }
}

export class FakeContents extends Emitter implements ContentsSurface {
  windowOpenHandler: ((details: { url: string }) => { action: 'deny' } | { action: 'allow' }) | undefined;
  readonly sent: { channel: string; args: unknown[] }[] = [];
  url = '';
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' } | { action: 'allow' }): void {
    this.windowOpenHandler = handler;
  }
  send(channel: string, ...args: unknown[]): void {
    this.sent.push({ channel, args });
  }
  getURL(): string {
    return this.url;
  }
}

export class FakeWindow extends Emitter implements WindowSurface {
  static readonly created: FakeWindow[] = [];
  readonly webContents = new FakeContents();
  readonly options: WindowOptions;
  shown = false;
  focused = false;
  minimized = false;
  destroyed = false;
  constructor(options: WindowOptions) {
    super();
    this.options = options;
    FakeWindow.created.push(this);
  }
  static getAllWindows(): FakeWindow[] {
    return FakeWindow.created.filter((w) => !w.destroyed);
  }
  async loadURL(url: string): Promise<void> {
    this.webContents.url = url;
    this.emit('ready-to-show');
  }
  show(): void {
    this.shown = true;
  }
  focus(): void {
    this.focused = true;
  }
  restore(): void {
    this.minimized = false;
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
}

export class FakeSession implements SessionSurface {
  permissionRequest: ((contents: unknown, permission: string, callback: (granted: boolean) => void) => void) | null =
    null;
  permissionCheck: ((contents: unknown, permission: string) => boolean) | null = null;
  beforeRequest: ((details: { url: string }, callback: (response: { cancel?: boolean }) => void) => void) | null = null;
  setPermissionRequestHandler(handler: FakeSession['permissionRequest']): void {
    this.permissionRequest = handler;
  }
  setPermissionCheckHandler(handler: FakeSession['permissionCheck']): void {
    this.permissionCheck = handler;
  }
  readonly webRequest = {
    onBeforeRequest: (listener: FakeSession['beforeRequest']): void => {
      this.beforeRequest = listener;
    },
  };
}

/**
 * A reversible stand-in for the OS keychain: the ciphertext never contains the
 * plain text. `backend` is what Linux's `getSelectedStorageBackend()` answers
 * (`basic_text`: no keyring, encryption still "available").
 */
export function fakeSafeStorage(
  available = true,
): ElectronSurface['safeStorage'] & { available: boolean; backend: string; calls: string[] } {
  const state = {
    available,
    backend: 'gnome_libsecret',
    calls: [] as string[],
    isEncryptionAvailable: () => state.available,
    getSelectedStorageBackend: (): string => {
      state.calls.push('backend');
      return state.backend;
    },
    encryptString: (plain: string): Buffer => {
      state.calls.push('encrypt');
      return Buffer.concat([Buffer.from('FAKEOS1'), Buffer.from(plain, 'utf8').map((b) => b ^ 0x5a)]);
    },
    decryptString: (cipher: Buffer): string => {
      state.calls.push('decrypt');
      if (!cipher.subarray(0, 7).equals(Buffer.from('FAKEOS1'))) throw new TypeError('bad ciphertext');
      return Buffer.from(cipher.subarray(7).map((b) => b ^ 0x5a)).toString('utf8');
    },
  };
  return state;
}

type IpcListener = (event: { senderFrame: { url: string } | null }, ...args: unknown[]) => unknown;

/** The whole fake module plus what it recorded. */
export interface FakeElectron extends ElectronSurface<FakeWindow> {
  app: ElectronSurface<FakeWindow>['app'] & Emitter & { lock: boolean; quitCalls: number; ready: () => void };
  handlers: Map<string, IpcListener>;
  schemes: unknown[];
  protocolHandlers: Map<string, (request: Request) => Response | Promise<Response>>;
  menuTemplate: MenuItemTemplate[] | undefined;
  saveAnswers: SaveDialogAnswer[];
  openAnswers: OpenDialogAnswer[];
  /** Button indexes the message boxes answer, in order; none queued answers the cancel button. */
  messageAnswers: number[];
  dialogCalls: {
    kind: 'save' | 'open' | 'message';
    window: FakeWindow;
    options: { title: string; filters?: FileFilter[]; defaultPath?: string; message?: string };
  }[];
  session: { defaultSession: FakeSession };
  safeStorage: ReturnType<typeof fakeSafeStorage>;
}

/** A fresh fake; `lock: false` simulates a second instance. */
export function fakeElectron(
  options: { lock?: boolean; userData?: string; files?: Map<string, Uint8Array> } = {},
): FakeElectron {
  FakeWindow.created.length = 0;
  let resolveReady!: () => void;
  const ready = new Promise<void>((r) => (resolveReady = r));
  const app = Object.assign(new Emitter(), {
    lock: options.lock ?? true,
    quitCalls: 0,
    ready: () => {
      resolveReady();
    },
    requestSingleInstanceLock(): boolean {
      return app.lock;
    },
    quit(): void {
      app.quitCalls++;
    },
    whenReady: () => ready,
    getPath: (): string => options.userData ?? '/nonexistent',
    getVersion: () => '0.1.0-test',
  });
  const fake: FakeElectron = {
    app,
    BrowserWindow: FakeWindow,
    handlers: new Map(),
    schemes: [],
    protocolHandlers: new Map(),
    menuTemplate: undefined,
    saveAnswers: [],
    openAnswers: [],
    messageAnswers: [],
    dialogCalls: [],
    ipcMain: {
      handle: (channel, listener) => {
        if (fake.handlers.has(channel)) throw new TypeError(`second handler for ${channel}`);
        fake.handlers.set(channel, listener);
      },
    },
    dialog: {
      showSaveDialog: async (window, o) => {
        fake.dialogCalls.push({ kind: 'save', window, options: o });
        return fake.saveAnswers.shift() ?? { canceled: true };
      },
      showOpenDialog: async (window, o) => {
        fake.dialogCalls.push({ kind: 'open', window, options: o });
        return fake.openAnswers.shift() ?? { canceled: true, filePaths: [] };
      },
      showMessageBox: async (window, o) => {
        fake.dialogCalls.push({ kind: 'message', window, options: o });
        return { response: fake.messageAnswers.shift() ?? o.cancelId };
      },
    },
    safeStorage: fakeSafeStorage(),
    Menu: {
      buildFromTemplate: (template) => {
        fake.menuTemplate = template;
        return { template };
      },
      setApplicationMenu: () => undefined,
    },
    protocol: {
      registerSchemesAsPrivileged: (schemes) => {
        fake.schemes.push(...schemes);
      },
      handle: (scheme, handler) => {
        fake.protocolHandlers.set(scheme, handler);
      },
    },
    session: { defaultSession: new FakeSession() },
    // Electron's net.fetch reads file: URLs as Chromium's file loader does (links
    // followed, a folder answered with an HTML listing of its entries); Node's fetch
    // reads no file: URL, so the fake does the same itself.
    net: {
      fetch: async (input) => {
        const path = fileURLToPath(input);
        if ((await stat(path)).isDirectory()) {
          const entries = (await readdir(path)).map((name) => `<a href="${name}">${name}</a>`).join('\n');
          return new Response(`<!doctype html><title>Index of ${path}</title>\n${entries}`, {
            headers: { 'content-type': 'text/html' },
          });
        }
        return new Response(await readFile(path));
      },
    },
  };
  return fake;
}
