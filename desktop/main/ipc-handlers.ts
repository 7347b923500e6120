/**
 * The main process's IPC handlers: file dialogs for export and import, the
 * secret store, the store's at-rest key (store-key.ts), app info, and the sync and model servers the network opens to
 * (each after the user allowed it in a main-process dialog). Every call is checked first: it must come from the
 * app's own page, and every argument is validated (type, size, allowed names).
 * Handlers answer with a BridgeResult instead of throwing, so the error's code
 * survives the trip to the renderer.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { ClosedError, HubError, StoreError, ValidationError, isEngramError } from '../../lib/errors.js';
import { checkOptions, type Check, type OptionsSpec } from '../../lib/util/options.js';
import {
  CHANNELS,
  MAX_FILE_BYTES,
  MAX_FILE_NAME_CHARS,
  MAX_SECRET_CHARS,
  SECRET_NAMES,
  type AppInfo,
  type BridgeResult,
  type HubClientInfo,
  type HubNewClient,
  type HubStatus,
  type OpenedFile,
  type SaveFileAnswer,
  type SaveFileRequest,
  type SecretName,
  type StoreKeyAnswer,
} from '../preload/bridge-api.js';
import type { ElectronSurface, FileFilter, WindowSurface } from './electron-surface.js';
import { isAppUrl } from './hardening.js';
import { MAX_SERVER_URL_CHARS, serverOrigin } from '../preload/server-origin.js';
import type { HubCalls } from './hub-calls.js';
import { requireClientName, requireHubScope, type HubClients } from './hub-clients.js';
import type { SecretStore } from './secret-store.js';
import type { StoreKey } from './store-key.js';
import { askToAllow, type ServerAccess } from './server-access.js';

/** The export formats' file filter: plain (JSON lines) and encrypted (`.engram`). */
export const EXPORT_FILTERS: FileFilter[] = [{ name: 'engram export', extensions: ['jsonl', 'engram'] }];

/** What the handlers need besides Electron. */
export interface IpcContext<W extends WindowSurface = WindowSurface> {
  /** The window dialogs attach to; undefined when none is open. */
  window(): W | undefined;
  secrets: SecretStore;
  /** The store's at-rest key in the OS keychain. */
  storeKey: StoreKey;
  platform: string;
  /** The one origin the network is open to, for sync (opened only with the user's permission). */
  syncServer: ServerAccess;
  /** The one origin the network is open to for the chat's model (opened only with the user's permission). */
  modelServer: ServerAccess;
  /** The MCP hub, when the app runs its server. */
  hub?: HubContext;
}

/** The MCP hub's parts the handlers reach. */
export interface HubContext {
  clients: HubClients;
  calls: HubCalls;
  /** The endpoint's URL, once it listens. */
  url(): string | undefined;
  /** Whether the server listens, and where (or why not). */
  status(): HubStatus;
}

function requireHub(ctx: IpcContext): HubContext {
  if (ctx.hub === undefined) throw new HubError('closed', 'the MCP server is off in this app');
  return ctx.hub;
}

type Handler = (...args: unknown[]) => Promise<unknown>;

function requireArity(args: readonly unknown[], n: number): void {
  if (args.length !== n) throw new ValidationError('arguments', `expected ${n}, got ${args.length}`);
}

/** A secret's name, from the allowed list only. */
export function requireSecretName(value: unknown): SecretName {
  if (typeof value !== 'string' || !(SECRET_NAMES as readonly string[]).includes(value)) {
    throw new ValidationError('name', `must be one of ${SECRET_NAMES.join(', ')}`);
  }
  return value as SecretName;
}

/** A secret's value: a non-empty string of at most MAX_SECRET_CHARS characters. */
export function requireSecretValue(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new ValidationError('value', 'must be a non-empty string');
  if (value.length > MAX_SECRET_CHARS)
    throw new ValidationError('value', `must be at most ${MAX_SECRET_CHARS} characters`);
  return value;
}

/** A save request: a bare file name (no folders) and at most MAX_FILE_BYTES bytes. */
export function requireSaveRequest(value: unknown): SaveFileRequest {
  return checkOptions('request', value, SAVE_REQUEST_SPEC, 'must be an object with suggestedName and bytes');
}

