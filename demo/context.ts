/**
 * What the demo's panels share: the open engram, the active scope and model,
 * and two callbacks into the page (refresh everything, show an error).
 */
import type { Engram } from '../lib/index.js';
import type { ModelSettings, Scope } from './settings.js';

/** The page state every panel reads. */
export interface DemoContext {
  /** The open store; a new instance after a re-embed. */
  engram: Engram;
  scope: Scope;
  model: ModelSettings;
  /** Re-renders every panel from the store (after a turn, a delete, a scope switch). */
  refresh(): Promise<void>;
  /** Shows an error above the chat. */
  showError(error: unknown): void;
}

export { errorText } from '../ui/error-text.js';
