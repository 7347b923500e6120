/**
 * The sync view: the user's own Qdrant server (URL, API key, collection),
 * end-to-end encryption on or off (with its passphrase), auto-sync, a "sync
 * now" with progress and cancel, and the status: running, last sync, its
 * result, the last error. Keys are kept by the shell, never in IndexedDB.
 */
import { isEngramError, type SyncOptions, type SyncRefusals, type SyncStatus } from '../../lib/index.js';
import { h, replace } from '../../ui/dom.js';
import type { AppInfo } from '../preload/bridge-api.js';
import { errorText, unwrap, type AppContext, type View } from './app-context.js';
import { includeOf, loadSyncSettings, saveSyncSettings, type SyncSettings } from './sync-settings.js';

/** Where the API key and the passphrase are kept, said plainly (and why they are not protected, when they are not). */
export function secretsNote(info: AppInfo): string {
  if (info.secretsPersist) return 'The API key and the passphrase are encrypted by your operating system’s keychain.';
  const why =
    info.secretsUnprotectedReason === undefined
      ? ''
      : ` They are not protected on this computer: ${info.secretsUnprotectedReason}, so they are never written to disk.`;
  return `The API key and the passphrase are kept in memory for this session only.${why}`;
}

/**
 * What pulls refused from the server since the store was opened (never applied: a point that
 * fails its authentication, breaks the store's limits, rolls a record back or was not asked for).
 * @example
 * refusedText({ total: 3, byReason: { unauthenticated: 2, rollback: 1, … }, recent: [] }) // '3: unauthenticated 2 · rollback 1'
 */
export function refusedText(refused: SyncRefusals): string {
  if (refused.total === 0) return 'none';
  const reasons = Object.entries(refused.byReason)
    .filter(([, n]) => n > 0)
    .map(([reason, n]) => `${reason} ${n}`);
  return `${refused.total}: ${reasons.join(' · ')}`;
}

function when(at: number | undefined): string {
  return at === undefined ? 'never' : new Date(at).toLocaleString([], { dateStyle: 'medium', timeStyle: 'medium' });
}