/** A bare file name (no folders, no control characters) of 1 to MAX_FILE_NAME_CHARS characters. */
const fileName: Check<string> = (field, suggestedName) => {
  if (typeof suggestedName !== 'string' || suggestedName.trim() === '' || suggestedName.length > MAX_FILE_NAME_CHARS) {
    throw new ValidationError(field, `must be a file name of 1 to ${MAX_FILE_NAME_CHARS} characters`);
  }
  if (/[/\\\0-\x1f]/.test(suggestedName) || suggestedName === '.' || suggestedName === '..') {
    throw new ValidationError(field, 'must be a bare file name, without folders or control characters');
  }
  return suggestedName;
};

/** At most MAX_FILE_BYTES bytes. */
const fileBytes: Check<Uint8Array> = (field, bytes) => {
  if (!(bytes instanceof Uint8Array)) throw new ValidationError(field, 'must be a Uint8Array');
  if (bytes.byteLength > MAX_FILE_BYTES) throw new ValidationError(field, `must be at most ${MAX_FILE_BYTES} bytes`);
  return bytes;
};

/** The checks of a {@link SaveFileRequest}, tied to the bridge's type. */
const SAVE_REQUEST_SPEC = { suggestedName: fileName, bytes: fileBytes } satisfies OptionsSpec<SaveFileRequest>;

/** A server URL's origin (https, or http on loopback, no credentials), or null to close; anything else is refused. */
export function requireServerOrigin(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || value.length > MAX_SERVER_URL_CHARS)
    throw new ValidationError('url', 'must be a URL string or null');
  const origin = serverOrigin(value);
  if (origin === undefined)
    throw new ValidationError(
      'url',
      'must be an https URL, or http on this machine (127.0.0.1, localhost), without credentials',
    );
  return origin;
}

/** The failure an error becomes on the bridge. */
export function toFailure(e: unknown): BridgeResult<never> {
  if (isEngramError(e)) return { ok: false, error: { name: e.name, code: e.code, message: e.message } };
  const wrapped = new StoreError(e instanceof Error ? e.message : String(e), { cause: e });
  return { ok: false, error: { name: wrapped.name, code: wrapped.code, message: wrapped.message } };
}

function requireWindow<W extends WindowSurface>(ctx: IpcContext<W>): W {
  const window = ctx.window();
  if (window === undefined || window.isDestroyed()) throw new ClosedError('the app window');
  return window;
}

/**
 * A server channel's handler: the origin of the URL the renderer names, opened once the user allowed it (the user,
 * not the renderer, opens the network: a main-process dialog names the origin), or null to close `access`.
 */
function serverHandler<W extends WindowSurface>(
  electron: Pick<ElectronSurface<W>, 'dialog'>,
  ctx: IpcContext<W>,
  access: ServerAccess,
): Handler {
  return async (...args) => {
    requireArity(args, 1);
    const origin = requireServerOrigin(args[0]);
    if (origin === null) access.close();
    else await access.open(origin, (question) => askToAllow(electron.dialog, requireWindow(ctx), question));
    return null;
  };
}

