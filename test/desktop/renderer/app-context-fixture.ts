/**
 * The desktop renderer's AppContext as the view tests build it: the store, the bridge and the
 * database name given; a fresh StoreGate; navigation, notices and changes ignored; errors handed
 * to `showError`.
 */
import type { Engram } from '../../../lib/index.js';
import type { AppContext } from '../../../desktop/renderer/app-context.js';
import type { DesktopBridge } from '../../../desktop/preload/bridge-api.js';
import { StoreGate } from '../../../ui/store-gate.js';

export function testAppContext(parts: {
  engram: Engram;
  bridge: DesktopBridge;
  dbName: string;
  protection?: 'passphrase' | 'plain';
  showError: (error: unknown) => void;
}): AppContext {
  return {
    engram: parts.engram,
    bridge: parts.bridge,
    dbName: parts.dbName,
    protection: { kind: parts.protection ?? 'plain', reason: 'a test' },
    gate: new StoreGate(),
    navigate: () => undefined,
    openMemory: () => undefined,
    showError: parts.showError,
    notify: () => undefined,
    changed: () => undefined,
  };
}
