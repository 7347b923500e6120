/**
 * The servers the request filter lets through: one sync server and, apart from it, one model server for the chat
 * (Ollama, llama.cpp, LM Studio…), each a {@link ServerAccess} of its own, so allowing one never opens the other.
 * The renderer may only ask for one: the filter opens to an origin after the user allowed that origin in a dialog
 * of the main process (which a compromised renderer can neither draw nor answer). An origin allowed once stays
 * allowed until the app quits, so saving the settings again does not ask again.
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

/** What the user is asked before the app may sync with `origin`. */
function syncServerQuestion(origin: string): AllowQuestion {
  return {
    title: 'Allow a sync server?',
    message: `Let engram connect to ${origin}?`,
    detail:
      'The app asked to sync with this server. engram will send your memories there (sealed first when end-to-end encryption is on) and read from it. ' +
      'Every other address stays blocked. Allow it only if it is your own server.',
  };
}

/** What the user is asked before the chat may send its prompts to `origin`. */
function modelServerQuestion(origin: string): AllowQuestion {
  return {
    title: 'Allow a model server?',
    message: `Let the chat use the model server at ${origin}?`,
    detail:
      'Each chat turn sends its prompt there: your message, the memories recalled for it and the recent conversation. ' +
      'Every other address stays blocked. Allow it only if you run this server or trust it.',
  };
}

/** The access for the sync server. */
export function syncServerAccess(): ServerAccess {
  return new ServerAccess('sync server', syncServerQuestion);
}

/** The access for the chat's model server (its errors and its question name it). */
export function modelServerAccess(): ServerAccess {
  return new ServerAccess('model server', modelServerQuestion);
}

/**
 * The one origin of a kind of server the network is open to.
 * @example
 * const access = syncServerAccess()
 * hardenSession(session, () => access.origin())
 * await access.open('https://qdrant.example.net:6333', (question) => askToAllow(dialog, window, question))
 */
export class ServerAccess {
  /** What the server is, in the errors ("sync server", "model server"). */
  readonly #what: string;
  /** What the user is asked before the network opens to an origin. */
  readonly #question: (origin: string) => AllowQuestion;
  #open: string | undefined;
  readonly #allowed = new Set<string>();
  /** Questions on screen, by origin: two quick calls for one origin show one dialog. */
  readonly #asking = new Map<string, Promise<boolean>>();
  /** Bumped by every open() and close(): an answer that arrives after a later call does not undo it. */
  #generation = 0;

  /**
   * @param what names the server in the errors.
   * @param question what the user is asked before the network opens to an origin.
   */
  constructor(what: string, question: (origin: string) => AllowQuestion) {
    this.#what = what;
    this.#question = question;
  }

  /** The origin requests may go to, if any. */
  origin(): string | undefined {
    return this.#open;
  }

  /**
   * Opens the network to `origin` once `confirm(question)` says the user allowed it
   * (asked only the first time in this session). Refused: nothing changes
   * (the origin stays blocked, an origin opened before stays open) and an
   * `AbortError` names the origin.
   */
  async open(origin: string, confirm: (question: AllowQuestion) => Promise<boolean>): Promise<void> {
    const generation = ++this.#generation;
    if (!this.#allowed.has(origin)) {
      let asking = this.#asking.get(origin);
      if (asking === undefined) {
        asking = confirm(this.#question(origin)).finally(() => this.#asking.delete(origin));
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
