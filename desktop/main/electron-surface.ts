/**
 * The part of the Electron module the main process uses, as narrow structural
 * types. `main.ts` passes the real module (the compiler checks that it fits);
 * tests pass a fake, so the main process is tested without Electron's binary.
 * Types only.
 */

/** Options of a BrowserWindow that the app sets. */
export interface WindowOptions {
  width: number;
  height: number;
  minWidth: number;
  minHeight: number;
  title: string;
  show: boolean;
  backgroundColor: string;
  webPreferences: {
    preload: string;
    contextIsolation: boolean;
    sandbox: boolean;
    nodeIntegration: boolean;
    nodeIntegrationInWorker: boolean;
    nodeIntegrationInSubFrames: boolean;
    webSecurity: boolean;
    allowRunningInsecureContent: boolean;
    webviewTag: boolean;
    experimentalFeatures: boolean;
    navigateOnDragDrop: boolean;
    spellcheck: boolean;
  };
}

/** A navigation or window-open event that can be refused. */
export interface PreventableEvent {
  preventDefault(): void;
}

/** The renderer side of a window. */
export interface ContentsSurface {
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' } | { action: 'allow' }): void;
  on(event: 'will-navigate' | 'will-redirect', listener: (event: PreventableEvent, url: string) => void): this;
  on(event: 'will-attach-webview', listener: (event: PreventableEvent) => void): this;
  send(channel: string, ...args: unknown[]): void;
  getURL(): string;
}

/** An application window. */
export interface WindowSurface {
  readonly webContents: ContentsSurface;
  loadURL(url: string): Promise<void>;
  once(event: 'ready-to-show', listener: () => void): this;
  on(event: 'closed', listener: () => void): this;
  show(): void;
  focus(): void;
  restore(): void;
  isMinimized(): boolean;
  isDestroyed(): boolean;
}

/** The permission and request policy of the default session. */
export interface SessionSurface {
  setPermissionRequestHandler(
    handler: ((contents: unknown, permission: string, callback: (granted: boolean) => void) => void) | null,
  ): void;
  setPermissionCheckHandler(handler: ((contents: unknown, permission: string) => boolean) | null): void;
  webRequest: {
    onBeforeRequest(
      listener: ((details: { url: string }, callback: (response: { cancel?: boolean }) => void) => void) | null,
    ): void;
  };
}

/** A dialog's answer. */
export interface SaveDialogAnswer {
  canceled: boolean;
  filePath?: string;
}
export interface OpenDialogAnswer {
  canceled: boolean;
  filePaths: string[];
}

/** A message box's options (the part the app sets). */
export interface MessageBoxOptions {
  type: 'none' | 'info' | 'error' | 'question' | 'warning';
  title: string;
  message: string;
  detail: string;
  buttons: string[];
  defaultId: number;
  cancelId: number;
  noLink: boolean;
}

/** The index of the button the user chose (`cancelId` for Escape). */
export interface MessageBoxAnswer {
  response: number;
}

/** A file-type filter of a dialog. */
export interface FileFilter {
  name: string;
  extensions: string[];
}

/** One item of the application menu. */
export interface MenuItemTemplate {
  label?: string;
  role?:
    | 'quit'
    | 'close'
    | 'copy'
    | 'paste'
    | 'cut'
    | 'selectAll'
    | 'undo'
    | 'redo'
    | 'about'
    | 'minimize'
    | 'togglefullscreen'
    | 'resetZoom'
    | 'zoomIn'
    | 'zoomOut'
    | 'fileMenu'
    | 'editMenu'
    | 'windowMenu'
    | 'appMenu';
  type?: 'separator' | 'normal' | 'submenu';
  accelerator?: string;
  submenu?: MenuItemTemplate[];
  click?: () => void;
}

/** The whole surface; `W` is the window class (Electron's BrowserWindow, or a test's fake). */
export interface ElectronSurface<W extends WindowSurface = WindowSurface> {
  app: {
    requestSingleInstanceLock(): boolean;
    quit(): void;
    whenReady(): Promise<void>;
    getPath(name: 'userData'): string;
    getVersion(): string;
    on(event: 'second-instance' | 'window-all-closed' | 'activate' | 'will-quit', listener: () => void): unknown;
    on(event: 'web-contents-created', listener: (event: unknown, contents: ContentsSurface) => void): unknown;
  };
  BrowserWindow: {
    new (options: WindowOptions): W;
    getAllWindows(): W[];
  };
  ipcMain: {
    handle(
      channel: string,
      listener: (event: { senderFrame: { url: string } | null }, ...args: unknown[]) => unknown,
    ): void;
  };
  dialog: {
    showSaveDialog(
      window: W,
      options: { title: string; defaultPath: string; filters: FileFilter[] },
    ): Promise<SaveDialogAnswer>;
    showOpenDialog(
      window: W,
      options: { title: string; properties: ['openFile']; filters: FileFilter[] },
    ): Promise<OpenDialogAnswer>;
    showMessageBox(window: W, options: MessageBoxOptions): Promise<MessageBoxAnswer>;
  };
  safeStorage: {
    isEncryptionAvailable(): boolean;
    /** Linux only (not defined elsewhere): the backend holding the key; `basic_text` is a key built into Electron. */
    getSelectedStorageBackend(): string;
    encryptString(plainText: string): Buffer;
    decryptString(encrypted: Buffer): string;
  };
  Menu: {
    buildFromTemplate(template: MenuItemTemplate[]): unknown;
    setApplicationMenu(menu: unknown): void;
  };
  protocol: {
    registerSchemesAsPrivileged(
      schemes: {
        scheme: string;
        privileges: {
          standard: boolean;
          secure: boolean;
          supportFetchAPI: boolean;
          corsEnabled: boolean;
          stream: boolean;
        };
      }[],
    ): void;
    handle(scheme: string, handler: (request: Request) => Response | Promise<Response>): void;
  };
  session: { defaultSession: SessionSurface };
  net: { fetch(input: string): Promise<Response> };
}
