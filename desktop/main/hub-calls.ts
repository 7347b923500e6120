/**
 * The round trip from the main process to the renderer's engram: a call goes
 * out on `CHANNELS.hubCall` with an id, the renderer answers on
 * `CHANNELS.hubReply` with that id. The main process holds no store (DESIGN.md
 * "Desktop as the hub"); it only waits, at most `timeoutMs`, and turns every way
 * this can fail into a HubError (no window, timeout, window gone) or the
 * renderer's own typed failure.
 */
import { randomUUID } from 'node:crypto';
import { EngramError, HubError, ValidationError, type EngramErrorCode } from '../../lib/errors.js';
import {
  CHANNELS,
  type BridgeFailure,
  type BridgeResult,
  type HubAnswer,
  type HubCall,
  type HubOperation,
  type HubScope,
} from '../preload/bridge-api.js';
import type { ContentsSurface } from './electron-surface.js';

/** How long a call waits for the renderer by default (a search at 10k memories answers in milliseconds; a first embedding may load the model). */
export const DEFAULT_HUB_TIMEOUT_MS = 30_000;

/** An error the renderer reported, with its code kept (class identity does not cross IPC). */
export class RendererFailure extends EngramError {
  constructor(failure: BridgeFailure) {
    super(failure.code as EngramErrorCode, failure.message);
    this.name = failure.name;
  }
}

interface Pending {
  resolve(answer: HubAnswer): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

function isAnswer(value: unknown): value is BridgeResult<HubAnswer> {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as {
    ok?: unknown;
    value?: { kind?: unknown; text?: unknown; memories?: unknown };
    error?: { name?: unknown; code?: unknown; message?: unknown };
  };
  if (r.ok === true)
    return (
      (r.value?.kind === 'tool' && typeof r.value.text === 'string') ||
      (r.value?.kind === 'memories' && Array.isArray(r.value.memories))
    );
  return (
    r.ok === false &&
    typeof r.error?.name === 'string' &&
    typeof r.error.code === 'string' &&
    typeof r.error.message === 'string'
  );
}

/**
 * Sends calls to the window and pairs the replies.
 * @example
 * const calls = new HubCalls(() => window?.webContents)
 * ipcMain.handle(CHANNELS.hubReply, (_e, id, result) => calls.answer(id, result))
 * const answer = await calls.call({ agentId: 'claude' }, { kind: 'tool', name: 'recall_from_memory', args: { keywords: ['tea'] } })
 */
export class HubCalls {
  readonly #target: () => ContentsSurface | undefined;
  readonly #timeoutMs: number;
  readonly #pending = new Map<string, Pending>();

  constructor(target: () => ContentsSurface | undefined, timeoutMs = DEFAULT_HUB_TIMEOUT_MS) {
    this.#target = target;
    this.#timeoutMs = timeoutMs;
  }

  /** Runs one operation in the renderer, in `scope`. */
  call(scope: HubScope, op: HubOperation): Promise<HubAnswer> {
    const contents = this.#target();
    if (contents === undefined)
      return Promise.reject(
        new HubError('no-window', 'the engram window is not open: open the app to let agents use its memory'),
      );
    const id = randomUUID();
    const message: HubCall = { id, scope, op };
    return new Promise<HubAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new HubError('timeout', `the engram window did not answer within ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      contents.send(CHANNELS.hubCall, message);
    });
  }

  /** Takes the renderer's reply (from IPC: checked, since the renderer is another process). An unknown or late id is refused. */
  answer(id: unknown, result: unknown): void {
    if (typeof id !== 'string') throw new ValidationError('id', 'must be a string');
    const pending = this.#pending.get(id);
    if (pending === undefined)
      throw new ValidationError('id', 'no call is waiting for this answer (it timed out, or was answered)');
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (!isAnswer(result)) {
      pending.reject(new HubError('renderer', 'the engram window answered with something that is not an answer'));
      return;
    }
    if (result.ok) pending.resolve(result.value);
    else pending.reject(new RendererFailure(result.error));
  }

  /** Fails every waiting call (the window closed or the app quits). */
  failAll(reason: string): void {
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      pending.reject(new HubError('closed', reason));
      this.#pending.delete(id);
    }
  }
}
