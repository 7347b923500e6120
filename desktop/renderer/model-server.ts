/**
 * The chat's model server setting: an OpenAI-compatible endpoint the user names
 * (Ollama, llama.cpp's server, LM Studio…), its model, and how long a silent
 * server is waited for. Kept in localStorage, which anything in the page could
 * have written: it is read back as untrusted input, by the same checks as the
 * form. The server must be https, or plain http on this machine (the rule the
 * main process's request filter applies again). The API key, when one is needed,
 * is a secret of the bridge (the OS keychain on desktop), never in localStorage.
 */
import { ValidationError, type OpenAiCompatibleOptions } from '../../lib/index.js';
import { MAX_SERVER_URL_CHARS, serverOrigin } from '../preload/server-origin.js';

/** Ollama's OpenAI-compatible endpoint, offered as the example. */
export const SUGGESTED_BASE_URL = 'http://127.0.0.1:11434/v1';
/** Longest model name accepted. */
export const MAX_MODEL_NAME_CHARS = 200;
/** Seconds without a byte from the server before a turn fails as stalled, when none is set. */
export const DEFAULT_STALL_SECONDS = 30;
/** How long the reachability check waits for any answer. */
const PROBE_TIMEOUT_MS = 3000;
const STORAGE_KEY = 'engram-desktop:model-server';

/** A model server the chat may use. */
export interface ModelServer {
  /** Up to and including `/v1`. */
  baseUrl: string;
  model: string;
  /** Seconds of silence before a turn fails as stalled (1 to 600). */
  stallSeconds: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a model server setting (from the form or from storage).
 * @example
 * checkModelServer({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2', stallSeconds: 30 })
 */
export function checkModelServer(input: unknown): ModelServer {
  if (!isRecord(input)) throw new ValidationError('modelServer', 'must be an object');
  const { baseUrl, model, stallSeconds } = input;
  if (typeof baseUrl !== 'string' || baseUrl.trim() === '')
    throw new ValidationError('baseUrl', `give the server's URL, e.g. ${SUGGESTED_BASE_URL}`);
  const url = baseUrl.trim();
  if (url.length > MAX_SERVER_URL_CHARS)
    throw new ValidationError('baseUrl', `must be at most ${MAX_SERVER_URL_CHARS} characters`);
  if (serverOrigin(url) === undefined)
    throw new ValidationError(
      'baseUrl',
      'must be an https URL, or http on this machine (127.0.0.1, localhost), without a user name or password',
    );
  if (typeof model !== 'string' || model.trim() === '')
    throw new ValidationError('model', 'give the model name, e.g. llama3.2');
  const name = model.trim();
  if (name.length > MAX_MODEL_NAME_CHARS || /[\u0000-\u001f\u007f]/.test(name))
    throw new ValidationError(
      'model',
      `must be at most ${MAX_MODEL_NAME_CHARS} characters, without control characters`,
    );
  if (typeof stallSeconds !== 'number' || !Number.isInteger(stallSeconds) || stallSeconds < 1 || stallSeconds > 600)
    throw new ValidationError('stallSeconds', 'must be a whole number of seconds from 1 to 600');
  return { baseUrl: url.replace(/\/+$/, ''), model: name, stallSeconds };
}

/** The saved model server, or undefined (none saved, or what is stored does not pass the checks). */
export function loadModelServer(): ModelServer | undefined {
  const text = localStorage.getItem(STORAGE_KEY);
  if (text === null) return undefined;
  try {
    return checkModelServer(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** Saves the model server, or forgets it with undefined (the scripted agent answers). */
export function saveModelServer(server: ModelServer | undefined): void {
  if (server === undefined) localStorage.removeItem(STORAGE_KEY);
  else localStorage.setItem(STORAGE_KEY, JSON.stringify(server));
}

/** The options of `openAiCompatible()` for a server. */
export function modelOptions(server: ModelServer, apiKey: string | null): OpenAiCompatibleOptions {
  return {
    baseUrl: server.baseUrl,
    model: server.model,
    idleTimeoutMs: server.stallSeconds * 1000,
    ...(apiKey === null ? {} : { apiKey }),
  };
}

/** A short name of the server's model, e.g. "llama3.2 at http://127.0.0.1:11434/v1". */
export function modelServerLabel(server: ModelServer): string {
  return `${server.model} at ${server.baseUrl}`;
}

/**
 * Whether the server answers at all: any HTTP answer to `GET /models` within a
 * few seconds counts (a server without that route still answers 404); undefined
 * when it does, else why not.
 */
export async function unreachableReason(server: ModelServer, apiKey: string | null): Promise<string | undefined> {
  try {
    const response = await fetch(`${server.baseUrl}/models`, {
      headers: apiKey === null ? {} : { authorization: `Bearer ${apiKey}` },
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    await response.body?.cancel();
    return undefined;
  } catch (e) {
    return e instanceof Error && e.name === 'TimeoutError'
      ? `no answer within ${PROBE_TIMEOUT_MS / 1000} s.`
      : 'the connection failed: is it running, and does it accept requests from this app?';
  }
}