/** The sync view. */
export class SyncView implements View {
  readonly name = 'sync';
  readonly root: HTMLElement;
  readonly #ctx: AppContext;
  readonly #url = h('input', {
    attrs: {
      type: 'url',
      placeholder: 'https://qdrant.example.net:6333',
      'data-testid': 'sync-url',
      'aria-label': 'Server URL',
    },
  });
  readonly #key = h('input', {
    attrs: {
      type: 'password',
      autocomplete: 'off',
      placeholder: 'API key (optional)',
      'data-testid': 'sync-key',
      'aria-label': 'API key',
    },
  });
  readonly #collection = h('input', {
    attrs: { placeholder: 'engram', 'data-testid': 'sync-collection', 'aria-label': 'Collection' },
  });
  readonly #encrypt = h('input', { attrs: { type: 'checkbox', 'data-testid': 'sync-encrypt' } });
  readonly #passphrase = h('input', {
    attrs: {
      type: 'password',
      autocomplete: 'off',
      placeholder: 'passphrase, the same on every device',
      'data-testid': 'sync-passphrase',
      'aria-label': 'Passphrase',
    },
  });
  readonly #messages = h('input', { attrs: { type: 'checkbox', 'data-testid': 'sync-messages' } });
  readonly #auto = h('input', { attrs: { type: 'checkbox', 'data-testid': 'sync-auto' } });
  readonly #interval = h('input', {
    attrs: {
      type: 'number',
      min: '1',
      max: '1440',
      'data-testid': 'sync-interval',
      'aria-label': 'Minutes between syncs',
    },
  });
  readonly #now = h('button', { class: 'primary', attrs: { type: 'button', 'data-testid': 'sync-now' } }, 'Sync now');
  readonly #cancel = h(
    'button',
    { class: 'danger', attrs: { type: 'button', disabled: true, 'data-testid': 'sync-cancel' } },
    'Cancel',
  );
  readonly #progress = h('span', { class: 'small muted', attrs: { 'data-testid': 'sync-progress' } });
  readonly #status = h('dl', { class: 'facts wide', attrs: { 'data-testid': 'sync-status', 'data-state': 'idle' } });
  readonly #keyNote = h('p', { class: 'muted small', attrs: { 'data-testid': 'sync-key-note' } });
  #controller: AbortController | undefined;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    const form = h(
      'form',
      { class: 'card stack sync-form', attrs: { 'data-testid': 'sync-form' } },
      h('h2', {}, 'Server'),
      h('label', { class: 'field' }, h('span', {}, 'Qdrant URL'), this.#url),
      h('label', { class: 'field' }, h('span', {}, 'API key'), this.#key),
      h('label', { class: 'field' }, h('span', {}, 'Collection'), this.#collection),
      h('label', { class: 'check' }, this.#encrypt, ' Encrypt on this device before upload (end to end)'),
      h('label', { class: 'field' }, h('span', {}, 'Passphrase'), this.#passphrase),
      h('label', { class: 'check' }, this.#messages, ' Also sync conversations'),
      h('label', { class: 'check' }, this.#auto, ' Sync automatically every ', this.#interval, ' minutes'),
      this.#keyNote,
      h(
        'div',
        { class: 'row' },
        h('button', { attrs: { type: 'submit', 'data-testid': 'sync-save' } }, 'Save settings'),
        this.#now,
        this.#cancel,
        this.#progress,
      ),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#save().catch((e: unknown) => {
        ctx.showError(e);
      });
    });
    this.#encrypt.addEventListener('change', () => {
      this.#passphrase.disabled = !this.#encrypt.checked;
    });
    this.#now.addEventListener('click', () => void this.syncNow());
    this.#cancel.addEventListener('click', () => {
      this.#controller?.abort();
    });
    this.root = h(
      'section',
      { class: 'view sync-view', attrs: { 'data-view': 'sync' } },
      h(
        'header',
        { class: 'view-head' },
        h('h1', {}, 'Sync'),
        h(
          'p',
          { class: 'muted small' },
          'Optional: share memories between your devices through your own Qdrant server.',
        ),
      ),
      h('div', { class: 'sync-layout' }, form, h('div', { class: 'card' }, h('h2', {}, 'Status'), this.#status)),
    );
    this.#fill(loadSyncSettings(localStorage));
  }

  async show(): Promise<void> {
    const { bridge } = this.#ctx;
    const [key, passphrase, info] = await Promise.all([
      unwrap(bridge.getSecret('sync-api-key')),
      unwrap(bridge.getSecret('sync-passphrase')),
      unwrap(bridge.appInfo()),
    ]);
    this.#key.value = key ?? '';
    this.#passphrase.value = passphrase ?? '';
    this.#keyNote.textContent = secretsNote(info);
    await this.#renderStatus();
  }

  /** Saves the settings and the secrets, and starts or stops auto-sync. */
  async #save(): Promise<SyncOptions> {
    const settings = this.#settings();
    saveSyncSettings(localStorage, settings);
    const { bridge, engram } = this.#ctx;
    await unwrap(
      this.#key.value === '' ? bridge.deleteSecret('sync-api-key') : bridge.setSecret('sync-api-key', this.#key.value),
    );
    await unwrap(
      this.#passphrase.value === ''
        ? bridge.deleteSecret('sync-passphrase')
        : bridge.setSecret('sync-passphrase', this.#passphrase.value),
    );
    await unwrap(bridge.setSyncServer(settings.url === '' ? null : settings.url));
    const options = this.#options(settings);
    await engram.stopAutoSync();
    if (settings.auto) {
      await engram.startAutoSync({
        ...options,
        intervalMs: settings.intervalMinutes * 60_000,
        onSync: () => {
          this.#ctx.changed();
          void this.#renderStatus();
        },
        onError: () => void this.#renderStatus(),
      });
    }
    await this.#renderStatus();
    return options;
  }

  /** Saves, then syncs once with progress. */
  async syncNow(): Promise<void> {
    this.#controller = new AbortController();
    this.#now.disabled = true;
    this.#cancel.disabled = false;
    this.#status.dataset['state'] = 'running';
    try {
      const options = await this.#save();
      await this.#ctx.engram.sync({
        ...options,
        signal: this.#controller.signal,
        onProgress: (p) => {
          this.#progress.textContent = `${p.phase} · ${p.done}`;
        },
      });
      this.#progress.textContent = 'done';
      this.#ctx.changed();
    } catch (e) {
      this.#progress.textContent = isEngramError(e) && e.code === 'ABORTED' ? 'cancelled' : 'failed';
      if (!(isEngramError(e) && e.code === 'ABORTED')) this.#ctx.showError(e);
    } finally {
      this.#controller = undefined;
      this.#now.disabled = false;
      this.#cancel.disabled = true;
      await this.#renderStatus();
    }
  }

  #settings(): SyncSettings {
    return {
      url: this.#url.value.trim(),
      collection: this.#collection.value.trim() === '' ? 'engram' : this.#collection.value.trim(),
      encrypt: this.#encrypt.checked,
      messages: this.#messages.checked,
      auto: this.#auto.checked,
      intervalMinutes: Math.max(1, Math.round(Number(this.#interval.value) || 5)),
    };
  }

  #options(settings: SyncSettings): SyncOptions {
    const options: SyncOptions = { url: settings.url, collection: settings.collection, include: includeOf(settings) };
    if (this.#key.value !== '') options.apiKey = this.#key.value;
    if (settings.encrypt) options.encryption = { passphrase: this.#passphrase.value };
    return options;
  }

  #fill(settings: SyncSettings): void {
    this.#url.value = settings.url;
    this.#collection.value = settings.collection;
    this.#encrypt.checked = settings.encrypt;
    this.#passphrase.disabled = !settings.encrypt;
    this.#messages.checked = settings.messages;
    this.#auto.checked = settings.auto;
    this.#interval.value = String(settings.intervalMinutes);
  }

  async #renderStatus(): Promise<void> {
    let status: SyncStatus;
    try {
      status = await this.#ctx.engram.syncStatus();
    } catch (e) {
      replace(this.#status, h('dt', {}, 'Status'), h('dd', {}, errorText(e)));
      return;
    }
    const result = status.lastResult;
    const facts: [string, string, string][] = [
      ['state', 'State', status.running ? 'syncing…' : status.auto ? 'auto-sync on' : 'idle'],
      ['last', 'Last sync', when(status.lastSyncAt)],
      [
        'result',
        'Last result',
        result === undefined
          ? '—'
          : `${result.uploaded} uploaded · ${result.downloaded} downloaded · ${result.deleted} deleted · ${result.conflicts} conflicts`,
      ],
      [
        'error',
        'Last error',
        status.lastError === undefined
          ? 'none'
          : `${status.lastError.code}${status.lastError.reason === undefined ? '' : ` (${status.lastError.reason})`}: ${status.lastError.message}`,
      ],
      ['failures', 'Failures in a row', String(status.failures)],
      ['refused', 'Refused from the server', refusedText(status.refused)],
      ['next', 'Next auto-sync', when(status.nextSyncAt)],
    ];
    replace(
      this.#status,
      ...facts.flatMap(([key, label, value]) => [h('dt', {}, label), h('dd', { attrs: { 'data-fact': key } }, value)]),
    );
    this.#status.dataset['state'] = status.running
      ? 'running'
      : status.lastError === undefined
        ? status.lastSyncAt === undefined
          ? 'idle'
          : 'done'
        : 'failed';
  }
}
