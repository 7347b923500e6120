/**
 * The one API the desktop renderer may use from outside its page, declared once.
 * The Electron preload exposes it through `contextBridge` (backed by IPC to the
 * main process); the web fallback (`npm start` without the Electron binary)
 * implements the same interface with downloads, uploads and session-only keys.
 * Types and constants only: no Electron, no DOM, no Node.
 */

/** The name under which the preload exposes the bridge on `window`. */
export const BRIDGE_GLOBAL = 'engramDesktop';

/** IPC channels between the preload and the main process. */
export const CHANNELS = {
  saveFile: 'engram:save-file',
  openFile: 'engram:open-file',
  secretGet: 'engram:secret-get',
  secretSet: 'engram:secret-set',
  secretDelete: 'engram:secret-delete',
  appInfo: 'engram:app-info',
  syncServer: 'engram:sync-server',
  modelServer: 'engram:model-server',
  menuCommand: 'engram:menu-command',
  /** Main → renderer: an MCP client's call for the renderer's engram to answer. */
  hubCall: 'engram:hub-call',
  /** Renderer → main: the answer to a hubCall, by its id. */
  hubReply: 'engram:hub-reply',
  hubClients: 'engram:hub-clients',
  hubCreateClient: 'engram:hub-create-client',
  hubRevokeClient: 'engram:hub-revoke-client',
  hubStatus: 'engram:hub-status',
  storeKey: 'engram:store-key',
} as const;

/** Secrets the app keeps outside IndexedDB: the sync server's API key, the encryption passphrase, the model server's key. */
export const SECRET_NAMES = ['sync-api-key', 'sync-passphrase', 'model-api-key'] as const;
export type SecretName = (typeof SECRET_NAMES)[number];

/** Commands the application menu sends to the renderer. */
export const MENU_COMMANDS = [
  'import',
  'export',
  'view-chat',
  'view-memories',
  'view-conversations',
  'view-blocks',
  'view-map',
  'view-status',
  'view-transfer',
  'view-sync',
  'view-forget',
  'view-agents',
] as const;
export type MenuCommand = (typeof MENU_COMMANDS)[number];

/** Largest file the bridge reads or writes (an export of 100k memories with vectors is about 150 MB). */
export const MAX_FILE_BYTES = 1024 * 1024 * 1024;
/** Longest secret accepted. */
export const MAX_SECRET_CHARS = 4096;
/** Longest suggested file name. */
export const MAX_FILE_NAME_CHARS = 200;

/** An error that crossed the bridge: engram's name, code and message (class identity does not cross). */
export interface BridgeFailure {
  name: string;
  code: string;
  message: string;
}

/** Every bridge call answers with a value or a failure, never a thrown error (errors lose their fields on the way). */
export type BridgeResult<T> = { ok: true; value: T } | { ok: false; error: BridgeFailure };

/** A file to save: what the export produced and the name the user is offered. */
export interface SaveFileRequest {
  suggestedName: string;
  bytes: Uint8Array;
}

/** Where the file went; `saved: false` when the user cancelled. */
export interface SaveFileAnswer {
  saved: boolean;
  /** Path (desktop) or file name (web) of the saved file. */
  location?: string;
}

/** A file the user picked to import; null answer when cancelled. */
export interface OpenedFile {
  name: string;
  bytes: Uint8Array;
}

/** What the shell runs on. */
export interface AppInfo {
  shell: 'electron' | 'web';
  version: string;
  platform: string;
  /**
   * Whether secrets are encrypted by the OS keychain (Electron safeStorage) and
   * kept across sessions; when false they live in memory for the session only
   * (always on the web; on desktop when no keychain protects them).
   */
  secretsPersist: boolean;
  /** Desktop only, when secrets do not persist: why the OS keychain cannot protect them (a sentence for the user). */
  secretsUnprotectedReason?: string;
}

/** Bytes of the store's key kept in the OS keychain (an AES-256-GCM key). */
export const STORE_KEY_BYTES = 32;

/**
 * The key the app's store is encrypted at rest with, as the shell hands it to the
 * renderer: `key` holds the raw bytes of a random AES-256 key made once and kept
 * in the OS keychain (the renderer imports it as a non-extractable CryptoKey and
 * wipes the bytes); `unavailable` when no keychain can keep it (no OS encryption,
 * Linux without a keyring, the browser fallback, or a stored key that cannot be
 * read): the app then asks the user for a passphrase, and `reason` says why.
 */
export type StoreKeyAnswer = { kind: 'key'; key: Uint8Array } | { kind: 'unavailable'; reason: string };

/** Who an MCP client acts for: every call it makes reads and writes inside this scope only. */
export interface HubScope {
  agentId: string;
  userId?: string;
}

/** What an MCP client asks the renderer's engram: one agent tool, or the memories of its scope. */
export type HubOperation = { kind: 'tool'; name: string; args: unknown } | { kind: 'memories'; limit: number };

