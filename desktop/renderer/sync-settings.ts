/**
 * The sync settings that are not secret (server URL, collection, switches),
 * kept in localStorage; the API key and the passphrase go through the bridge
 * (the OS keychain on desktop, memory on the web) and are never stored here.
 */
import type { SyncInclude } from '../../lib/index.js';

/** Settings of the sync view. */
export interface SyncSettings {
  url: string;
  collection: string;
  encrypt: boolean;
  messages: boolean;
  auto: boolean;
  intervalMinutes: number;
}

const KEY = 'engram-desktop-sync';
const DEFAULTS: SyncSettings = {
  url: '',
  collection: 'engram',
  encrypt: true,
  messages: false,
  auto: false,
  intervalMinutes: 5,
};

/** The saved settings, or the defaults (a damaged entry is ignored). */
export function loadSyncSettings(storage: Pick<Storage, 'getItem'>): SyncSettings {
  try {
    const saved = JSON.parse(storage.getItem(KEY) ?? '{}') as Partial<SyncSettings>;
    return {
      url: typeof saved.url === 'string' ? saved.url : DEFAULTS.url,
      collection:
        typeof saved.collection === 'string' && saved.collection !== '' ? saved.collection : DEFAULTS.collection,
      encrypt: typeof saved.encrypt === 'boolean' ? saved.encrypt : DEFAULTS.encrypt,
      messages: typeof saved.messages === 'boolean' ? saved.messages : DEFAULTS.messages,
      auto: typeof saved.auto === 'boolean' ? saved.auto : DEFAULTS.auto,
      intervalMinutes:
        typeof saved.intervalMinutes === 'number' && saved.intervalMinutes >= 1
          ? saved.intervalMinutes
          : DEFAULTS.intervalMinutes,
    };
  } catch {
    return { ...DEFAULTS };
  }
}

/** Saves the settings (never a secret: the type has none). */
export function saveSyncSettings(storage: Pick<Storage, 'setItem'>, settings: SyncSettings): void {
  storage.setItem(KEY, JSON.stringify(settings));
}

/** What to sync for the settings. */
export function includeOf(settings: SyncSettings): SyncInclude[] {
  return settings.messages ? ['memories', 'blocks', 'messages'] : ['memories', 'blocks'];
}
