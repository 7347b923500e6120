/**
 * Who may use an app's store when, so that nothing is lost to a close (the desktop's and the demo's: one
 * gate per app, made by its entry, desktop/renderer/main.ts and demo/main.ts). Two kinds of work reach it:
 * - users (a chat turn, an agent's MCP call, an export) run on the open engram, side by side;
 * - store works (a conversion of its encryption at rest and an import, which close the app's engram and
 *   open it again; a change of its key, which changes what every opening passes) run one at a time, in
 *   the order asked. One that closes the store first waits for the users running (a streaming chat
 *   turn ends and is stored), and the users that come meanwhile wait for the store to reopen (a message
 *   sent then is kept on screen, and sent once it is open), then run on the new engram.
 * A key change does not close the store (engram re-wraps its key in place): users go on throughout it.
 * Nothing is refused while the store can open: each waiter is told what it waits for, and a user's wait
 * ends with its signal. Told whether the store is open, the gate refuses (a `StoreError`, the work not run)
 * a user that finds it closed after its wait: the reopen failed.
 */
import { StoreError } from '../lib/index.js';
import { untilAborted } from '../lib/util/abort.js';

/** How a work hears what it waits for, and how it stops waiting. */
export interface GateWait {
  /** Told what the work waits for (e.g. "an import"), each time it starts to wait. */
  readonly onWait?: (what: string) => void;
  /** Stops a user's wait for the store to reopen (an AbortError; the work never ran). */
  readonly signal?: AbortSignal;
}

/** A store work: what it is, for whoever waits for it, and whether it closes the app's engram. */
export interface StoreWorkSpec {
  /** What it is, in words, e.g. "the store’s encryption" or "an import". */
  readonly what: string;
  /** True when it closes the app's engram (the users wait for the reopen); false for a key change. */
  readonly closes: boolean;
}

/**
 * The app's store gate (one per app).
 * @example
 * const gate = new StoreGate();
 * await gate.use('a chat turn', () => assistant.send(text));           // waits while the store is closed
 * await gate.run({ what: 'an import', closes: true }, () => importAndReopen()); // waits for the users running
 */
export class StoreGate {
  /** Whether the app's store is open now (undefined: not checked, a user meets what is there). */
  readonly #isOpen: (() => boolean) | undefined;
  /** What closed the store last (a store work that closes it), for a refusal once its reopen failed. */
  #lastClosedFor: string | undefined;
  /** The users running, and what each is. */
  readonly #users = new Map<Promise<unknown>, string>();
  /** The store work closing the store now, and when it ends (the store open again, or failed to). */
  #closed: { readonly what: string; readonly ended: Promise<void> } | undefined;
  /** The store work running now. */
  #holder: string | undefined;
  /** Settles when the last store work asked for has ended: the next one starts after it. */
  #queue: Promise<void> = Promise.resolve();
  /** Store works asked for and not ended: with none, the next starts at once (a user sent right after waits). */
  #asked = 0;

  /**
   * `isOpen` tells whether the app's store is open now: a user that finds it closed (after its wait, the
   * reopen failed) is refused with a `StoreError`, and its work does not run.
   */
  constructor(isOpen?: () => boolean) {
    this.#isOpen = isOpen;
  }

  /** What closed the store, while it is closed for a store work (a user sent now waits for its reopen). */
  get closedFor(): string | undefined {
    return this.#closed?.what;
  }

  /** The store work running now, if any. */
  get holder(): string | undefined {
    return this.#holder;
  }

  /**
   * Runs the user `what`'s `work` on the open store: at once, unless a store work has closed it (or is
   * waiting to), then once it reopened. A conversion or an import asked for while it runs waits for it.
   * Refused with a `StoreError` (the work not run) when the store is closed then, its reopen failed.
   */
  async use<T>(what: string, work: () => Promise<T>, wait: GateWait = {}): Promise<T> {
    while (this.#closed !== undefined) {
      wait.onWait?.(this.#closed.what);
      // `ended` never rejects: it resolves once the store work ended, however it ended.
      await untilAborted(this.#closed.ended, wait.signal);
    }
    if (this.#isOpen?.() === false)
      throw new StoreError(
        `the store is closed${this.#lastClosedFor === undefined ? '' : ` (it did not open again after ${this.#lastClosedFor})`}: ${what} was not run; open the store again, then retry`,
      );
    // Counted from here on, before any await: a store work asked for after this line waits for it.
    const running = work();
    this.#users.set(running, what);
    try {
      return await running;
    } finally {
      this.#users.delete(running);
    }
  }

  /**
   * Runs the store work `work` after the ones asked before it; one that closes the store first waits
   * for the users running, and the users that come meanwhile wait until it ended.
   */
  async run<T>(spec: StoreWorkSpec, work: () => Promise<T>, wait: GateWait = {}): Promise<T> {
    const before = this.#queue;
    let done!: () => void;
    this.#queue = new Promise<void>((resolve) => {
      done = resolve;
    });
    this.#asked++;
    try {
      if (this.#asked > 1) {
        if (this.#holder !== undefined) wait.onWait?.(this.#holder);
        await before;
      }
      this.#holder = spec.what;
      if (!spec.closes) return await work();
      let ended!: () => void;
      this.#lastClosedFor = spec.what;
      this.#closed = {
        what: spec.what,
        ended: new Promise<void>((resolve) => {
          ended = resolve;
        }),
      };
      try {
        while (this.#users.size > 0) {
          wait.onWait?.([...new Set(this.#users.values())].join(', '));
          await Promise.allSettled(this.#users.keys());
        }
        return await work();
      } finally {
        this.#closed = undefined;
        ended();
      }
    } finally {
      this.#holder = undefined;
      this.#asked--;
      done();
    }
  }
}