/** A call routed from the main process's MCP server to the renderer. */
export interface HubCall {
  /** Pairs the reply with the call. */
  id: string;
  /** The client's scope, taken from its token (never from the request). */
  scope: HubScope;
  op: HubOperation;
}

/** One memory as an MCP resource shows it. */
export interface HubMemory {
  id: string;
  text: string;
  createdAt: string;
}

/** The renderer's answer: the tool's text, or the scope's memories. */
export type HubAnswer = { kind: 'tool'; text: string } | { kind: 'memories'; memories: HubMemory[] };

/** One call a client made, as the Agents view lists it. */
export interface HubCallRecord {
  /** ISO 8601 time of the call. */
  at: string;
  /** Tool name, or `memories` for a resource read. */
  what: string;
  ok: boolean;
}

/** A connected client as the app shows it (its token is never shown again after creation). */
export interface HubClientInfo {
  id: string;
  name: string;
  scope: HubScope;
  createdAt: string;
  /** The newest calls first (at most MAX_HUB_CALL_RECORDS). */
  lastCalls: HubCallRecord[];
}

/** A new client: its info and the bearer token, shown to the user once. */
export interface HubNewClient {
  client: HubClientInfo;
  token: string;
  /** The MCP endpoint to give the client, e.g. `http://127.0.0.1:7457/mcp`; undefined when the server is not running. */
  url: string | undefined;
}

/**
 * Whether the MCP server listens: `listening` at `url`; `failed` when it could not
 * (`reason`, e.g. the port is taken); `off` when this shell has none (the web
 * fallback has no main process, so no server; `reason` says so).
 */
export type HubStatus =
  | {
      state: 'listening';
      url: string;
      port: number;
      /** Absolute path of the stdio bridge script when the app runs from a checkout (for the config snippets). */
      bridgeScript?: string;
    }
  | { state: 'failed'; reason: string; port: number }
  | { state: 'off'; reason: string };

/** How many calls per client the app remembers for the Agents view. */
export const MAX_HUB_CALL_RECORDS = 20;
/** Longest client name. */
export const MAX_HUB_CLIENT_NAME_CHARS = 100;

/**
 * The renderer's window on the outside world.
 * @example
 * const answer = await bridge.saveFile({ suggestedName: 'engram.jsonl', bytes })
 * if (answer.ok && answer.value.saved) console.log('saved to', answer.value.location)
 */
export interface DesktopBridge {
  /** Asks where to save (a dialog, or a download on the web) and writes the bytes. */
  saveFile(request: SaveFileRequest): Promise<BridgeResult<SaveFileAnswer>>;
  /** Asks for a file to import (a dialog, or a file picker on the web); null when cancelled. */
  openFile(): Promise<BridgeResult<OpenedFile | null>>;
  /** A stored secret, or null. */
  getSecret(name: SecretName): Promise<BridgeResult<string | null>>;
  /** Stores a secret (encrypted by the OS on desktop). */
  setSecret(name: SecretName, value: string): Promise<BridgeResult<null>>;
  /** Forgets a secret. */
  deleteSecret(name: SecretName): Promise<BridgeResult<null>>;
  /** What the shell is. */
  appInfo(): Promise<BridgeResult<AppInfo>>;
  /**
   * Opens the network to the sync server's origin (https, or http on loopback),
   * or closes it again with null. Every other request off the app stays refused.
   * On desktop the user allows each new origin in a dialog of the main process;
   * refused, the answer is an `AbortError` (code `ABORTED`) and nothing opens.
   */
  setSyncServer(url: string | null): Promise<BridgeResult<null>>;
  /**
   * Opens the network to the chat's model server (https, or http on loopback), or
   * closes it with null: the same rule and the same dialog as `setSyncServer`, for
   * an origin of its own.
   */
  setModelServer(url: string | null): Promise<BridgeResult<null>>;
  /**
   * Answers the calls local agents make through the app's MCP server with
   * `answer` (desktop only; the web shell has no server and never calls it).
   * Returns the unsubscribe function.
   */
  onHubCall(answer: (call: HubCall) => Promise<BridgeResult<HubAnswer>>): () => void;
  /** The MCP clients the user created (desktop; empty on the web). */
  hubClients(): Promise<BridgeResult<HubClientInfo[]>>;
  /** Creates a client with its own token and scope (desktop; a failure on the web). */
  createHubClient(name: string, scope: HubScope): Promise<BridgeResult<HubNewClient>>;
  /** Revokes a client's token: its next call is refused. */
  revokeHubClient(id: string): Promise<BridgeResult<null>>;
  /** Whether the MCP server listens, and where. */
  hubStatus(): Promise<BridgeResult<HubStatus>>;
  /**
   * The key of the app's store, made once and kept in the OS keychain (desktop), or
   * why there is none (then the app asks for a passphrase).
   */
  storeKey(): Promise<BridgeResult<StoreKeyAnswer>>;
  /** Calls `listener` on each application-menu command; returns the unsubscribe function. */
  onMenuCommand(listener: (command: MenuCommand) => void): () => void;
}
