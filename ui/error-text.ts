/**
 * An error as the demo page and the desktop app show it, on one line: engram's
 * code and message (which survive a worker or the Electron bridge), or the message.
 */
import { isEngramError } from '../lib/index.js';

/**
 * The error as one line.
 * @example
 * banner.textContent = errorText(e) // 'LLM: http://127.0.0.1:11434/v1/chat/completions sent nothing for 30000 ms: …'
 */
export function errorText(error: unknown): string {
  if (isEngramError(error)) return `${error.code}: ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
}
