/**
 * The chat's model server (Ollama, llama.cpp, LM Studio…) through the request
 * filter: like the sync server, one origin, opened only after the user allowed it
 * in a main-process dialog (which a compromised renderer can neither draw nor
 * answer), asked once per origin while the app runs. The access itself is a
 * `SyncServerAccess` of its own, so allowing one server never opens the other.
 */
import type { ElectronSurface, WindowSurface } from './electron-surface.js';
import { askToAllow, SyncServerAccess } from './sync-server-access.js';

/** The access for the model server (its errors name it). */
export function modelServerAccess(): SyncServerAccess {
  return new SyncServerAccess('model server');
}

/**
 * Asks the user, in a main-process dialog on `window`, whether the chat may send
 * its prompts to `origin`; true only when they chose "Allow".
 * @example
 * await askToAllowModelServer(electron.dialog, window, 'http://127.0.0.1:11434')
 */
export function askToAllowModelServer<W extends WindowSurface>(
  dialog: Pick<ElectronSurface<W>['dialog'], 'showMessageBox'>,
  window: W,
  origin: string,
): Promise<boolean> {
  return askToAllow(dialog, window, {
    title: 'Allow a model server?',
    message: `Let the chat use the model server at ${origin}?`,
    detail:
      'Each chat turn sends its prompt there: your message, the memories recalled for it and the recent conversation. ' +
      'Every other address stays blocked. Allow it only if you run this server or trust it.',
  });
}
