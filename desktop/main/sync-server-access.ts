/**
 * The one sync server (or, with another instance, the one model server) the request filter lets through. The renderer may only
 * ask for it: the filter opens to an origin after the user allowed that origin
 * in a dialog of the main process (which a compromised renderer can neither
 * draw nor answer). An origin allowed once stays allowed until the app quits,
 * so saving the settings again does not ask again.
 */
import { AbortError } from '../../lib/errors.js';
import type { ElectronSurface, WindowSurface } from './electron-surface.js';

/** The dialog's buttons: "Allow" first, the safe answer is the default and what Escape gives. */
const ALLOW = 0;
const REFUSE = 1;

/** What a permission dialog asks: its title, its question naming the origin, and what allowing it means. */
export interface AllowQuestion {
  title: string;
  message: string;
  detail: string;
}

/**
 * Asks the user, in a main-process dialog on `window`, whether to allow what `question`
 * says; true only when they chose "Allow" (the default, and Escape, refuse).
 * @example
 * await askToAllow(electron.dialog, window, { title: 'Allow a sync server?', message: `Let engram connect to ${origin}?`, detail })
 */
export async function askToAllow<W extends WindowSurface>(
  dialog: Pick<ElectronSurface<W>['dialog'], 'showMessageBox'>,
  window: W,
  question: AllowQuestion,
): Promise<boolean> {
  const answer = await dialog.showMessageBox(window, {
    type: 'question',
    ...question,
    buttons: ['Allow', 'Don’t allow'],
    defaultId: REFUSE,
    cancelId: REFUSE,
    noLink: true,
  });
  return answer.response === ALLOW;
}

/**
 * Asks the user, in a main-process dialog on `window`, whether the app may
 * connect to `origin`; true only when they chose "Allow".
 * @example
 * await askToAllowSyncServer(electron.dialog, window, 'https://qdrant.example.net:6333')
 */
export function askToAllowSyncServer<W extends WindowSurface>(
  dialog: Pick<ElectronSurface<W>['dialog'], 'showMessageBox'>,
  window: W,
  origin: string,
): Promise<boolean> {
  return askToAllow(dialog, window, {
    title: 'Allow a sync server?',
    message: `Let engram connect to ${origin}?`,
    detail:
      'The app asked to sync with this server. engram will send your memories there (sealed first when end-to-end encryption is on) and read from it. ' +
      'Every other address stays blocked. Allow it only if it is your own server.',
  });
}

/**
 * The sync server origin the network is open to.
 * @example
 * const access = new SyncServerAccess()
 * hardenSession(session, () => access.origin())
 * await access.open('https://qdrant.example.net:6333', () => askToAllowSyncServer(dialog, window, origin))
 */
export class SyncServerAccess {
  /** What the server is, in the errors ("sync server", "model server"). */
  readonly #what: string;
  #open: string | undefined;
  readonly #allowed = new Set<string>();
  /** Questions on screen, by origin: two quick calls for one origin show one dialog. */
  readonly #asking = new Map<string, Promise<boolean>>();
  /** Bumped by every open() and close(): an answer that arrives after a later call does not undo it. */
  #generation = 0;

  /** @param what names the server in the errors. @default 'sync server' */
  constructor(what = 'sync server') {
    this.#what = what;
  }

  /** The origin requests may go to, if any. */
  origin(): string | undefined {
    return this.#open;
  }

  /**
   * Opens the network to `origin` once `confirm()` says the user allowed it
   * (asked only the first time in this session). Refused: nothing changes
   * (the origin stays blocked, an origin opened before stays open) and an
   * `AbortError` names the origin.
   */
  async open(origin: string, confirm: () => Promise<boolean>): Promise<void> {
    const generation = ++this.#generation;
    if (!this.#allowed.has(origin)) {
      let asking = this.#asking.get(origin);
      if (asking === undefined) {
        asking = confirm().finally(() => this.#asking.delete(origin));
        this.#asking.set(origin, asking);
      }
      if (!(await asking))
        throw new AbortError(`the connection to ${origin} was not allowed: the ${this.#what} stays blocked`);
      this.#allowed.add(origin);
    }
    if (generation !== this.#generation)
      throw new AbortError(`the ${this.#what} was changed again while ${origin} waited for permission`);
    this.#open = origin;
  }

  /** Closes the network to this kind of server. */
  close(): void {
    this.#generation++;
    this.#open = undefined;
  }
}
