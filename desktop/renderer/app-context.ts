/**
 * What the renderer's views share: the open engram (replaced after an import),
 * the bridge to the shell, navigation, and error reporting. Also the helpers
 * that turn a bridge answer into a value or a typed error.
 */
import { EngramError, isEngramError, type Engram } from '../../lib/index.js';
import type { BridgeResult, DesktopBridge } from '../preload/bridge-api.js';
import type { StoreGate } from '../../ui/store-gate.js';
import type { StoreProtection } from './store-unlock.js';

/** The app's views, in menu order. */
export const VIEWS = [
  'chat',
  'memories',
  'conversations',
  'blocks',
  'map',
  'transfer',
  'sync',
  'agents',
  'forget',
  'status',
] as const;
export type ViewName = (typeof VIEWS)[number];

/** The state every view reads. */
export interface AppContext {
  /** The open store; a new instance after an import. */
  engram: Engram;
  readonly bridge: DesktopBridge;
  /** The IndexedDB database the app uses. */
  readonly dbName: string;
  /** How the store is encrypted at rest (keychain key, passphrase, or not); the Status view's key change sets it. */
  protection: StoreProtection;
  /**
   * Who may use the store when: chat turns, agents' calls and exports run on the open store (and wait while
   * a conversion or an import has closed it); those and key changes run one at a time (ui/store-gate.ts).
   */
  readonly gate: StoreGate;
  /** Shows a view. */
  navigate(view: ViewName): void;
  /** Opens a memory in the memories view. */
  openMemory(id: string): void;
  /** Shows an error in the banner. */
  showError(error: unknown): void;
  /** Shows a short notice in the banner. */
  notify(text: string): void;
  /** Called after anything changed the store (views re-read what they show). */
  changed(): void;
}

/** A view of the app. */
export interface View {
  readonly name: ViewName;
  readonly root: HTMLElement;
  /** Called each time the view is shown. */
  show(): Promise<void>;
}

export { errorText } from '../../ui/error-text.js';

/** The value of a bridge answer, or the failure rebuilt as an EngramError with its code. */
export async function unwrap<T>(answer: Promise<BridgeResult<T>>): Promise<T> {
  const result = await answer;
  if (result.ok) return result.value;
  const code = result.error.code;
  const error = new EngramError(
    isEngramError({ name: 'Error', code }) ? (code as EngramError['code']) : 'STORE',
    result.error.message,
  );
  error.name = result.error.name;
  throw error;
}
