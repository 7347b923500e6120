/**
 * The DesktopBridge in a plain browser tab (`npm start` where Electron's binary
 * is missing): a download instead of the save dialog, a file picker instead of
 * the open dialog, and secrets kept in memory for this session only (never in
 * IndexedDB, localStorage or a file); no store key (no keychain).
 */
import type {
  AppInfo,
  BridgeResult,
  DesktopBridge,
  OpenedFile,
  SaveFileAnswer,
  SecretName,
} from '../preload/bridge-api.js';
import { MAX_FILE_BYTES } from '../preload/bridge-api.js';

/** Why this shell serves no agents: a browser tab has no main process to listen on a port. */
export const WEB_NO_HUB =
  'this is the browser fallback (npm run desktop:web), which has no main process and so cannot listen for agents; run the desktop app (npm run desktop:electron once, then npm start) to connect Claude Desktop, Cursor or a script';

/** Why the browser fallback has no store key. */
export const WEB_NO_KEYCHAIN = 'this is the browser fallback, and a browser tab has no OS keychain to keep a key in';

function ok<T>(value: T): BridgeResult<T> {
  return { ok: true, value };
}

function failed(code: string, message: string): BridgeResult<never> {
  return { ok: false, error: { name: code === 'VALIDATION' ? 'ValidationError' : 'StoreError', code, message } };
}

/** Lets the user pick one file; null when the picker is dismissed. */
function pickFile(): Promise<File | null> {
  return new Promise((resolve) => {
    const input = document.createElement('input');
    input.type = 'file';
    input.accept = '.jsonl,application/x-ndjson,application/json,text/plain';
    input.hidden = true;
    input.dataset['testid'] = 'web-file-input';
    const finish = (file: File | null): void => {
      input.remove();
      resolve(file);
    };
    input.addEventListener('change', () => {
      finish(input.files?.[0] ?? null);
    });
    input.addEventListener('cancel', () => {
      finish(null);
    });
    document.body.append(input);
    input.click();
  });
}

/**
 * The web implementation of the bridge.
 * @example
 * const bridge = window.engramDesktop ?? createWebBridge()
 */
export function createWebBridge(): DesktopBridge {
  const secrets = new Map<SecretName, string>();
  return {
    saveFile(request): Promise<BridgeResult<SaveFileAnswer>> {
      if (request.bytes.byteLength > MAX_FILE_BYTES)
        return Promise.resolve(failed('VALIDATION', `request.bytes: must be at most ${MAX_FILE_BYTES} bytes`));
      const url = URL.createObjectURL(
        new Blob([request.bytes as Uint8Array<ArrayBuffer>], { type: 'application/x-ndjson' }),
      );
      const link = document.createElement('a');
      link.href = url;
      link.download = request.suggestedName;
      link.hidden = true;
      document.body.append(link);
      link.click();
      link.remove();
      // The download has started from the URL; give the browser a moment before revoking it.
      setTimeout(() => {
        URL.revokeObjectURL(url);
      }, 10_000);
      return Promise.resolve(ok({ saved: true, location: request.suggestedName }));
    },
    async openFile(): Promise<BridgeResult<OpenedFile | null>> {
      const file = await pickFile();
      if (file === null) return ok(null);
      if (file.size > MAX_FILE_BYTES) return failed('VALIDATION', `file: is larger than ${MAX_FILE_BYTES} bytes`);
      return ok({ name: file.name, bytes: new Uint8Array(await file.arrayBuffer()) });
    },
    getSecret: (name) => Promise.resolve(ok(secrets.get(name) ?? null)),
    setSecret: (name, value) => {
      secrets.set(name, value);
      return Promise.resolve(ok(null));
    },
    deleteSecret: (name) => {
      secrets.delete(name);
      return Promise.resolve(ok(null));
    },
    appInfo: (): Promise<BridgeResult<AppInfo>> =>
      Promise.resolve(
        ok({
          shell: 'web',
          version: 'web',
          platform: (globalThis as { navigator?: Navigator }).navigator?.platform ?? 'unknown',
          secretsPersist: false,
        }),
      ),
    // The page's CSP already limits connections to https and loopback; a browser tab has no request filter to open.
    setSyncServer: () => Promise.resolve(ok(null)),
    setModelServer: () => Promise.resolve(ok(null)),
    // A browser tab cannot listen on a port: local agents reach engram through the desktop app only.
    onHubCall: () => () => undefined,
    hubClients: () => Promise.resolve(ok([])),
    createHubClient: () => Promise.resolve(failed('VALIDATION', WEB_NO_HUB)),
    revokeHubClient: () => Promise.resolve(ok(null)),
    hubStatus: () =>
      Promise.resolve(
        ok({
          state: 'off',
          reason: WEB_NO_HUB,
        }),
      ),
    // A browser tab has no OS keychain: nothing here could keep a key from whoever reads the disk.
    storeKey: () => Promise.resolve(ok({ kind: 'unavailable', reason: WEB_NO_KEYCHAIN })),
    onMenuCommand: () => () => undefined,
  };
}
