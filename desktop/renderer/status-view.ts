/**
 * The status view: what is stored (memories, messages), the vector index (size,
 * where it came from), the embedder, the storage the browser grants this app
 * (`navigator.storage.estimate()`), and the shell; below, the embedding model card
 * (model-section.ts: the model in use, the one picked, re-embedding) and the
 * encryption at rest card (store-key-section.ts: how the store unlocks, changing it).
 */
import { formatMs, h, replace } from '../../ui/dom.js';
import { modelName } from '../../ui/model-picking.js';
import { unwrap, type AppContext, type View } from './app-context.js';
import type { ModelSection } from './model-section.js';
import type { StoreKeySection } from './store-key-section.js';
import { protectionText } from './store-unlock.js';

/** Bytes for people: "812 B", "3.4 MB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit] ?? 'TB'}`;
}

/** The status view. */
export class StatusView implements View {
  readonly name = 'status';
  readonly root: HTMLElement;
  readonly #ctx: AppContext;
  readonly #facts = h('dl', { class: 'facts wide', attrs: { 'data-testid': 'status-facts' } });
  readonly #model: ModelSection;
  readonly #storeKey: StoreKeySection;

  constructor(ctx: AppContext, model: ModelSection, storeKey: StoreKeySection) {
    this.#ctx = ctx;
    this.#model = model;
    this.#storeKey = storeKey;
    this.root = h(
      'section',
      { class: 'view status-view', attrs: { 'data-view': 'status', 'data-state': 'idle' } },
      h(
        'header',
        { class: 'view-head' },
        h('h1', {}, 'Status'),
        h(
          'button',
          { attrs: { type: 'button', 'data-testid': 'status-refresh' }, on: { click: () => void this.show() } },
          'Refresh',
        ),
      ),
      h('div', { class: 'card' }, this.#facts),
      storeKey.root,
      model.root,
    );
  }

  async show(): Promise<void> {
    // A re-embed under way has closed the store; its progress is what there is to see. So does an encryption in
    // place (store-key-section.ts), which reopens the store and then shows this view again.
    if (this.#model.running || this.#ctx.engram.closed) return;
    this.root.dataset['state'] = 'loading';
    const { engram, bridge } = this.#ctx;
    const started = performance.now();
    const [ready, memories, messages, estimate, persisted, info] = await Promise.all([
      engram.ready(),
      engram.getAll({ limit: 1 }),
      engram.recall.dateSearch(0, Date.now(), { count: 1 }),
      navigator.storage.estimate(),
      navigator.storage.persisted(),
      unwrap(bridge.appInfo()),
      this.#model.show(),
      this.#storeKey.show(),
    ]);
    const facts: [string, string, string][] = [
      ['memories', 'Memories', String(memories.total)],
      ['messages', 'Messages', String(messages.total)],
      [
        'index',
        'Vector index',
        `${ready.size} vectors (${formatBytes(ready.size * ready.dimensions * 4)} of vector data) · ${ready.index === 'snapshot' ? 'restored from its snapshot' : ready.index === 'rebuild' ? 'rebuilt at open' : 'started empty'}`,
      ],
      [
        'embedder',
        'Embedding model',
        `${modelName(ready.embedderId)}, ${ready.dimensions}-d · runs in a Web Worker, offline`,
      ],
      [
        'storage',
        'Storage used',
        estimate.usage === undefined
          ? 'unknown'
          : `${formatBytes(estimate.usage)} of ${estimate.quota === undefined ? '?' : formatBytes(estimate.quota)} available to this app${persisted ? ' · persistent' : ''}`,
      ],
      ['database', 'Database', `IndexedDB “${this.#ctx.dbName}”`],
      ['encryption', 'Encryption at rest', protectionText(this.#ctx.protection)],
      [
        'shell',
        'Shell',
        info.shell === 'electron'
          ? `Electron app ${info.version} on ${info.platform}`
          : 'browser (Electron binary not installed): files are downloaded and uploaded, keys last for this session only',
      ],
      [
        'secrets',
        'Keys',
        info.secretsPersist
          ? 'encrypted by the OS keychain (safeStorage)'
          : `kept in memory for this session only${info.secretsUnprotectedReason === undefined ? '' : `, not protected: ${info.secretsUnprotectedReason}`}`,
      ],
      ['read', 'Read in', formatMs(performance.now() - started)],
    ];
    replace(
      this.#facts,
      ...facts.flatMap(([key, label, value]) => [h('dt', {}, label), h('dd', { attrs: { 'data-fact': key } }, value)]),
    );
    this.root.dataset['state'] = 'ready';
  }
}