/** The handlers by channel, without the sender check (exported for tests of each one). */
export function ipcHandlers<W extends WindowSurface>(
  electron: Pick<ElectronSurface<W>, 'dialog' | 'app'>,
  ctx: IpcContext<W>,
): Record<string, Handler> {
  return {
    [CHANNELS.saveFile]: async (...args): Promise<SaveFileAnswer> => {
      requireArity(args, 1);
      const { suggestedName, bytes } = requireSaveRequest(args[0]);
      const answer = await electron.dialog.showSaveDialog(requireWindow(ctx), {
        title: 'Export memories',
        defaultPath: suggestedName,
        filters: EXPORT_FILTERS,
      });
      if (answer.canceled || answer.filePath === undefined || answer.filePath === '') return { saved: false };
      await writeFile(answer.filePath, bytes);
      return { saved: true, location: answer.filePath };
    },
    [CHANNELS.openFile]: async (...args): Promise<OpenedFile | null> => {
      requireArity(args, 0);
      const answer = await electron.dialog.showOpenDialog(requireWindow(ctx), {
        title: 'Import memories',
        properties: ['openFile'],
        filters: EXPORT_FILTERS,
      });
      const path = answer.filePaths[0];
      if (answer.canceled || path === undefined) return null;
      const info = await stat(path);
      if (!info.isFile()) throw new ValidationError('file', 'is not a regular file');
      if (info.size > MAX_FILE_BYTES) throw new ValidationError('file', `is larger than ${MAX_FILE_BYTES} bytes`);
      const data = await readFile(path);
      return { name: basename(path), bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
    },
    [CHANNELS.secretGet]: async (...args) => {
      requireArity(args, 1);
      return ctx.secrets.get(requireSecretName(args[0]));
    },
    [CHANNELS.secretSet]: async (...args) => {
      requireArity(args, 2);
      await ctx.secrets.set(requireSecretName(args[0]), requireSecretValue(args[1]));
      return null;
    },
    [CHANNELS.secretDelete]: async (...args) => {
      requireArity(args, 1);
      await ctx.secrets.delete(requireSecretName(args[0]));
      return null;
    },
    [CHANNELS.syncServer]: serverHandler(electron, ctx, ctx.syncServer),
    [CHANNELS.modelServer]: serverHandler(electron, ctx, ctx.modelServer),
    [CHANNELS.hubReply]: (...args) => {
      requireArity(args, 2);
      requireHub(ctx).calls.answer(args[0], args[1]);
      return Promise.resolve(null);
    },
    [CHANNELS.hubClients]: (...args): Promise<HubClientInfo[]> => {
      requireArity(args, 0);
      return Promise.resolve(ctx.hub === undefined ? [] : ctx.hub.clients.list());
    },
    [CHANNELS.hubCreateClient]: async (...args): Promise<HubNewClient> => {
      requireArity(args, 2);
      const hub = requireHub(ctx);
      const created = await hub.clients.create(requireClientName(args[0]), requireHubScope(args[1]));
      return { ...created, url: hub.url() };
    },
    [CHANNELS.hubRevokeClient]: async (...args) => {
      requireArity(args, 1);
      if (typeof args[0] !== 'string') throw new ValidationError('id', 'must be a string');
      await requireHub(ctx).clients.revoke(args[0]);
      return null;
    },
    [CHANNELS.hubStatus]: (...args): Promise<HubStatus> => {
      requireArity(args, 0);
      return Promise.resolve(
        ctx.hub === undefined
          ? { state: 'off', reason: 'this app was started without its MCP server' }
          : ctx.hub.status(),
      );
    },
    [CHANNELS.storeKey]: (...args): Promise<StoreKeyAnswer> => {
      requireArity(args, 0);
      return ctx.storeKey.get();
    },
    [CHANNELS.appInfo]: (...args): Promise<AppInfo> => {
      requireArity(args, 0);
      const reason = ctx.secrets.unprotectedReason();
      const info: AppInfo = {
        shell: 'electron',
        version: electron.app.getVersion(),
        platform: ctx.platform,
        secretsPersist: reason === undefined,
      };
      return Promise.resolve(reason === undefined ? info : { ...info, secretsUnprotectedReason: reason });
    },
  };
}

/**
 * Registers every handler with `ipcMain.handle`. A call from any frame that is
 * not the app's page is refused before its arguments are looked at.
 */
export function registerIpcHandlers<W extends WindowSurface>(
  electron: Pick<ElectronSurface<W>, 'ipcMain' | 'dialog' | 'app'>,
  ctx: IpcContext<W>,
): void {
  for (const [channel, handler] of Object.entries(ipcHandlers(electron, ctx))) {
    electron.ipcMain.handle(channel, async (event, ...args): Promise<BridgeResult<unknown>> => {
      const from = event.senderFrame?.url ?? '';
      if (!isAppUrl(from)) {
        return toFailure(new ValidationError('sender', `${channel} is only answered for the app's own page`));
      }
      try {
        return { ok: true, value: await handler(...args) };
      } catch (e) {
        return toFailure(e);
      }
    });
  }
}
