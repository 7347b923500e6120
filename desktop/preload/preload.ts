/**
 * The preload (sandboxed; bundled to CommonJS): exposes the DesktopBridge, and
 * nothing else, on `window.engramDesktop`. Each method forwards to one IPC
 * channel; the main process validates the arguments again.
 */
import { contextBridge, ipcRenderer } from 'electron';
import {
  BRIDGE_GLOBAL,
  CHANNELS,
  MENU_COMMANDS,
  type BridgeResult,
  type DesktopBridge,
  type HubCall,
  type MenuCommand,
} from './bridge-api.js';

function invoke<T>(channel: string, ...args: unknown[]): Promise<BridgeResult<T>> {
  return ipcRenderer.invoke(channel, ...args) as Promise<BridgeResult<T>>;
}

const bridge: DesktopBridge = {
  saveFile: (request) => invoke(CHANNELS.saveFile, { suggestedName: request.suggestedName, bytes: request.bytes }),
  openFile: () => invoke(CHANNELS.openFile),
  getSecret: (name) => invoke(CHANNELS.secretGet, name),
  setSecret: (name, value) => invoke(CHANNELS.secretSet, name, value),
  deleteSecret: (name) => invoke(CHANNELS.secretDelete, name),
  appInfo: () => invoke(CHANNELS.appInfo),
  setSyncServer: (url) => invoke(CHANNELS.syncServer, url),
  setModelServer: (url) => invoke(CHANNELS.modelServer, url),
  onHubCall: (answer) => {
    // The main process built the call (its scope comes from the client's token); the answer goes back by id.
    const forward = (_event: unknown, call: HubCall): void => {
      void answer(call).then((result) => ipcRenderer.invoke(CHANNELS.hubReply, call.id, result));
    };
    ipcRenderer.on(CHANNELS.hubCall, forward);
    return () => {
      ipcRenderer.removeListener(CHANNELS.hubCall, forward);
    };
  },
  hubClients: () => invoke(CHANNELS.hubClients),
  createHubClient: (name, scope) => invoke(CHANNELS.hubCreateClient, name, scope),
  revokeHubClient: (id) => invoke(CHANNELS.hubRevokeClient, id),
  hubStatus: () => invoke(CHANNELS.hubStatus),
  storeKey: () => invoke(CHANNELS.storeKey),
  onMenuCommand: (listener) => {
    const forward = (_event: unknown, command: unknown): void => {
      if (typeof command === 'string' && (MENU_COMMANDS as readonly string[]).includes(command))
        listener(command as MenuCommand);
    };
    ipcRenderer.on(CHANNELS.menuCommand, forward);
    return () => {
      ipcRenderer.removeListener(CHANNELS.menuCommand, forward);
    };
  },
};

contextBridge.exposeInMainWorld(BRIDGE_GLOBAL, bridge);
